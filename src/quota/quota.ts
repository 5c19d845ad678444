// Daily request quotas, counted per bucket and UTC day in the database so that every genapi
// process sharing the file sees the same counts, and counts survive restarts.
import type { Database } from "bun:sqlite";
import type { KeyRecord } from "../keys/key-store.ts";
import { quotaSubject } from "./client-address.ts";

const DAY_MS = 86_400_000;

/** What the rate-limit headers report. */
export interface QuotaState {
  limit: number;
  remaining: number;
  /** Unix seconds of the next 00:00 UTC. */
  resetAt: number;
  /** The UTC day counted, for `release`. */
  day: string;
}

export interface Admission extends QuotaState {
  admitted: boolean;
  /** Seconds until the reset, at least 1. */
  retryAfter: number;
}

export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

export function nextResetSeconds(now: Date): number {
  return (Math.floor(now.getTime() / DAY_MS) + 1) * (DAY_MS / 1000);
}

/** Seconds from `now` until `resetAt`, rounded up so a client never retries too early. */
function secondsUntil(resetAt: number, now: Date): number {
  return Math.max(0, Math.ceil((resetAt * 1000 - now.getTime()) / 1000));
}

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

/** The admission for the count the upsert returned; null means the limit had been reached. */
export function admissionOf(count: number | null, limit: number, now: Date): Admission {
  const resetAt = nextResetSeconds(now);
  return {
    admitted: count !== null,
    limit,
    remaining: count === null ? 0 : Math.max(0, limit - count),
    resetAt,
    day: utcDay(now),
    retryAfter: Math.max(1, secondsUntil(resetAt, now)),
  };
}

/** The quota state for today's count of a bucket (0 when it has none). */
export function stateOf(count: number, limit: number, now: Date): QuotaState {
  return { limit, remaining: Math.max(0, limit - count), resetAt: nextResetSeconds(now), day: utcDay(now) };
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

/** Counters of days before this one are deleted (yesterday's stay, for releases across midnight). */
export function pruneBefore(now: Date): string {
  return utcDay(new Date(now.getTime() - DAY_MS));
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

export function assertLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`A daily limit must be a positive integer, not ${limit}.`);
}

/** X-RateLimit-* and the IETF draft's RateLimit-Policy / RateLimit fields; Retry-After on a refusal. */
export function rateLimitHeaders(state: QuotaState & { admitted?: boolean }, now: Date): Record<string, string> {
  const seconds = secondsUntil(state.resetAt, now);
  const headers: Record<string, string> = {
    "X-RateLimit-Limit": String(state.limit),
    "X-RateLimit-Remaining": String(state.remaining),
    "X-RateLimit-Reset": String(state.resetAt),
    "RateLimit-Policy": `"daily";q=${state.limit};w=86400`,
    RateLimit: `"daily";r=${state.remaining};t=${seconds}`,
  };
  if (state.admitted === false) headers["Retry-After"] = String(Math.max(1, seconds));
  return headers;
}

export function rateLimitMessage(limit: number): string {
  return `API rate limit exceeded (${limit} requests per day). Please contact us for premium access.`;
}

/** Premium keys are counted per key from any address; free keys share the client's address quota. */
export function quotaBucketForKey(record: Pick<KeyRecord, "id" | "daily_limit">, clientIp: string): string {
  return record.daily_limit === null ? `ip:${quotaSubject(clientIp)}` : `key:${record.id}`;
}

/** The bucket and limit that apply to a request authenticated by `record`. */
export function quotaForKey(
  record: Pick<KeyRecord, "id" | "daily_limit">,
  clientIp: string,
  freeDailyLimit: number,
): { bucket: string; limit: number } {
  return { bucket: quotaBucketForKey(record, clientIp), limit: record.daily_limit ?? freeDailyLimit };
}
