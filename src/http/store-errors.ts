// A store that cannot answer now, and how that reaches the client: a JSON 503 with a short
// Retry-After. The backends (src/db/) throw StoreUnavailableError; the routes turn it into the
// answer here. It lives below both, so neither the store nor the HTTP layer reaches up to the other.

/**
 * Why the store cannot serve now: another process's lock, a server out of reach, or an SQLite file
 * that takes no writes (a full disk, a read-only file) or fails to read (I/O errors, corruption).
 */
export type StoreProblem = "busy" | "unreachable" | "full" | "read-only" | "failing";

/**
 * The store cannot answer now: another process holds SQLite's write lock past the wait, or
 * PostgreSQL is down or slow. Requests answer 503 with a short Retry-After instead of waiting
 * (src/http/store-errors.ts).
 */
export class StoreUnavailableError extends Error {
  constructor(readonly problem: StoreProblem) {
    super(`Service temporarily unavailable: the database is ${problem}.`);
    this.name = "StoreUnavailableError";
  }
}

/** Seconds a client should wait after a 503 of the store. */
export const STORE_RETRY_AFTER_SECONDS = 2;

/** The JSON 503 for a StoreUnavailableError, or null for any other error. */
export function storeErrorResponse(error: unknown, headers: Record<string, string> = {}): Response | null {
  if (!(error instanceof StoreUnavailableError)) return null;
  return Response.json(
    { success: false, message: error.message },
    { status: 503, headers: { ...headers, "Retry-After": String(STORE_RETRY_AFTER_SECONDS) } },
  );
}
