// Retention: finished jobs older than --job-retention days are deleted, and the crawl state of
// finished or deleted jobs is dropped, in small batches with pauses between them, so a job of a
// million URLs never holds the store (or, on SQLite, the event loop) for long.
import type { JobRetention } from "./job-store.ts";

export interface RetentionDeps {
  store: JobRetention;
  retentionDays: number;
  now: () => number;
  /** Jobs per expire batch, state rows per sweep batch. */
  jobBatch?: number;
  rowBatch?: number;
  /** Pause between batches (ms), and between rounds when there is nothing to do. */
  pauseMs?: number;
  intervalMs?: number;
  log: (message: string) => void;
}

export function startRetention(deps: RetentionDeps): { stop: () => Promise<void> } {
  const jobBatch = deps.jobBatch ?? 50;
  const rowBatch = deps.rowBatch ?? 2_000;
  const pauseMs = deps.pauseMs ?? 20;
  const intervalMs = deps.intervalMs ?? 60_000;
  let stopped = false;
  const round = async () => {
    const before = new Date(deps.now() - deps.retentionDays * 86_400_000).toISOString();
    while (!stopped && (await deps.store.expire(before, jobBatch)) === jobBatch) await Bun.sleep(pauseMs);
    while (!stopped && (await deps.store.sweep(rowBatch)) > 0) await Bun.sleep(pauseMs);
  };
  const loop = (async () => {
    while (!stopped) {
      await round().catch((error) => deps.log(`job retention: ${(error as Error).message}`));
      for (let waited = 0; !stopped && waited < intervalMs; waited += 250) await Bun.sleep(250);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
