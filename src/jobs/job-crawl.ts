// One job's crawl: the shared engine (runCrawl) over a store-backed state, with the job's options
// as its limits and whatever time --job-timeout leaves after earlier attempts.
import { type CrawlDeps, crawlErrorAnswer, defaultCrawlLimits, runCrawl } from "../crawler/index.ts";
import type { ClaimedJob, JobStore } from "./job-store.ts";
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
}

export function createJobCrawl(deps: JobCrawlDeps) {
  return async (job: ClaimedJob, control: JobControl): Promise<CrawlEnd> => {
    const now = deps.crawl.now;
    const started = now();
    const state = new StoreCrawlState(
      deps.store,
      job.id,
      {
        checkpoint: (batch) => deps.store.checkpoint(job.id, deps.owner, now(), deps.leaseMs, batch),
        lost: control.lost,
        elapsedMs: () => job.progress.elapsed_ms + now() - started,
        progress: control.progress,
      },
      // The seen set holds at most the page budget's worth of queued URLs, plus those judged and dropped.
      {
        ...defaultStoreStateOptions,
        expectedUrls: Math.max(100_000, job.options.max_pages * 2),
        ...deps.stateOptions,
        linkReport: job.options.link_report === true,
      },
      now,
    );
    const limits = {
      ...defaultCrawlLimits,
      maxPages: job.options.max_pages,
      timeoutMs: control.timeoutMs,
      concurrency: deps.concurrency ?? defaultCrawlLimits.concurrency,
    };
    try {
      const run = await runCrawl(job.url, state, limits, deps.crawl, {
        signal: control.signal,
        crawl: job.options,
      });
      await state.flush();
      return { ok: true, truncated: run.truncated, progress: state.progress() };
    } catch (error) {
      await state.flush().catch(() => {});
      const answer = crawlErrorAnswer(error, job.url);
      if (!answer) throw error;
      return { ok: false, error: answer, progress: state.progress() };
    }
  };
}
