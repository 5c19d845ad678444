// Runs jobs: claims them from the store (any instance may), keeps each claim alive with a
// heartbeat, records the outcome, sends the callback. On stop (SIGTERM) running jobs are handed
// back with their progress, so the next process to claim them continues where they were.
import type { ClaimedJob, JobStore } from "./job-store.ts";
import { CANCELLED_EMPTY, type JobError, type JobProgress, type JobResult, type JobStatus } from "./model.ts";
import type { CheckReport, PolitenessReport, RenderReport } from "../crawler/index.ts";

/** Claims per job before it is given up: a job that killed its process three times would again. */
export const MAX_ATTEMPTS = 3;

/**
 * How often a running job's row is read for a cancel made through another instance (one made
 * here stops it at once): its crawl stops within 2 s of the DELETE, as the README says.
 */
export const CANCEL_WATCH_MS = 500;

/** The wait before the n-th retry of a failed checkpoint: 250 ms doubling to 5 s. */
export function checkpointBackoffMs(tries: number): number {
  return Math.min(250 * 2 ** Math.min(tries - 1, 10), 5_000);
}

const messageOf = (error: unknown) => (error as Error)?.message ?? String(error);

/** Why a running job's crawl was stopped before it ran out of links or budget. */
export type StopReason = "handback" | "cancelled" | "lost";

export interface JobControl {
  signal: AbortSignal;
  /** The lease was lost or the job cancelled while writing a checkpoint: stop at once. */
  lost: () => void;
  /** A checkpoint failed: the wait before writing it again, or null to give it up (Lease.retry). */
  retry: (error: unknown, tries: number) => number | null;
  /** Time left of --job-timeout, over all attempts. */
  timeoutMs: number;
  progress: (progress: JobProgress) => void;
}

/** How a crawl ended: what it found (already in the store) or how /api/generate would have failed. */
export type CrawlEnd =
  | { ok: true; truncated: boolean; progress: JobProgress; politeness?: PolitenessReport; render?: RenderReport; checks?: CheckReport }
  | { ok: false; error: JobError; progress: JobProgress };

export interface RunnerDeps {
  store: JobStore;
  /** This process's name on its leases. */
  owner: string;
  maxJobs: number;
  leaseMs: number;
  jobTimeoutMs: number;
  /** How often an idle runner looks for queued jobs. */
  pollMs: number;
  now: () => number;
  /** Runs (or continues) the job's crawl with its state in the store. */
  crawl: (job: ClaimedJob, control: JobControl) => Promise<CrawlEnd>;
  /** Renders the listed entries into sitemap files in the store; the result without its crawl facts. */
  /** `politeness`: what the crawl's politeness did, when this process ran it to its end. */
  publish: (
    job: ClaimedJob,
    truncated: boolean,
    progress: JobProgress,
    reports?: { politeness?: PolitenessReport; render?: RenderReport; checks?: CheckReport },
  ) => Promise<JobResult | null>;
  /** What a job that succeeded adds to its result before it is written (a site's run: its change set). */
  succeeded?: (job: ClaimedJob, result: JobResult) => Promise<JobResult>;
  /** Sends the finished job to its callback URL, if it has one. */
  notify: (jobId: string) => Promise<void>;
  log: (message: string) => void;
  /** Page requests a run made (its own, not its earlier attempts'): for the metrics. */
  countPages?: (pages: number) => void;
  /** Whether this process can open sealed credentials; if not, jobs with them are left to others. */
  claimsCredentials?: boolean;
}

export class JobRunner {
  private readonly running = new Map<string, { stop: (reason: StopReason) => void; done: Promise<void> }>();
  private timer: Timer | undefined;
  private stopping = false;
  private polling = false;
  /** Why the last look for work failed (the store down): logged once, not at every poll. */
  private claimProblem: string | null = null;

  constructor(private readonly deps: RunnerDeps) {}

