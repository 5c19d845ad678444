// A store that cannot answer now, and how that reaches the client: a JSON 503 with a short
// Retry-After. The backends (src/db/) throw StoreUnavailableError; being an HttpError, it states
// that answer itself (src/http/errors.ts). It lives below both, so neither the store nor the HTTP
// layer reaches up to the other.
import { HttpError } from "./errors.ts";

/**
 * Why the store cannot serve now: another process's lock, a server out of reach, or an SQLite file
 * that takes no writes (a full disk, a read-only file) or fails to read (I/O errors, corruption).
 */
export type StoreProblem = "busy" | "unreachable" | "full" | "read-only" | "failing";

/** Seconds a client should wait after a 503 of the store. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/**
 * The store cannot answer now: another process holds SQLite's write lock past the wait, or
 * PostgreSQL is down or slow. Requests answer 503 with a short Retry-After instead of waiting.
 */
export class StoreUnavailableError extends HttpError {
  constructor(readonly problem: StoreProblem) {
    super(503, `Service temporarily unavailable: the database is ${problem}.`, { "Retry-After": String(STORE_RETRY_AFTER_SECONDS) });
    this.name = "StoreUnavailableError";
  }
}
