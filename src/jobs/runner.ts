// Runs jobs: claims them from the store (any instance may), keeps each claim alive with a
// heartbeat, records the outcome, sends the callback. On stop (SIGTERM) running jobs are handed
// back with their progress, so the next process to claim them continues where they were.
import type { ClaimedJob, JobStore } from "./job-store.ts";
import type { JobError, JobProgress, JobResult, JobStatus } from "./model.ts";
import type { PolitenessReport } from "../crawler/index.ts";

/** Claims per job before it is given up: a job that killed its process three times would again. */
export const MAX_ATTEMPTS = 3;

/** Why a running job's crawl was stopped before it ran out of links or budget. */
export type StopReason = "handback" | "cancelled" | "lost";

export interface JobControl {
  signal: AbortSignal;
  /** The lease was lost or the job cancelled while writing a checkpoint: stop at once. */
  lost: () => void;
  /** Time left of --job-timeout, over all attempts. */
  timeoutMs: number;
  progress: (progress: JobProgress) => void;
}

/** How a crawl ended: what it found (already in the store) or how /api/generate would have failed. */
export type CrawlEnd =
  | { ok: true; truncated: boolean; progress: JobProgress; politeness?: PolitenessReport }
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
  publish: (job: ClaimedJob, truncated: boolean, progress: JobProgress, politeness?: PolitenessReport) => Promise<JobResult | null>;
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
    const { store, owner, leaseMs } = this.deps;
    let progress = job.progress;
    // Why the lease was refused (cancelled, or taken by another process) is asked of the store;
    // the outcome waits for that answer before it decides how the job ends.
    let checking: Promise<void> = Promise.resolve();
    const lost = () =>
      (checking = checking.then(async () => {
        const current = await store.get(job.id).catch(() => null);
        stop(current?.status === "cancelled" ? "cancelled" : "lost");
      }));
    const heartbeat = setInterval(
      () => {
        store
          .heartbeat(job.id, owner, this.deps.now(), leaseMs, progress)
          .then((held) => {
            if (!held) return lost();
          })
          .catch(() => {}); // the store is down: the lease runs on; the next beat tries again
      },
      Math.max(250, Math.floor(leaseMs / 4)),
    );

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
          timeoutMs: Math.max(0, this.deps.jobTimeoutMs - job.progress.elapsed_ms),
          progress: (p) => (progress = p),
        });
        this.deps.countPages?.(end.progress.pages_crawled - job.progress.pages_crawled);
      }
      progress = end.progress;
      await checking;
      const why = reason();
      if (why === "lost") return;
      if (why === "handback") {
        await store.handBack(job.id, owner, progress);
        return;
      }
      const finishedAt = new Date(this.deps.now()).toISOString();
      let status: JobStatus;
      let result: JobResult | null = null;
      let error: JobError | null = null;
      if (!end.ok) {
        status = why === "cancelled" ? "cancelled" : "failed";
        error = end.error;
      } else {
        // A job cancelled, or given up after its attempts, keeps what it found, truncated.
        const truncated = end.truncated || why === "cancelled";
        result = await this.deps.publish(job, truncated, progress, end.ok ? end.politeness : undefined);
        status = why === "cancelled" ? "cancelled" : "succeeded";
        if (result === null) {
          // Nothing stored to publish: a crawl that never got past its start page.
          status = why === "cancelled" ? "cancelled" : "failed";
          if (status === "failed")
            error = { status: 502, message: `Could not crawl ${job.url}: the crawl was interrupted ${MAX_ATTEMPTS} times` };
        }
      }
      if (await store.finish(job.id, owner, { status, result, error, progress, finishedAt })) {
        // Not awaited: its retries (seconds apart) must not hold the slot, or a shutdown.
        this.deps.notify(job.id).catch((e) => this.deps.log(`job ${job.id}: callback failed: ${(e as Error).message}`));
      }
    } finally {
      clearInterval(heartbeat);
    }
  }
}
