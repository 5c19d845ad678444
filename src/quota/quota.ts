// Daily request quotas, counted per bucket and UTC day in the database so that every genapi
// process sharing it sees the same counts, and counts survive restarts. The counting statements
// are each backend's (src/db/sqlite/quota.ts, src/db/postgres/quota.ts); the arithmetic and the
// headers are here.
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

/** What the quota needs from the store; each backend implements it (src/db/sqlite/quota.ts, src/db/postgres/quota.ts). */
export interface QuotaStore {
  /** Counts one request or refuses it at the limit: one atomic statement on every backend. */
  admit(bucket: string, limit: number, now: Date): Promise<Admission>;
  /** Gives back one admission of `day` (a request answered 503 before it ran). */
  release(bucket: string, day: string): Promise<void>;
  peek(bucket: string, limit: number, now: Date): Promise<QuotaState>;
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

/** Counters of days before this one are deleted (yesterday's stay, for releases across midnight). */
export function pruneBefore(now: Date): string {
  return utcDay(new Date(now.getTime() - DAY_MS));
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
