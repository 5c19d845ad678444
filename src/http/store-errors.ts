// How a store that cannot answer now (StoreUnavailableError) reaches the client: a JSON 503 with a
// short Retry-After. The store only throws; this is the HTTP side of it.
import { StoreUnavailableError } from "../db/store.ts";

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
