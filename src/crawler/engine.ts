// Breadth-first crawl of one origin: what to fetch, what to list, when to stop. The growing state
// (frontier, seen, entries, exclusions) lives behind CrawlState, so one engine serves
// POST /api/generate and `genapi crawl` (in memory) and jobs (in the store, resumable).
import type { AnswerFields } from "./net/answer.ts";
import { readCapped } from "./net/body.ts";
import { type PageHistory, type PageKept, type PageMemory, samePage, siteLastmod, validatorsOf } from "./history.ts";
import { largePages } from "./page-budget.ts";
import { collector } from "./memory/collector.ts";
import { defaultCrawlOptions, hasLinkReport, linkChecksOf, sitemapFeatures, type CrawlOptions } from "./options.ts";
import { CheckRunner } from "./checks.ts";
import { CheckLedger, type CheckReport } from "./links/outside.ts";
import { MAX_LIST_ENTRIES } from "./links/model.ts";
import { MemoryCrawlState, type CrawlState, type FrontierItem, type LinkVerdict, type PageRecord } from "./state.ts";
import { headerDirectives, mergeDirectives } from "./html/directives.ts";
import { CrawlFailedError, NothingListedError, TargetRefusedError } from "./errors.ts";
import { EXCLUSION_REASONS, nothingListedReason, type ExclusionReason, type ExclusionReport } from "./exclusions.ts";
import { isDocument, isHtml, isRedirect, lastModifiedOf, linkHeaderCanonical, mediaTypeOf } from "./net/headers.ts";
import { type Followed, followHops, type HopStep } from "./net/hops.ts";
import type { CrawlLimits } from "./limits.ts";
import { type CrawlConnection, type CrawlNetwork, plainConnection } from "./net/crawl-fetch.ts";
import { hostOfUrl, type PolitenessReport } from "./net/politeness.ts";
import type { RenderMode } from "./options.ts";
import type { Browser } from "./render/browser.ts";
import { BrowserStartError } from "./render/browser.ts";
import { RenderError, renderPage } from "./render/render.ts";
import { CrawlTabs } from "./render/tab.ts";
import { decodeHtml, extractPage } from "./html/links.ts";
import { pageLastmod } from "./html/page-date.ts";
import { timerDelay } from "./net/abort.ts";
import { CrawlStopped, createRequester, describeFailure, type HopFetcher, type Requester } from "./net/request.ts";
import { ALLOW_ALL, fetchRobots, RobotsUnreachableError, type RobotsRules } from "./robots/robots.ts";
import { readRobotsSitemaps } from "./robots/sitemaps.ts";
import { createUrlFilter, type UrlFilter } from "./filter.ts";
import { normaliseUrl, originOf } from "./url/url.ts";
import { fitSitemap, type SitemapEntry } from "./output/xml.ts";
import {
  isReferrerLink,
  LISTED,
  type FateRecord,
  type LinkFacts,
  type LinkFate,
  type LinkReport,
  type PageLinks,
  type SitemapSeed,
} from "./links/model.ts";
import { cutLinkReport } from "./links/report.ts";

export type { HopFetcher } from "./net/request.ts";
export type { SitemapEntry } from "./output/xml.ts";

export interface CrawlDeps {
  /**
   * The network: a CrawlNetwork (the address guard, per-host politeness and the HTTP client, see
   * net/crawl-fetch.ts), or a bare fetcher with no politeness (tests that script the network).
   */
  fetch: HopFetcher | CrawlNetwork;
  now: () => number;
  /** "genapi/<version>"; its product token ("genapi") selects robots.txt groups and meta tags. */
  userAgent: string;
  /** The browser for crawls with `render` other than never; none: every page is read raw. */
  renderer?: Renderer | null;
}

export interface CrawlProgress {
  pagesCrawled: number;
  /** URLs waiting in the frontier. */
  pagesQueued: number;
  urlsListed: number;
  /** Of this run (a resumed job adds its earlier attempts itself). */
  elapsedMs: number;
}

export interface RunOptions {
  /** The request's crawl options (options.ts); max_pages lowers limits.maxPages. */
  crawl?: CrawlOptions;
  /** Stops the crawl: what was found stays in the state, and the run says `stopped: "aborted"`. */
  signal?: AbortSignal;
  /** Called every `progressEveryMs` while the crawl runs, and once at its end. */
  onProgress?: (progress: CrawlProgress) => void;
  progressEveryMs?: number;
  /**
   * A site's run: the pages its previous run read (asked for again conditionally; a 304 is read
   * from that memory), and each page this run reads, its fingerprint (html/fingerprint.ts)
   * included, goes to the state as `memory` for the next.
   */
  history?: PageHistory;
  /**
   * With link_report's external or resources checks: the ledger they keep their rows in, when the
   * caller carries them across attempts (a job: CheckLedger.snapshot and restore); else the crawl
   * makes its own.
   */
  checkLedger?: CheckLedger;
}

/** How a crawl ended; its entries and exclusions are in the state. */
export interface CrawlRun {
  /** The start URL after redirects, normalised. */
  url: string;
  pagesCrawled: number;
  urlsListed: number;
  /** A page, time or size limit, or a stop, ended the crawl before it ran out of links. */
  truncated: boolean;
  /** Why the crawl stopped early: its time budget, or the caller's signal; null when it ran out of work. */
  stopped: "timed out" | "aborted" | null;
  durationMs: number;
  /** What politeness toward the site did to this run: its limits, throttled answers, retries, pauses. */
  politeness: PolitenessReport;
  /** Whether the crawl read its pages through the browser (the `render` option). */
  render: RenderReport;
  /** With link_report's external or resources checks: what they found (links/outside.ts). */
  checks?: CheckReport;
}

export interface RenderReport {
  mode: RenderMode;
  /** The crawl's pages were read from the rendered DOM. */
  rendered: boolean;
  pages_rendered: number;
}

/** The browser, when the process has one (render/browser.ts), and how long a page may take. */
export interface Renderer {
  browser: Browser;
  timeoutMs: number;
}

