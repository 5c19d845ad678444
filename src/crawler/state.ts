/**
 * The growing state of one crawl, behind an interface so the same engine (engine.ts) runs on memory
 * (POST /api/generate, `genapi crawl`) and on the store (jobs, which survive the process).
 *
 * The contract an implementation must meet:
 * - Frontier: FIFO of {url, depth}. `take(n)` hands out up to n items in order; an item taken and not
 *   yet finished by `record({ done: item })` must come back (first) when the crawl is resumed.
 * - Seen: every URL ever queued, claimed or judged is seen once. `record` dedupes `links` against
 *   it (and within the batch) and marks the new ones seen in the same step; `claim(url, by)` marks
 *   one URL at once (a redirect hop that item `by` follows in place) and says whether it was new.
 *   A claim holds, at least in memory, until `by`'s `record` (which repeats it in `seen`) makes it
 *   durable; a claim of an item never recorded is void on resume (its chain is followed again).
 *   A bounded cache may forget a URL only once the store has it.
 * - `record` is one page's outcome, applied as one unit (atomically for a durable store): finish
 *   `done`, mark `seen`, queue or exclude `links`, add `entry`, count `excluded` and `pages`,
 *   remember `start` (the start URL after redirects, recorded with the start page) and `truncated`.
 *   A store may buffer records and write them in batches, provided a resumed crawl sees either all
 *   of a record or none of it, and the frontier it resumes never lacks an item whose `done` is lost.
 * - `resume()` returns what a previous run left (null for a fresh state): the engine then skips the
 *   start page and carries on from the frontier; a resumed crawl lists the same URLs as one that was
 *   never interrupted.
 * - The engine never holds the entries: `entries()` yields them sorted by loc (code-unit order) once
 *   the crawl is over, for the sitemap writer; `report()` gives the exclusion counts and examples.
 * The engine awaits the state once per page (`record`), once per batch of `take`, and once per
 * redirect hop (`claim`); nothing per link.
 */
import { emptyExclusionReport, recordExclusion, type ExclusionReason, type ExclusionReport } from "./exclusions.ts";
import type { SitemapEntry } from "./output/xml.ts";
import type { PageKept } from "./history.ts";
import { LinkLedger } from "./links/ledger.ts";
import { isReferrerLink, type LinkFacts, type SeenUrls } from "./links/model.ts";
import type { LinkSource } from "./links/report.ts";

export interface FrontierItem {
  /** Normalised absolute URL. */
  url: string;
  /** Links followed from the start page (depth 0) to reach it. */
  depth: number;
}

/** A link met on a page: queued unless seen; `excluded` counts it under that reason instead. */
export interface LinkVerdict extends FrontierItem {
  excluded?: ExclusionReason;
  /** The page's canonical URL: queued like a link, but not one of its links (no referrer for the link report). */
  canonical?: true;
  /**
   * What the report shows for it, when not `url`: an `invalid` link is seen under a short key
   * (`url`), never as itself (it may be megabytes long), and shown as this text, cut.
   */
  example?: string;
}

export interface PageRecord {
  /** The frontier item this finishes; null for the start page, which never was in the frontier. */
  done: FrontierItem | null;
  /** Set with the start page: the start URL after redirects (the crawl's scope). */
  start?: string;
  /** URLs claimed while fetching it (redirect hops followed in place), made durable here. */
  seen: readonly string[];
  /** Links to queue or exclude, each only if not seen yet (then marked seen). */
  links: readonly LinkVerdict[];
  /** The frontier may hold at most this many items after this record; links past it are dropped. */
  maxFrontier: number;
  /** The listed entry of the page, if it qualifies. */
  entry?: SitemapEntry;
  /** URLs met and not listed (the page itself, a redirecting URL, ...), already unique. */
  excluded: readonly { reason: ExclusionReason; url: string }[];
  /** Page requests this item cost (each redirect hop counts). */
  pages: number;
  /** A limit dropped something while crawling this page. */
  truncated: boolean;
  /**
   * With link_report: what the link report needs of this record (links/model.ts), applied with it.
   * A state keeps per URL only the referrer count and the 5 smallest referrers, and only while
   * the URL is not known to answer fine (links/ledger.ts; for jobs, the store's job_links).
   */
  linkFacts?: LinkFacts;
  /** A site's run: the page as this run read it, which the state keeps for the next run (history.ts). */
  memory?: PageKept;
}

export interface RecordResult {
  /** New links dropped because the frontier was full (the crawl is then truncated). */
  dropped: number;
  /** Items in the frontier now (taken items excluded). */
  queued: number;
}

export interface CrawlCounters {
  pagesCrawled: number;
  urlsListed: number;
  truncated: boolean;
}

export interface ResumePoint extends CrawlCounters {
  /** The start URL after redirects, as recorded with the start page. */
  start: string;
  /** Items in the frontier, taken and unfinished ones included. */
  queued: number;
}

