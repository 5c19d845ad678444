// One job's crawl: the shared engine (runCrawl) over a store-backed state, with the job's options
// as its limits and whatever time --job-timeout leaves after earlier attempts.
import {
  CheckLedger,
  type CheckSnapshot,
  hasLinkReport,
  linkChecksOf,
  type CrawlConnection,
  type CrawlDeps,
  crawlErrorAnswer,
  defaultCrawlLimits,
  type PageHistory,
  type PageKept,
  type PolitenessReport,
  runCrawl,
} from "../crawler/index.ts";
import { credentialsUnreadable, type JobCredentials } from "./job-credentials.ts";
import { CHECKS_PART, type ClaimedJob, type JobStore, type PolitenessCounts } from "./job-store.ts";
import type { CrawlEnd, JobControl } from "./runner.ts";
import { defaultStoreStateOptions, StoreCrawlState, type StoreStateOptions } from "./store-crawl-state.ts";

export interface JobCrawlDeps {
  store: JobStore;
  owner: string;
  leaseMs: number;
  crawl: CrawlDeps;
  /** Requests in flight per job. */
  concurrency?: number;
  stateOptions?: Partial<StoreStateOptions>;
  /** Opens a job's sealed credentials (option `auth`) for its crawl. */
  credentials?: JobCredentials;
  /**
   * A site's run reads its history from its site's latest successful run and leaves its own pages
   * for the next one (src/sites/); without it, such a run crawls as a plain job.
   */
  sites?: SiteRuns;
}

/** What a site's run needs of the sites: its history, and where its pages go. */
export interface SiteRuns {
  /**
   * Job `jobId`, a run of site `siteId` (null when the site is gone). `upcoming(n)`: the next URLs
   * of the crawl's frontier, whose history is read ahead with the URL asked for.
   */
  open(siteId: string, jobId: string, upcoming: (n: number) => string[]): Promise<SiteRun | null>;
}

export interface SiteRun {
  history: PageHistory;
  /** Keeps the pages the run read (written beside each checkpoint) for the next run. */
  putPages(pages: PageKept[]): Promise<void>;
}

export function createJobCrawl(deps: JobCrawlDeps) {
  return async (job: ClaimedJob, control: JobControl): Promise<CrawlEnd> => {
    let site: SiteRun | null = null;
    const now = deps.crawl.now;
    const started = now();
    // Politeness counts of the earlier attempts, carried in the crawl facts of each checkpoint with
    // this attempt's added (read from its connection), and added to this attempt's report at the end.
    const carried: PolitenessCounts = job.crawl?.politeness ?? { throttled: 0, retries: 0, paused_ms: 0 };
    let connection: CrawlConnection | null = null;
    const network = deps.crawl.fetch;
    const crawlDeps: CrawlDeps =
      typeof network === "function"
        ? deps.crawl
        : { ...deps.crawl, fetch: { config: network.config, open: (settings) => (connection = network.open(settings)) } };
    const politenessOf = new WeakMap<object, PolitenessCounts>();
    const state = new StoreCrawlState(
      deps.store,
      job.id,
      {
        checkpoint: async (checkpoint) => {
          // The politeness counts as they are when the batch is taken (the state calls this at once;
          // a retry is given the same checkpoint): records go on while it is written.
          const politeness = politenessOf.get(checkpoint) ?? withCarried(connection?.politeness(), carried);
          politenessOf.set(checkpoint, politeness);
          const { pages, ...batch } = checkpoint;
          // The pages first: a checkpoint that then fails leaves rows the next attempt writes again.
          if (pages.length > 0 && site) await site.putPages(pages);
          return deps.store.checkpoint(job.id, deps.owner, now(), deps.leaseMs, { ...batch, crawl: { ...batch.crawl, politeness } });
        },
        lost: control.lost,
        retry: control.retry,
        elapsedMs: () => job.progress.elapsed_ms + now() - started,
        progress: control.progress,
      },
      // The seen set holds at most the page budget's worth of queued URLs, plus those judged and dropped.
      {
        ...defaultStoreStateOptions,
        expectedUrls: Math.max(100_000, job.options.max_pages * 2),
        ...deps.stateOptions,
        linkReport: hasLinkReport(job.options),
      },
      now,
    );
    if (job.siteId && deps.sites) site = await deps.sites.open(job.siteId, job.id, (n) => state.upcoming(n));
    const limits = {
      ...defaultCrawlLimits,
      maxPages: job.options.max_pages,
      timeoutMs: control.timeoutMs,
      concurrency: deps.concurrency ?? defaultCrawlLimits.concurrency,
    };
    // Jobs stored before the politeness options existed have none: the defaults.
    const options = { ...job.options, max_concurrency: job.options.max_concurrency ?? null, delay_ms: job.options.delay_ms ?? 0 };
    // The stored options hold `auth` redacted: the crawl gets the sealed credentials, opened here,
    // or does not run (a redacted value is never sent).
    if (job.options.auth) {
      const auth = job.credentials && deps.credentials ? await deps.credentials.open(job.id, job.credentials) : null;
      if (auth === null) return { ok: false, error: { status: 502, message: credentialsUnreadable(job.url) }, progress: job.progress };
      options.auth = auth;
    }
    const checks = linkChecksOf(job.options);
    const checkLedger =
      checks.external || checks.resources ? await readCheckLedger(deps.store, job.id, checks, limits.maxCheckedUrls) : null;
    try {
      const run = await runCrawl(job.url, state, limits, crawlDeps, {
        signal: control.signal,
        crawl: options,
        ...(site ? { history: site.history } : {}),
        ...(checkLedger ? { checkLedger } : {}),
      });
      await state.flush();
      // Stopped (handed back, cancelled) or done, the checks so far go to the store for whoever carries the job on.
      if (checkLedger) await deps.store.putPart(job.id, CHECKS_PART, Bun.gzipSync(JSON.stringify(checkLedger.snapshot())));
      return {
        ok: true,
        truncated: run.truncated,
        progress: state.progress(),
        politeness: { ...run.politeness, ...withCarried(run.politeness, carried) },
        render: run.render,
        ...(run.checks ? { checks: run.checks } : {}),
      };
    } catch (error) {
      await state.flush().catch(() => {});
      const answer = crawlErrorAnswer(error, job.url);
      if (!answer) throw error;
      return { ok: false, error: answer, progress: state.progress() };
    }
  };
}

/** The checks an earlier attempt of the job stored (CHECKS_PART), or a fresh ledger for its first. */
async function readCheckLedger(
  store: JobStore,
  id: string,
  checks: { external: boolean; resources: boolean },
  cap: number,
): Promise<CheckLedger> {
  const stored = await store.getPart(id, CHECKS_PART);
  if (stored === null) return new CheckLedger(checks, cap);
  return CheckLedger.restore(
    checks,
    cap,
    JSON.parse(new TextDecoder().decode(Bun.gunzipSync(stored as Uint8Array<ArrayBuffer>))) as CheckSnapshot,
  );
}

/** This attempt's politeness counts (none before its first request) added to the earlier attempts'. */
function withCarried(own: PolitenessReport | undefined, carried: PolitenessCounts): PolitenessCounts {
  return {
    throttled: carried.throttled + (own?.throttled ?? 0),
    retries: carried.retries + (own?.retries ?? 0),
    paused_ms: carried.paused_ms + (own?.paused_ms ?? 0),
  };
}