/** The synchronous crawl's answer: the run, its sitemap (rendered once) and its report. */
export interface CrawlResult extends ExclusionReport {
  url: string;
  /** Sorted by loc; those that fit the sitemap. */
  entries: SitemapEntry[];
  sitemap: string;
  pagesCrawled: number;
  truncated: boolean;
  durationMs: number;
  politeness: PolitenessReport;
  render: RenderReport;
  /** With link_report: `data.links`. */
  links?: LinkReport;
}

const ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1";
/** The fate of every URL that answered fine: one object for all. */
const FINE: LinkFate = { kind: "ok" };
/** The 422's reason when `exclude` matches the start URL (or a hop of its redirects). */
const EXCLUDED_START = "the start URL matches exclude";
/** sitemaps_from_robots URLs recorded per state write. */
const SITEMAP_BATCH = 500;
/**
 * `documents`: a larger one (by its Content-Length; the body is never read) is not listed, as
 * search engines index no more of a PDF than this (Google: the first 64 MB).
 */
export const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
const DOCUMENT_TOO_LARGE = "document larger than 64 MB";
const PROGRESS_EVERY_MS = 1_000;
/** Distinct request lines refused at the browser's proxy that a crawl's log line quotes. */
const MAX_PROXY_LINES = 5;

/**
 * Crawls the origin of `startUrl` in memory and renders its sitemap: POST /api/generate's crawl.
 * Throws as runCrawl does; a stop by `signal` returns what was found with truncated: true.
 */
export async function crawlSite(
  startUrl: string,
  limits: CrawlLimits,
  deps: CrawlDeps,
  signal?: AbortSignal,
  options?: CrawlOptions,
): Promise<CrawlResult> {
  const state = new MemoryCrawlState({ linkReport: options !== undefined && hasLinkReport(options) });
  const run = await runCrawl(startUrl, state, limits, deps, { signal, crawl: options });
  const listed: SitemapEntry[] = [];
  for await (const entry of state.entries()) listed.push(entry);
  const fit = fitSitemap(
    listed,
    limits.maxUrls,
    limits.maxSitemapBytes,
    sitemapFeatures(options ?? defaultCrawlOptions(limits.maxPages), run.url),
  );
  const result: CrawlResult = {
    url: run.url,
    entries: fit.entries,
    sitemap: fit.xml,
    pagesCrawled: run.pagesCrawled,
    truncated: run.truncated || fit.truncated,
    durationMs: run.durationMs,
    politeness: run.politeness,
    render: run.render,
    ...(await state.report()),
  };
  const links = state.linkSource();
  if (links) result.links = (await cutLinkReport(links, { maxRedirects: limits.maxRedirects }, MAX_LIST_ENTRIES, run.checks)).report;
  return result;
}

/**
 * Crawls the origin of `startUrl` (after its redirects) into `state`, or carries on a crawl that
 * `state` already holds. Throws TargetRefusedError when the start URL or a hop of its redirects is
 * on a refused address, CrawlFailedError when the start page cannot be crawled, NothingListedError
 * when the crawl lists nothing (unless the caller stopped it).
 */