export interface CrawlState {
  resume(): Promise<ResumePoint | null>;
  take(max: number): Promise<{ items: FrontierItem[]; queued: number }>;
  claim(url: string, by: FrontierItem): Promise<boolean>;
  record(page: PageRecord): Promise<RecordResult>;
  entries(): AsyncIterable<SitemapEntry>;
  report(): Promise<ExclusionReport>;
}

/** The whole state in memory: for crawls bounded by a page cap that a process holds easily. */
export class MemoryCrawlState implements CrawlState {
  /** Seen URLs; with link_report the ledger, which counts each page's links as it dedupes them. */
  private readonly seen: SeenUrls;
  private frontier: FrontierItem[] = [];
  private head = 0;
  /** Items taken and not recorded yet, with the URLs they claimed: both come back on resume. */
  private readonly taken = new Map<FrontierItem, string[]>();
  private readonly listed: SitemapEntry[] = [];
  private readonly exclusions = emptyExclusionReport();
  private readonly counters: CrawlCounters = { pagesCrawled: 0, urlsListed: 0, truncated: false };
  private start: string | null = null;
  /** The link report's rows, for a crawl with link_report. */
  private readonly links: LinkLedger | null;

  constructor(options: { linkReport?: boolean } = {}) {
    this.links = options.linkReport ? new LinkLedger() : null;
    this.seen = this.links ?? new SeenSet();
  }

  async resume(): Promise<ResumePoint | null> {
    if (this.taken.size > 0) {
      for (const claims of this.taken.values()) for (const url of claims) this.seen.delete(url);
      this.frontier = [...this.taken.keys(), ...this.frontier.slice(this.head)];
      this.head = 0;
      this.taken.clear();
    }
    return this.start === null ? null : { start: this.start, queued: this.size, ...this.counters };
  }

  async take(max: number): Promise<{ items: FrontierItem[]; queued: number }> {
    const items = this.frontier.slice(this.head, this.head + max);
    this.head += items.length;
    for (const item of items) this.taken.set(item, []);
    if (this.head > 1024 && this.head * 2 > this.frontier.length) {
      this.frontier = this.frontier.slice(this.head);
      this.head = 0;
    }
    return { items, queued: this.size };
  }

  async claim(url: string, by: FrontierItem): Promise<boolean> {
    if (this.seen.has(url)) return false;
    this.seen.add(url);
    this.taken.get(by)?.push(url);
    return true;
  }

  async record(page: PageRecord): Promise<RecordResult> {
    if (page.start !== undefined) this.start = page.start;
    if (page.done) this.taken.delete(page.done);
    for (const url of page.seen) this.seen.add(url);
    // With link_report, the page counts as a referrer of each of its followed links (links/model.ts).
    const from = page.linkFacts?.page?.from ?? null;
    let dropped = 0;
    for (const link of page.links) {
      const referrer = from !== null && isReferrerLink(link) ? from : null;
      if (this.seen.meet(link.url, referrer)) continue;
      if (link.excluded !== undefined) {
        this.seen.add(link.url, false);
        recordExclusion(this.exclusions, link.excluded, link.example ?? link.url);
      } else if (this.size >= page.maxFrontier) {
        // Not marked seen: another page may still queue it once there is room. The link report
        // counts its referrers meanwhile.
        dropped++;
        this.seen.drop(link.url, referrer);
      } else {
        this.seen.add(link.url, true, referrer);
        this.frontier.push({ url: link.url, depth: link.depth });
      }
    }
    if (page.entry) this.listed.push(page.entry);
    for (const { reason, url } of page.excluded) recordExclusion(this.exclusions, reason, url);
    this.counters.pagesCrawled += page.pages;
    this.counters.urlsListed = this.listed.length;
    if (page.truncated || dropped > 0) this.counters.truncated = true;
    if (this.links) this.links.apply(page.linkFacts ?? NO_LINK_FACTS, page.excluded, page.entry?.loc);
    return { dropped, queued: this.size };
  }

  async *entries(): AsyncIterable<SitemapEntry> {
    yield* this.listed.sort((a, b) => (a.loc < b.loc ? -1 : a.loc > b.loc ? 1 : 0));
  }

  async report(): Promise<ExclusionReport> {
    return this.exclusions;
  }

  /** The link report's rows (links/report.ts builds the lists), or null without link_report. */
  linkSource(): LinkSource | null {
    return this.links;
  }

  private get size(): number {
    return this.frontier.length - this.head;
  }
}

/** The seen set of a crawl without link_report. */
class SeenSet extends Set<string> implements SeenUrls {
  meet(url: string): boolean {
    return this.has(url);
  }

  drop(): void {}
}

/** A record without link facts (a crawl's records carry them only with link_report). */
export const NO_LINK_FACTS: LinkFacts = { fates: [] };