  get active(): number {
    return this.running.size;
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.deps.pollMs);
    this.wake();
  }

  /** Looks for work now (a job was just created). */
  wake(): void {
    if (this.stopping || this.polling) return;
    this.polling = true;
    this.fill()
      .then(() => {
        if (this.claimProblem !== null) this.deps.log("job claims resumed");
        this.claimProblem = null;
      })
      .catch((error) => {
        const problem = (error as Error)?.message ?? String(error);
        if (problem !== this.claimProblem) this.deps.log(`job claim failed: ${problem}`);
        this.claimProblem = problem;
      })
      .finally(() => (this.polling = false));
  }

  /** A job was cancelled (through this instance): if it runs here, its crawl stops now. */
  cancel(jobId: string): void {
    this.running.get(jobId)?.stop("cancelled");
  }

  /** Stops claiming and hands every running job back with its progress. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    for (const job of this.running.values()) job.stop("handback");
    await Promise.all([...this.running.values()].map((job) => job.done));
  }

  private async fill(): Promise<void> {
    while (!this.stopping && this.running.size < this.deps.maxJobs) {
      const now = this.deps.now();
      const job = await this.deps.store.claim(
        this.deps.owner,
        now,
        this.deps.leaseMs,
        new Date(now).toISOString(),
        this.deps.claimsCredentials ?? true,
      );
      if (!job) return;
      if (this.running.has(job.id)) {
        // Its lease ran out while it runs here (the store stalled past it): the claim renewed it.
        this.deps.log(`job ${job.id}: its lease had run out while it ran here; renewed`);
        continue;
      }
      // A claim counts an attempt and a hand-back gives it back: a second one means a lease ran out.
      if (job.attempts > 1 && job.attempts <= MAX_ATTEMPTS && job.status === "running")
        this.deps.log(`job ${job.id}: continued in attempt ${job.attempts} of ${MAX_ATTEMPTS}: the lease of the attempt before ran out`);
      const control = new AbortController();
      let reason: StopReason | undefined;
      const stop = (why: StopReason) => {
        reason ??= why;
        control.abort(why);
      };
      const done = this.run(job, control.signal, stop, () => reason)
        .catch((error) => this.deps.log(`job ${job.id} failed: ${(error as Error)?.stack ?? error}`))
        .finally(() => {
          this.running.delete(job.id);
          this.wake();
        });
      this.running.set(job.id, { stop, done });
    }
  }

  private async run(
    job: ClaimedJob,
    signal: AbortSignal,
    stop: (why: StopReason) => void,
    reason: () => StopReason | undefined,
  ): Promise<void> {
    const { store, owner, leaseMs, log } = this.deps;
    let progress = job.progress;
    /** The lease is ours at least until then: the claim's, then each heartbeat's that landed. */
    let leaseUntil = this.deps.now() + leaseMs;
    // Why the lease was refused (cancelled, or taken by another process) is asked of the store;
    // the outcome waits for that answer before it decides how the job ends.
    let checking: Promise<void> = Promise.resolve();
    /** The outcome is being written: what the store says about the lease from now on is ours. */
    let settled = false;
    const lost = () =>
      (checking = checking.then(async () => {
        if (settled || reason() === "lost" || reason() === "cancelled") return;
        const refused = await this.whyRefused(job.id);
        if (refused.stop === "lost") log(`job ${job.id}: lease lost: ${refused.why}`);
        stop(refused.stop);
      }));
    const retry = (error: unknown, tries: number): number | null => {
      // Another process holds the job: nothing of this run may be written any more.
      if (reason() === "lost") return null;
      // Stopping (SIGTERM) with the store still failing past the lease: whoever claims the job next
      // continues it from its last checkpoint.
      if (this.stopping && this.deps.now() >= leaseUntil) {
        log(
          `job ${job.id}: lease given up: the process is stopping and a checkpoint still fails after ${tries} tries (${messageOf(error)})`,
        );
        return null;
      }
      const wait = checkpointBackoffMs(tries);
      // 1, 2, 4, 8, ... : an outage of an hour logs a dozen lines, not thousands.
      if ((tries & (tries - 1)) === 0)
        log(`job ${job.id}: checkpoint failed (try ${tries}: ${messageOf(error)}); writing it again in ${wait} ms`);
      return wait;
    };
    let beating = false;
    const heartbeat = setInterval(
      () => {
        if (beating) return;
        beating = true;
        const at = this.deps.now();
        store
          .heartbeat(job.id, owner, at, leaseMs, progress)
          .then((held) => {
            if (held) leaseUntil = Math.max(leaseUntil, at + leaseMs);
            else return lost();
          })
          .catch(() => {}) // the store is down: the lease runs on; the next beat tries again
          .finally(() => (beating = false));
      },
      Math.max(250, Math.floor(leaseMs / 4)),
    );
    // A cancel made through another instance shows in the job's row: stop within CANCEL_WATCH_MS.
    let watching = false;
    const watch = setInterval(() => {
      if (watching || settled || reason() !== undefined) return;
      watching = true;
      store
        .get(job.id)
        .then((current) => {
          if (settled || reason() !== undefined) return;
          if (current?.status === "cancelled" && current.leaseOwner === owner) stop("cancelled");
          else if (current === null || current.leaseOwner !== owner) lost();
        })
        .catch(() => {}) // the store is down: the next look tries again
        .finally(() => (watching = false));
    }, CANCEL_WATCH_MS);

    try {
      let end: CrawlEnd;
      if (job.status === "cancelled") {
        // Cancelled while its owner was gone: publish what the crawl had stored.
        stop("cancelled");
        end = { ok: true, truncated: true, progress };
      } else if (job.attempts > MAX_ATTEMPTS) {
        end = { ok: true, truncated: true, progress };
        this.deps.log(`job ${job.id}: ${MAX_ATTEMPTS} attempts ended without finishing; publishing what was found`);
      } else {
        end = await this.deps.crawl(job, {
          signal,
          lost: () => void lost(),
          retry,
          timeoutMs: Math.max(0, this.deps.jobTimeoutMs - job.progress.elapsed_ms),
          progress: (p) => (progress = p),
        });
        this.deps.countPages?.(end.progress.pages_crawled - job.progress.pages_crawled);
      }
      progress = end.progress;
      await checking;
      settled = true;
      const why = reason();
      if (why === "lost") return;
      if (why === "handback") {
        log(`job ${job.id}: lease given up: the process is stopping; the job is handed back with its progress`);
        await store.handBack(job.id, owner, progress);
        return;
      }
      const finishedAt = new Date(this.deps.now()).toISOString();
      let status: JobStatus;
      let result: JobResult | null = null;
      let error: JobError | null = null;
      if (why === "cancelled") {
        // A cancelled job: what the crawl found is in the store (the crawl wrote its last
        // checkpoint before it returned); it is the result, truncated, or with nothing listed the 409.
        status = "cancelled";
        if (progress.urls_listed > 0) {
          result = await this.deps.publish(
            job,
            true,
            progress,
            end.ok ? { politeness: end.politeness, render: end.render, checks: end.checks } : undefined,
          );
        }
        if (result === null || result.url_count === 0) {
          result = null;
          error = CANCELLED_EMPTY;
        }
        log(
          `job ${job.id}: lease given up: the job was cancelled; ${result ? `${result.url_count} URLs published` : "nothing was listed"}`,
        );
      } else if (!end.ok) {
        status = "failed";
        error = end.error;
      } else {
        // A job given up after its attempts keeps what it found, truncated.
        result = await this.deps.publish(
          job,
          end.truncated,
          progress,
          end.ok ? { politeness: end.politeness, render: end.render, checks: end.checks } : undefined,
        );
        status = "succeeded";
        if (result === null) {
          // Nothing stored to publish: a crawl that never got past its start page.
          status = "failed";
          error = { status: 502, message: `Could not crawl ${job.url}: the crawl was interrupted ${MAX_ATTEMPTS} times` };
        } else if (this.deps.succeeded) result = await this.deps.succeeded(job, result);
      }
      if (result !== null && result.url_count !== progress.urls_listed) {
        // The published entries are what the job serves: its final progress says the same.
        log(`job ${job.id}: progress counted ${progress.urls_listed} URLs listed, the store holds ${result.url_count}`);
        progress = { ...progress, urls_listed: result.url_count };
      }
      if (await store.finish(job.id, owner, { status, result, error, progress, finishedAt })) {
        // Not awaited: its retries (seconds apart) must not hold the slot, or a shutdown.
        this.deps.notify(job.id).catch((e) => this.deps.log(`job ${job.id}: callback failed: ${(e as Error).message}`));
      } else {
        log(`job ${job.id}: lease lost before its outcome (${status}) was written: ${(await this.whyRefused(job.id)).why}`);
      }
    } finally {
      clearInterval(heartbeat);
      clearInterval(watch);
    }
  }

  /** Why the store refused this process's lease: the job cancelled, deleted, finished, or held by another process. */
  private async whyRefused(id: string): Promise<{ stop: "cancelled" | "lost"; why: string }> {
    let failure: unknown;
    for (let tries = 1; tries <= 3; tries++) {
      try {
        const current = await this.deps.store.get(id);
        if (current === null) return { stop: "lost", why: "the job was deleted" };
        if (current.leaseOwner !== null && current.leaseOwner !== this.deps.owner)
          return { stop: "lost", why: `another process holds it (${current.leaseOwner}), attempt ${current.attempts}` };
        if (current.status === "cancelled" && current.leaseOwner === this.deps.owner)
          return { stop: "cancelled", why: "the job was cancelled" };
        return { stop: "lost", why: `the job is ${current.status}${current.leaseOwner === null ? " and nobody holds it" : ""}` };
      } catch (error) {
        failure = error;
        await Bun.sleep(checkpointBackoffMs(tries));
      }
    }
    return { stop: "lost", why: `the store refused it and could not say why (${messageOf(failure)})` };
  }
}