export async function runCrawl(
  startUrl: string,
  state: CrawlState,
  limits: CrawlLimits,
  deps: CrawlDeps,
  options: RunOptions = {},
): Promise<CrawlRun> {
  const { signal } = options;
  if (signal?.aborted) throw new CrawlFailedError("aborted");
  const stop = new AbortController();
  const onAbort = () => stop.abort(new CrawlStopped("aborted"));
  signal?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(() => stop.abort(new CrawlStopped("timed out")), timerDelay(limits.timeoutMs));
  const crawlOptions = options.crawl ?? defaultCrawlOptions(limits.maxPages);
  const crawl = new Crawl(
    { ...limits, maxPages: Math.min(limits.maxPages, crawlOptions.max_pages) },
    deps,
    stop,
    state,
    crawlOptions,
    startUrl,
    options.history ?? null,
    options.checkLedger,
  );
  const report = () => options.onProgress?.(crawl.progress());
  const ticker = options.onProgress ? setInterval(report, options.progressEveryMs ?? PROGRESS_EVERY_MS) : undefined;
  try {
    const run = await crawl.run(startUrl);
    report();
    return run;
  } finally {
    await crawl.close();
    clearTimeout(timer);
    clearInterval(ticker);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** What one request answered, once it is not a redirect: a page is read (links extracted) at once. */
type Answer =
  | { kind: "page"; page: PageRead }
  | {
      kind: "failed";
      reason: string;
      exclusion: ExclusionReason;
      tooLarge?: true;
      status?: number;
      /** The page answered; the browser could not render it (not a broken link). */
      renderFailed?: true;
    };

/** A page's answer kept raw for the browser: read (rendered or not) once its request is over. */
type RawPage = { kind: "raw"; status: number; headers: AnswerFields; body: Uint8Array; html: string; previous: PageMemory | null };

/** What a fetched page says: whether it is listed (or why not), its canonical and its links. */
interface PageRead {
  exclusion: ExclusionReason | undefined;
  entry: SitemapEntry;
  canonical: string | null;
  links: string[];
  /** Hrefs that are not a valid URI, as written. */
  invalid: string[];
  linksDropped: boolean;
  /** With link_report: the links not followed (rel=nofollow, or all of a nofollow page). */
  nofollowLinks: string[];
  /** With link_report's resources checks: the resources the page loads (html/links.ts). */
  resources?: string[];
  /** In a site's run: the page as this run read it, for the next run. */
  memory?: PageKept;
}

/** A redirect a chain passed: the URL, its 3xx and its Location, for the link report. */
interface Hop {
  url: string;
  status: number;
  location: string;
}

class Crawl {
  private readonly started: number;
  private readonly connection: CrawlConnection;
  /** Requests in flight at once: the crawl's max_concurrency under politeness, else limits.concurrency. */
  private readonly concurrency: number;
  private readonly request: Requester;
  /** Pages read through the browser: `always`, or `auto` once the start page showed it is needed. */
  private rendering: boolean;
  /** `auto` decides on the start page; `never` and `always` have decided. */
  private renderDecided: boolean;
  private pagesRendered = 0;
  private renderFailureTold = false;
  /** Stops hearing of the browser's proxy refusals (set while the crawl may render). */
  private stopHearingProxy: (() => void) | null = null;
  /** This crawl's tabs, opened ahead of its rendered pages; closed with the crawl. */
  private tabs: CrawlTabs | null = null;
  /** Connections refused at the browser's proxy while this crawl rendered, and the first few request lines. */
  private proxyRefused = 0;
  private readonly proxyLines = new Set<string>();
  private readonly productToken: string;
  private scope = "";
  /** `${scope}/`: every URL of the crawl starts with it (judgeLink tests it for every link). */
  private scopePrefix = "";
  private robots: RobotsRules | undefined;
  /** Frontier items taken from the state and not started yet. */
  private buffer: FrontierItem[] = [];
  private queued = 0;
  private pagesCrawled = 0;
  private urlsListed = 0;
  private truncated = false;
  /** What became of the start page when it was not listed: the 422's reason. */
  private startExclusion: ExclusionReason | undefined;
  /** include, exclude, ignore_query_params, max_depth. */
  private readonly filter: UrlFilter;
  /** `filter.strip` for a URL that may be null. */
  private readonly strip: (url: string | null) => string | null;
  /** link_report: records carry LinkFacts (links/). */
  private readonly linkReport: boolean;
  /** What extractPage gathers beside links. */
  private readonly extract: { alternates: boolean; images: boolean; nofollow: boolean; fingerprint: boolean; resources: boolean };
  /** link_report's checks beyond the crawl's links (external, resources); null when neither is asked for. */
  private readonly checker: CheckRunner | null = null;
  /** The start page's URL after redirects and the URLs that redirected to it: sitemap seeds' known outcomes. */
  private startChain: readonly string[] = [];
  private startPage = "";

  constructor(
    private readonly limits: CrawlLimits,
    private readonly deps: CrawlDeps,
    private readonly stop: AbortController,
    private readonly state: CrawlState,
    private readonly options: CrawlOptions,
    startUrl: string,
    /** A site's run: its previous run's pages (history.ts); null for any other crawl. */
    private readonly history: PageHistory | null,
    /** link_report's checks carried on from an earlier attempt of the crawl (RunOptions.checkLedger). */
    checkLedger?: CheckLedger,
  ) {
    this.started = deps.now();
    this.filter = createUrlFilter(options);
    this.strip = (url) => (url === null ? null : this.filter.strip(url));
    this.linkReport = hasLinkReport(options);
    const checks = linkChecksOf(options);
    this.extract = {
      alternates: options.alternates,
      images: options.images,
      nofollow: this.linkReport,
      fingerprint: history !== null,
      resources: checks.resources,
    };
    this.productToken = deps.userAgent.split("/")[0]!;
    const headers = { "User-Agent": deps.userAgent, Accept: ACCEPT };
    this.connection =
      typeof deps.fetch === "function"
        ? plainConnection(deps.fetch, limits.concurrency)
        : deps.fetch.open({
            maxConcurrency: options.max_concurrency ?? undefined,
            delayMs: options.delay_ms ?? 0,
            requestTimeoutMs: limits.requestTimeoutMs,
            credentials: credentialsFor(options, startUrl),
          });
    this.concurrency = this.connection.maxConcurrency;
    const mode = deps.renderer ? (options.render ?? "never") : "never";
    this.rendering = mode === "always";
    this.renderDecided = mode !== "auto";
    if (mode !== "never" && deps.renderer) {
      const browser = deps.renderer.browser;
      this.tabs = new CrawlTabs(browser, deps.userAgent);
      // What escaped interception while this crawl rendered: said once, when the crawl ends (close).
      this.stopHearingProxy = browser.onProxyRefusal((line) => {
        if (!this.rendering && this.renderDecided) return;
        this.proxyRefused++;
        if (this.proxyLines.size < MAX_PROXY_LINES) this.proxyLines.add(line);
      });
    }
    this.request = createRequester(this.connection.fetch, headers, limits.requestTimeoutMs, stop.signal);
    if (checks.external || checks.resources) {
      const connection = this.connection;
      this.checker = new CheckRunner(checkLedger ?? new CheckLedger(checks, limits.maxCheckedUrls), {
        inScope: (url) => url.startsWith(this.scopePrefix),
        crawlFetch: connection.fetch,
        checksFetch: () => connection.checks(),
        userAgent: deps.userAgent,
        requestTimeoutMs: limits.requestTimeoutMs,
        stop: stop.signal,
      });
    }
  }

  /** Ends what the crawl holds beyond its run: its tabs are all closed when this returns. */
  async close(): Promise<void> {
    await this.tabs?.close();
    this.stopHearingProxy?.();
    this.stopHearingProxy = null;
    if (this.proxyRefused === 0) return;
    const lines = [...this.proxyLines].map((line) => JSON.stringify(line)).join(", ");
    this.deps.renderer!.browser.options.log(
      `${this.proxyRefused} request(s) of the browser escaped interception and were refused at its proxy while ${this.scope || "this crawl"} rendered: ${lines}`,
    );
  }

  progress(): { pagesCrawled: number; pagesQueued: number; urlsListed: number; elapsedMs: number } {
    return {
      pagesCrawled: this.pagesCrawled,
      pagesQueued: this.queued + this.buffer.length,
      urlsListed: this.urlsListed,
      elapsedMs: this.deps.now() - this.started,
    };
  }

  async run(startUrl: string): Promise<CrawlRun> {
    const resumed = await this.state.resume();
    let url: string;
    if (resumed) {
      url = resumed.start;
      this.setScope(url);
      this.robots = await startPhase(() => this.fetchRobots(this.scope));
      this.pagesCrawled = resumed.pagesCrawled;
      this.urlsListed = resumed.urlsListed;
      this.truncated = resumed.truncated;
      this.queued = resumed.queued;
    } else {
      const start = await startPhase(() => this.fetchStart(startUrl));
      url = start.url;
      this.setScope(url);
      this.robots = start.robots;
      await this.finish(null, start.chain, url, start.page, 0, start.pages, url, [], start.fates);
      if (this.options.sitemaps_from_robots) await this.queueRobotsSitemaps();
    }
    await this.crawlQueue();
    // The checks met last may still be under way: the report waits for them (within the crawl's time).
    const checks = this.checker ? await this.checker.drain() : undefined;
    const stopped = this.stop.signal.aborted ? (this.stop.signal.reason as CrawlStopped).reason : null;
    if (this.urlsListed === 0 && stopped !== "aborted") throw new NothingListedError(await this.nothingListedReason());
    return {
      url,
      pagesCrawled: this.pagesCrawled,
      urlsListed: this.urlsListed,
      truncated: this.truncated || stopped !== null,
      stopped,
      durationMs: this.deps.now() - this.started,
      politeness: this.connection.politeness(),
      render: {
        mode: this.options.render ?? "never",
        rendered: this.rendering && this.pagesRendered > 0,
        pages_rendered: this.pagesRendered,
      },
      ...(checks ? { checks } : {}),
    };
  }

  /**
   * An origin's robots.txt; its Crawl-delay, if any, paces every crawl of the host from now on.
   * With `robots: "ignore"` its rules keep no URL out (allows() is always true), its Crawl-delay and
   * Sitemap lines still count, and a robots.txt that cannot be read (which disallows everything)
   * is no rule at all.
   */
  private async fetchRobots(origin: string): Promise<RobotsRules> {
    let rules: RobotsRules;
    try {
      rules = await fetchRobots(origin, this.request, this.productToken);
    } catch (err) {
      if (!(err instanceof RobotsUnreachableError) || this.options.robots !== "ignore") throw err;
      return ALLOW_ALL;
    }
    this.connection.crawlDelay(hostOfUrl(origin), rules.crawlDelay);
    return this.options.robots === "ignore" ? { ...rules, allows: ALLOW_ALL.allows } : rules;
  }

  private setScope(url: string): void {
    this.scope = originOf(url);
    this.scopePrefix = `${this.scope}/`;
  }

  private async nothingListedReason(): Promise<string> {
    const report = await this.state.report();
    // A resumed crawl no longer knows its start page: name the first reason anything fell under.
    const reason = this.startExclusion ?? EXCLUSION_REASONS.find((r) => report.excluded[r] > 0) ?? "failed";
    return nothingListedReason(reason, report);
  }

  /**
   * Follows the start URL's redirects to its page, across origins. Each origin on the way has its
   * robots.txt checked before its URL is fetched; the last origin's rules govern the crawl. The
   * chain may be as long as the page budget (each hop is a page request), not maxRedirects.
   */
  private async fetchStart(startUrl: string) {
    const first = this.strip(normaliseUrl(startUrl));
    if (first === null || first.length > this.limits.maxUrlLength) throw new CrawlFailedError("invalid URL");
    const rulesByOrigin = new Map<string, RobotsRules>();
    let rules: RobotsRules | undefined;
    const pagesBefore = this.pagesCrawled;
    const hops: Hop[] = [];
    const followed = await followHops<Answer>(
      first,
      {
        maxRedirects: Infinity,
        resolve: (location, from) => this.strip(normaliseUrl(location, from)),
        before: async (url) => {
          // `exclude` means never requested, the start URL included: there is then nothing to crawl.
          if (this.filter.excluded(url)) return EXCLUDED_START;
          const origin = originOf(url);
          rules = rulesByOrigin.get(origin) ?? (await this.fetchRobots(origin));
          rulesByOrigin.set(origin, rules);
          if (!rules.allows(url)) return "robots.txt disallows it";
          if (this.pagesCrawled >= this.limits.maxPages) return "too many redirects";
          if (!this.withinTime()) return "timed out";
          return null;
        },
        admit: (target, chain) => {
          if (chain.includes(target)) return "redirect loop";
          // Every <loc> obeys the limit, the start URL too.
          if (target.length > this.limits.maxUrlLength)
            return `redirect to a URL longer than ${this.limits.maxUrlLength.toLocaleString("en-US")} characters`;
          return null;
        },
        refusedIsFatal: () => true,
      },
      (url) => this.fetchHop(url, hops),
    );
    if (followed.kind === "stopped") {
      if (followed.reason === EXCLUDED_START) throw new NothingListedError(EXCLUDED_START);
      throw new CrawlFailedError(followed.reason);
    }
    if (followed.value.kind === "failed") throw new CrawlFailedError(followed.value.reason);
    this.startChain = followed.chain;
    this.startPage = followed.url;
    return {
      url: followed.url,
      page: followed.value,
      chain: followed.chain,
      robots: rules!,
      pages: this.pagesCrawled - pagesBefore,
      fates: this.fatesOf(hops, followed),
    };
  }

  private async crawlQueue(): Promise<void> {
    // Items in flight, and the wait for one of them to end: one resolver woken by whichever ends
    // first, where racing the whole set again after each page cost a reaction a task a page.
    let active = 0;
    let failure = null as { err: unknown } | null; // set by `fail`, which TypeScript cannot see
    let ended: (() => void) | null = null;
    const end = () => {
      active--;
      const wake = ended;
      ended = null;
      wake?.();
    };
    const fail = (err: unknown) => {
      failure ??= { err };
      end();
    };
    const oneEnded = () => new Promise<void>((resolve) => (ended = resolve));
    for (;;) {
      while (failure === null && active < this.concurrency && this.withinBudget()) {
        if (this.buffer.length === 0) {
          if (this.queued === 0) break;
          let taken: Awaited<ReturnType<CrawlState["take"]>>;
          try {
            taken = await this.state.take(this.concurrency);
          } catch (err) {
            // The store failed: the pages in flight stop too, as for a page's failure.
            failure ??= { err };
            break;
          }
          this.buffer = taken.items;
          this.queued = taken.queued;
          if (this.buffer.length === 0) break;
          continue;
        }
        active++;
        this.crawlOne(this.buffer.shift()!).then(end, fail);
      }
      if (failure !== null) {
        // A failure of the whole crawl (the browser cannot start, the store fails): the other pages stop with it.
        this.stop.abort(new CrawlStopped("aborted"));
        while (active > 0) await oneEnded();
        throw failure.err;
      }
      if (active === 0) break;
      await oneEnded();
    }
    if (this.buffer.length > 0 || this.queued > 0) this.truncated = true;
  }

  /** Fetches a queued URL, following in-scope redirects, and records the page it ends on. */
  private async crawlOne(item: FrontierItem): Promise<void> {
    const claimed: string[] = [];
    const excluded: { reason: ExclusionReason; url: string }[] = [];
    // This item's own requests: other items fetch meanwhile, so the shared counter cannot tell.
    let pages = 0;
    const hops: Hop[] = [];
    let followed: Followed<Answer>;
    try {
      followed = await followHops<Answer>(
        item.url,
        {
          maxRedirects: this.limits.maxRedirects,
          resolve: (location, from) => this.strip(normaliseUrl(location, from)),
          before: () => (this.withinBudget() ? null : "out of budget"),
          admit: async (target) => {
            const verdict = this.judgeLink(target, item.depth);
            if (verdict === null) return "out of scope";
            if (verdict.excluded !== undefined) {
              // Judged like a link: counted once, under its reason, when first met (an invalid one seen by its key).
              if (await this.state.claim(verdict.url, item)) excluded.push({ reason: verdict.excluded, url: verdict.example ?? target });
              return verdict.excluded;
            }
            if (!(await this.state.claim(target, item))) return "seen";
            claimed.push(target);
            return null;
          },
          refusedIsFatal: () => false,
        },
        (url) => {
          pages++;
          return this.fetchHop(url, hops);
        },
      );
    } catch (err) {
      // A stopped crawl: the item is not recorded, so a resumed crawl takes it again.
      if (err instanceof CrawlStopped) {
        this.truncated = true;
        return;
      }
      throw err;
    }
    for (const url of followed.chain) excluded.push({ reason: "redirect", url });
    const fates = this.fatesOf(hops, followed);
    if (followed.kind === "stopped") {
      if (followed.reason === "out of budget") this.truncated = true;
      if (followed.refused) excluded.push({ reason: "failed", url: followed.url });
      const linkFacts = this.linkReport ? { linkFacts: { fates } } : {};
      await this.record({ done: item, seen: claimed, links: [], entry: undefined, excluded, pages, truncated: false, ...linkFacts });
      return;
    }
    await this.finish(item, claimed, followed.url, followed.value, item.depth, pages, undefined, excluded, fates);
  }

  /**
   * Judges the page `url` answered and records it: listed or excluded (with why), and its canonical
   * URL and links judged for the frontier. `start` marks the start page's record.
   */
  private async finish(
    done: FrontierItem | null,
    seen: string[],
    url: string,
    answer: Answer,
    depth: number,
    pages: number,
    start?: string,
    excluded: { reason: ExclusionReason; url: string }[] = [],
    fates: FateRecord[] = [],
  ): Promise<void> {
    let truncated = false;
    const links: LinkVerdict[] = [];
    let entry: SitemapEntry | undefined;
    let linkFacts: LinkFacts | undefined;
    if (answer.kind === "failed") {
      if (answer.tooLarge) truncated = true;
      excluded.push({ reason: answer.exclusion, url });
    } else {
      const page = answer.page;
      if (page.exclusion === undefined) entry = page.entry;
      else {
        excluded.push({ reason: page.exclusion, url });
        if (start !== undefined) this.startExclusion = page.exclusion;
      }
      if (page.canonical !== null && page.canonical !== url) {
        const verdict = this.pushLink(links, page.canonical, depth);
        if (verdict !== null) verdict.canonical = true;
      }
      // ignore_query_params can make two of the page's links one: the link report counts it once.
      const met = this.linkReport && this.options.ignore_query_params.length > 0 ? new Set<string>() : null;
      for (const link of page.links) this.pushLink(links, link, depth + 1, met);
      for (const href of page.invalid) links.push(invalidLink(href, depth + 1));
      truncated ||= page.linksDropped;
      if (this.linkReport) linkFacts = { fates, page: this.pageLinks(url, links, page.nofollowLinks, depth) };
      if (this.checker) this.meetChecks(url, page);
    }
    if (this.linkReport) linkFacts ??= { fates };
    if (start !== undefined) seen = [...seen, url];
    // One object a page: the optional parts are left undefined rather than spread in (0.5 % of a re-crawl's profile).
    const memory = answer.kind === "page" ? answer.page.memory : undefined;
    await this.record({ done, start, seen, links, entry, excluded, pages, truncated, linkFacts, memory });
  }

  /**
   * What the link report needs of a page beyond its record's links (whose followed ones it counts,
   * once each: finish dedupes them when ignore_query_params can make two of them one): the page and
   * its nofollow links that the crawl would request if followed, less the followed ones.
   */
  private pageLinks(from: string, links: readonly LinkVerdict[], nofollowLinks: string[], depth: number): PageLinks {
    if (nofollowLinks.length === 0) return { from, nofollow: [] };
    const seen = new Set<string>();
    for (const link of links) if (isReferrerLink(link)) seen.add(link.url);
    const nofollow: string[] = [];
    for (const link of nofollowLinks) {
      const verdict = this.judgeLink(this.filter.strip(link), depth + 1);
      if (verdict === null || verdict.excluded !== undefined || seen.has(verdict.url)) continue;
      seen.add(verdict.url);
      nofollow.push(verdict.url);
    }
    return { from, nofollow };
  }

  /**
   * The page's links to other origins (followed and nofollow alike, as referrers are counted) and
   * the resources it loads, for link_report's checks: each counted, and checked when new. A resource
   * of the crawl's own origin is requested only where a page would be: robots.txt allows it and
   * `exclude` does not match it.
   */
  private meetChecks(from: string, page: PageRead): void {
    const checker = this.checker!;
    if (checker.ledger.checks.external) {
      for (const list of [page.links, page.nofollowLinks])
        for (const link of list) if (!link.startsWith(this.scopePrefix)) checker.meet("external", link, from);
    }
    for (const url of page.resources ?? []) {
      if (url.startsWith(this.scopePrefix) && (!this.robots!.allows(url) || this.filter.excluded(url))) continue;
      checker.meet("resource", url, from);
    }
  }

  /**
   * The link report's facts of a chain: each redirect with its next hop, then the answer it ended
   * on (fine, or broken with its status and reason), or the refused address it stopped at.
   */
  private fatesOf(hops: Hop[], followed: Followed<Answer>): FateRecord[] {
    if (!this.linkReport) return [];
    const fates: FateRecord[] = hops.map(({ url, status, location }) => {
      const next = this.strip(normaliseUrl(location, url));
      return {
        url,
        fate: next === null ? { kind: "broken", status, error: "redirect to an invalid URL" } : { kind: "redirect", status, next },
      };
    });
    if (followed.kind === "stopped") {
      if (followed.refused) fates.push({ url: followed.url, fate: { kind: "broken", status: null, error: followed.reason } });
      return fates;
    }
    const answer = followed.value;
    // Not HTML, or over the size cap: the link works, it is only not listed.
    const broken =
      answer.kind === "failed" &&
      (answer.exclusion === "http_error" || (answer.exclusion === "failed" && !answer.tooLarge && !answer.renderFailed));
    fates.push({
      url: followed.url,
      fate: broken ? { kind: "broken", status: answer.status ?? null, error: answer.reason } : FINE,
    });
    return fates;
  }

  /** Judges a link and adds its verdict to `links`, unless `met` (the URLs pushed so far) has it. */
  private pushLink(links: LinkVerdict[], url: string, depth: number, met: Set<string> | null = null): LinkVerdict | null {
    const stripped = this.filter.strip(url);
    if (met !== null) {
      if (met.has(stripped)) return null;
      met.add(stripped);
    }
    const verdict = this.judgeLink(stripped, depth);
    if (verdict !== null) links.push(verdict);
    return verdict;
  }

  /**
   * Where a URL met as a link (or redirect target) is judged: null when it is not the crawl's to meet
   * (another origin), else queued, or excluded with its reason (`invalid` when it is too long to be
   * listed). Whether it was seen already is the state's to say.
   */
  private judgeLink(url: string, depth: number): LinkVerdict | null {
    if (!url.startsWith(this.scopePrefix)) return null;
    if (url.length > this.limits.maxUrlLength) return invalidLink(url, depth);
    if (!this.robots!.allows(url)) return { url, depth, excluded: "robots" };
    if (this.filter.excluded(url) || !this.filter.withinDepth(depth)) return { url, depth, excluded: "filtered" };
    return { url, depth };
  }

  /**
   * sitemaps_from_robots: the page URLs of the sitemaps robots.txt names (else of /sitemap.xml),
   * judged like links of the start page's depth (they are seeds, not links), queued while the page
   * budget has room.
   */
  private async queueRobotsSitemaps(): Promise<void> {
    let batch: LinkVerdict[] = [];
    let seeds: SitemapSeed[] = [];
    const flush = async () => {
      const links = batch;
      const sitemap = seeds;
      batch = [];
      seeds = [];
      const linkFacts = this.linkReport ? { linkFacts: { fates: [], sitemap } } : {};
      if (links.length > 0) await this.record({ done: null, seen: [], links, excluded: [], pages: 0, truncated: false, ...linkFacts });
    };
    const room = () => this.queued + this.buffer.length + batch.length < this.limits.maxPages - this.pagesCrawled;
    try {
      // The reader awaits each answer, so the state sees one record at a time.
      // A robots.txt that names no sitemap: the one most sites keep at the conventional place.
      const named = this.robots!.sitemaps.length > 0 ? this.robots!.sitemaps : [`${this.scope}/sitemap.xml`];
      const read = await readRobotsSitemaps(this.scope, named, this.request, async (url, sitemap) => {
        if (!room()) return false;
        const verdict = this.pushLink(batch, url, 0);
        if (verdict !== null && this.linkReport) seeds.push(this.seedOf(verdict, sitemap));
        if (batch.length >= SITEMAP_BATCH) await flush();
        return room();
      });
      if (read.truncated) this.truncated = true;
    } catch (err) {
      if (!(err instanceof CrawlStopped)) throw err;
      this.truncated = true;
    }
    await flush();
  }

  /**
   * A sitemap URL as the link report keeps it: what is known of it now (left out by robots.txt or
   * the filter, or the start page and its redirects, crawled before the sitemaps were read).
   */
  private seedOf(verdict: LinkVerdict, sitemap: string): SitemapSeed {
    const seed: SitemapSeed = { url: verdict.url, sitemap };
    if (verdict.excluded !== undefined) seed.outcome = verdict.excluded;
    else if (verdict.url === this.startPage) {
      seed.outcome = this.startExclusion ?? LISTED;
      seed.linked = true;
    } else if (this.startChain.includes(verdict.url)) seed.outcome = "redirect";
    return seed;
  }

  private async record(page: Omit<PageRecord, "maxFrontier">): Promise<void> {
    // Every queued URL costs a request; past the remaining budget a new one would never be fetched.
    const maxFrontier = Math.max(0, this.limits.maxPages - this.pagesCrawled - this.buffer.length);
    const result = await this.state.record({ ...page, maxFrontier });
    this.queued = result.queued;
    if (page.entry) this.urlsListed++;
    if (page.truncated || result.dropped > 0) this.truncated = true;
  }

  /** Reads a fetched page (its body decoded to `html`): the text is dropped once this returns. */
  private readPage(url: string, status: number, headers: AnswerFields, html: string, previous: PageMemory | null = null): PageRead {
    const facts = extractPage(html, url, this.productToken, this.limits.maxLinksPerPage, this.extract);
    const directives = mergeDirectives(facts.directives, headerDirectives(headers.get("x-robots-tag"), this.productToken));
    const headerCanonical = linkHeaderCanonical(headers);
    const canonical = this.strip(facts.canonical ?? (headerCanonical === undefined ? null : normaliseUrl(headerCanonical, url)));
    let exclusion: ExclusionReason | undefined;
    if (status !== 200) exclusion = "http_error";
    else if (directives.noindex && this.options.noindex !== "ignore") exclusion = "noindex";
    else if (canonical !== null && canonical !== url) exclusion = "canonical";
    // `include` limits the listing only: the page's links are followed all the same.
    else if (!this.filter.included(url)) exclusion = "filtered";
    const entry: SitemapEntry = { loc: url, lastmod: pageLastmod(facts.ownDates, headers, this.deps.now()) };
    if (entry.lastmod === undefined) delete entry.lastmod;
    if (facts.alternates) entry.alternates = facts.alternates;
    if (facts.images) entry.images = facts.images;
    return this.remember(headers, previous, facts.fingerprint ?? null, {
      exclusion,
      entry,
      canonical,
      links: directives.nofollow ? [] : facts.links,
      invalid: directives.nofollow ? [] : facts.invalid,
      linksDropped: !directives.nofollow && facts.linksDropped,
      // X-Robots-Tag nofollow turns the followed links into nofollow ones too.
      nofollowLinks: !this.linkReport
        ? []
        : directives.nofollow && !facts.directives.nofollow
          ? [...facts.links, ...facts.nofollowLinks!]
          : facts.nofollowLinks!,
      ...(facts.resources ? { resources: facts.resources } : {}),
    });
  }

  /**
   * In a site's run, what the page's read leaves for the next run (`memory`), and its <lastmod> by
   * the site's rule: kept from the previous run while its fingerprint is unchanged, else its own
   * date or the time it was read (history.ts). Other crawls: the page as it is.
   */
  private remember(headers: AnswerFields, previous: PageMemory | null, fingerprint: string | null, page: PageRead): PageRead {
    if (this.history === null) return page;
    const { entry } = page;
    entry.lastmod = siteLastmod(previous, fingerprint, entry.lastmod, this.deps.now());
    const extra = entry.alternates || entry.images ? { alternates: entry.alternates, images: entry.images } : null;
    const memory: PageMemory = {
      url: entry.loc,
      etag: headers.get("etag"),
      lastModified: headers.get("last-modified"),
      fingerprint,
      lastmod: entry.lastmod,
      exclusion: page.exclusion ?? null,
      canonical: page.canonical,
      links: page.links,
      extra,
    };
    page.memory = previous !== null && samePage(memory, previous) ? { url: memory.url, unchanged: true } : memory;
    return page;
  }

  /** A page that answered 304 Not Modified: read as the previous run read it, its validators renewed. */
  private readRemembered(headers: AnswerFields, previous: PageMemory): PageRead {
    const entry: SitemapEntry = { loc: previous.url };
    if (previous.lastmod !== null) entry.lastmod = previous.lastmod;
    if (previous.extra?.alternates) entry.alternates = previous.extra.alternates;
    if (previous.extra?.images) entry.images = previous.extra.images;
    // `include` may have changed since: the listing follows today's options.
    const exclusion = previous.exclusion ?? (this.filter.included(previous.url) ? undefined : "filtered");
    // A 304 may send new validators (RFC 9110 15.4.5); the others stay as they were. Nothing else of
    // the page can differ from the previous run's: with the same validators and verdict it is that
    // run's row, unchanged (no copy of it made to compare).
    const etag = headers.get("etag") ?? previous.etag;
    const lastModified = headers.get("last-modified") ?? previous.lastModified;
    const same = etag === previous.etag && lastModified === previous.lastModified && (exclusion ?? null) === previous.exclusion;
    return {
      exclusion,
      entry,
      canonical: previous.canonical,
      links: previous.links,
      invalid: [],
      linksDropped: false,
      nofollowLinks: [],
      memory: same ? { url: previous.url, unchanged: true } : { ...previous, etag, lastModified, exclusion: exclusion ?? null },
    };
  }

  /**
   * A document (`documents`: PDF, office formats, plain text) judged by its answer alone, as a page
   * with no links: listed unless X-Robots-Tag says noindex, a Link header names another canonical,
   * or `include` leaves it out.
   */
  private readDocument(url: string, status: number, headers: AnswerFields, previous: PageMemory | null): PageRead {
    const directives = headerDirectives(headers.get("x-robots-tag"), this.productToken);
    const headerCanonical = linkHeaderCanonical(headers);
    const canonical = this.strip(headerCanonical === undefined ? null : normaliseUrl(headerCanonical, url));
    let exclusion: ExclusionReason | undefined;
    if (status !== 200) exclusion = "http_error";
    else if (directives.noindex && this.options.noindex !== "ignore") exclusion = "noindex";
    else if (canonical !== null && canonical !== url) exclusion = "canonical";
    else if (!this.filter.included(url)) exclusion = "filtered";
    const entry: SitemapEntry = { loc: url, lastmod: lastModifiedOf(headers, this.deps.now()) };
    if (entry.lastmod === undefined) delete entry.lastmod;
    return this.remember(headers, previous, null, {
      exclusion,
      entry,
      canonical,
      links: [],
      invalid: [],
      linksDropped: false,
      nofollowLinks: [],
    });
  }

  /** One request; every outcome but a refused address or a stopped crawl is a redirect or an Answer. */
  private async fetchHop(url: string, hops: Hop[]): Promise<HopStep<Answer>> {
    const step = await this.fetchRaw(url, hops);
    if (step.kind !== "final" || step.value.kind !== "raw") return step as HopStep<Answer>;
    const { status, headers, body, html, previous } = step.value;
    return { kind: "final", value: await this.readRendered(url, status, headers, body, html, previous) };
  }

  /**
   * A page read through the browser when the crawl renders (or, with `auto`, the start page read
   * both ways to decide): the document's own answer decides status and headers, the DOM gives the
   * links, robots meta, canonical, alternates and images.
   */
  private async readRendered(
    url: string,
    status: number,
    headers: AnswerFields,
    body: Uint8Array,
    html: string,
    previous: PageMemory | null,
  ): Promise<Answer> {
    const dom = await this.render(url, status, headers, body);
    // A page the browser could not render is not read raw instead: with `auto` undecided its raw
    // links would pass for "nothing to add", and with `always` it would look rendered.
    if (dom.kind === "failed") return { kind: "failed", reason: `render failed: ${dom.reason}`, exclusion: "failed", renderFailed: true };
    const rendered = this.readPage(url, status, headers, dom.html, previous);
    if (this.renderDecided) return { kind: "page", page: rendered };
    // auto: render the crawl when the browser finds in-scope links the raw HTML lacks.
    const raw = this.readPage(url, status, headers, html, previous);
    this.renderDecided = true;
    const prefix = `${originOf(url)}/`;
    const known = new Set(raw.links);
    this.rendering = rendered.links.some((link) => link.startsWith(prefix) && !known.has(link));
    return { kind: "page", page: this.rendering ? rendered : raw };
  }

  /**
   * The DOM of `url` once rendered, or why this page could not be rendered. A browser that cannot
   * be started fails the crawl (CrawlFailedError): no page of it could be rendered.
   */
  private async render(
    url: string,
    status: number,
    headers: AnswerFields,
    body: Uint8Array,
  ): Promise<{ kind: "dom"; html: string } | { kind: "failed"; reason: string }> {
    const renderer = this.deps.renderer!;
    try {
      const page = await renderPage(renderer.browser, {
        url,
        userAgent: this.deps.userAgent,
        maxDomBytes: this.limits.maxBodyBytes,
        document: { status, headers, body },
        fetch: (target, init) => this.connection.subFetch(target, init),
        timeoutMs: renderer.timeoutMs,
        signal: this.stop.signal,
        // With `auto` undecided (the start page), nothing is opened ahead: the crawl may render no other page.
        tabs: this.renderDecided ? (this.tabs ?? undefined) : undefined,
      });
      this.pagesRendered++;
      return { kind: "dom", html: page.html };
    } catch (err) {
      if (this.stop.signal.aborted) throw this.stop.signal.reason;
      if (err instanceof BrowserStartError) throw new CrawlFailedError(`render failed: ${err.reason}`);
      if (!(err instanceof RenderError)) throw err;
      // Counted under `failed` with its URL; the operator hears of the first once per crawl.
      if (!this.renderFailureTold) renderer.browser.options.log(`rendering ${url} failed: ${err.reason}`);
      this.renderFailureTold = true;
      return { kind: "failed", reason: err.reason };
    }
  }

  /**
   * One request, its page read at once, or kept raw when the browser is to read it. A redirect is
   * added to `hops` (for the link report).
   */
  private async fetchRaw(url: string, hops: Hop[]): Promise<HopStep<Answer | RawPage>> {
    this.pagesCrawled++;
    // The live state is small (URL strings), but a long crawl leaves garbage faster than the
    // collector returns it: forced collections as the process grows (memory/collector.ts).
    collector.tick();
    // A large page holds one of the process's few permits from the moment it is known to be
    // large until its links are extracted (page-budget.ts).
    let release: ((bytes: number) => void) | undefined;
    let size = 0;
    try {
      // Most pages' rows are at hand (read ahead): no await for them.
      const found = this.history === null ? null : this.history.previous(url);
      const previous = found !== null && "then" in found ? await found : found;
      return await this.request(
        url,
        async (res, signal): Promise<HopStep<Answer | RawPage>> => {
          // Not modified since the previous run: read as that run read it, without a body.
          if (res.status === 304 && previous !== null)
            return { kind: "final", value: { kind: "page", page: this.readRemembered(res.headers, previous) } };
          const location = res.headers.get("location");
          if (isRedirect(res.status) && location !== null) {
            if (this.linkReport) hops.push({ url, status: res.status, location });
            return { kind: "redirect", location };
          }
          if (res.status < 200 || res.status > 299) return failed(`HTTP ${res.status}`, "http_error", res.status);
          const media = mediaTypeOf(res.headers);
          // A document's answer is all that listing it needs: its body is never read.
          if (this.options.documents && isDocument(media.type)) {
            if (Number(res.headers.get("content-length") ?? 0) > MAX_DOCUMENT_BYTES)
              return { kind: "final", value: { kind: "failed", reason: DOCUMENT_TOO_LARGE, exclusion: "failed", tooLarge: true } };
            return { kind: "final", value: { kind: "page", page: this.readDocument(url, res.status, res.headers, previous) } };
          }
          if (!isHtml(media.type)) return failed(`not an HTML page (${media.type ?? "no content type"})`, "not_html");
          const large = {
            threshold: largePages.threshold,
            enter: async () => {
              release = await largePages.acquire(signal);
            },
          };
          const { bytes, overflow } = await readCapped(res, this.limits.maxBodyBytes, signal, large);
          size = bytes.byteLength;
          if (overflow)
            return {
              kind: "final",
              value: { kind: "failed", reason: `page larger than ${this.limits.maxBodyBytes} bytes`, exclusion: "failed", tooLarge: true },
            };
          const html = decodeHtml(bytes, media.charset);
          if (this.rendering || !this.renderDecided)
            return { kind: "final", value: { kind: "raw", status: res.status, headers: res.headers, body: bytes, html, previous } };
          const page = this.readPage(url, res.status, res.headers, html, previous);
          return { kind: "final", value: { kind: "page", page } };
        },
        validatorsOf(previous),
      );
    } catch (err) {
      if (err instanceof CrawlStopped || err instanceof TargetRefusedError) throw err;
      return failed(describeFailure(err), "failed");
    } finally {
      release?.(size);
    }
  }

  /** Page budget and time budget left; running out of time also stops the requests in flight. */
  private withinBudget(): boolean {
    return this.pagesCrawled < this.limits.maxPages && this.withinTime();
  }

  private withinTime(): boolean {
    if (this.deps.now() - this.started >= this.limits.timeoutMs) this.stop.abort(new CrawlStopped("timed out"));
    return !this.stop.signal.aborted;
  }
}

/**
 * A link that cannot be listed (longer than maxUrlLength once normalised, or not a valid URI),
 * excluded as `invalid`. The state keeps every link it is given for the whole crawl (seen): this
 * one is given as a 64-bit hash of its text, which is all that counting it once per crawl needs,
 * and `example` carries the text to the report, which keeps at most 5 of them, cut.
 */
function invalidLink(text: string, depth: number): LinkVerdict {
  return { url: `invalid:${Bun.hash(text).toString(36)}`, depth, excluded: "invalid", example: text };
}

function failed(reason: string, exclusion: ExclusionReason, status?: number): HopStep<Answer> {
  return {
    kind: "final",
    value: status === undefined ? { kind: "failed", reason, exclusion } : { kind: "failed", reason, exclusion, status },
  };
}

/**
 * The crawl's credentials and their one origin: the start URL's as sent (a resumed job is given
 * the same URL), never where its redirects lead (net/credentials.ts says why).
 */
function credentialsFor(options: CrawlOptions, startUrl: string) {
  const start = options.auth && normaliseUrl(startUrl);
  return start ? { auth: options.auth!, origin: originOf(start) } : undefined;
}

/** The start phase: a stopped crawl there means the start page could not be crawled. */
async function startPhase<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof CrawlStopped || err instanceof RobotsUnreachableError) throw new CrawlFailedError(err.reason);
    throw err;
  }
}
