// The quota statements on SQLite: one statement each, so concurrent requests of any process sharing
// the file admit exactly the limit.
import type { Database } from "bun:sqlite";
import { admissionOf, assertLimit, pruneBefore, stateOf, utcDay, type Admission, type QuotaState } from "../../quota/quota.ts";

/**
 * Counts one request against the bucket's quota for today, or refuses it when the quota is
 * used up. One statement, so concurrent requests (any process) admit exactly `limit`.
 */
export function admit(db: Database, bucket: string, limit: number, now: Date): Admission {
  assertLimit(limit);
  pruneOncePerDay(db, now);
  const row = db
    .query<{ count: number }, [string, string, number]>(
      `INSERT INTO usage_counters (day, bucket, count) VALUES (?, ?, 1)
       ON CONFLICT (day, bucket) DO UPDATE SET count = count + 1 WHERE count < ?
       RETURNING count`,
    )
    .get(utcDay(now), bucket, limit);
  return admissionOf(row?.count ?? null, limit, now);
}

/** Gives back one admission of `day` (a request answered 503 before it ran). */
export function release(db: Database, bucket: string, day: string): void {
  db.query<never, [string, string]>("UPDATE usage_counters SET count = count - 1 WHERE day = ? AND bucket = ? AND count > 0").run(
    day,
    bucket,
  );
}

/** The quota state without counting a request (responses refused before admission). */
export function peek(db: Database, bucket: string, limit: number, now: Date): QuotaState {
  assertLimit(limit);
  const row = db
    .query<{ count: number }, [string, string]>("SELECT count FROM usage_counters WHERE day = ? AND bucket = ?")
    .get(utcDay(now), bucket);
  return stateOf(row?.count ?? 0, limit, now);
}

/** Deletes counters older than yesterday (yesterday's stay, for releases across midnight). */
export function pruneCounters(db: Database, now: Date): void {
  db.query<never, [string]>("DELETE FROM usage_counters WHERE day < ?").run(pruneBefore(now));
}

const lastPrunedDay = new WeakMap<Database, string>();

function pruneOncePerDay(db: Database, now: Date): void {
  const today = utcDay(now);
  if (lastPrunedDay.get(db) === today) return;
  pruneCounters(db, now);
  lastPrunedDay.set(db, today);
}
