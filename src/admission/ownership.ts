// Who may touch a stored record: the key that created it. One rule for every `:id` route of a
// feature (the jobs' now; any other feature's records the same way): no key, or an unknown or
// revoked one, answers 401; a record that is missing or another key's answers 404 with the
// feature's message, so a key learns nothing of records that are not its own.
import { HttpError } from "../http/errors.ts";
import { AUTH_FAILED_MESSAGE } from "./admission.ts";

/** Where a request may carry its key: the header, or also `?api_key=` (a browser's EventSource cannot send headers). */
export type KeyIn = "header" | "header or query";

export interface OwnershipDeps<T> {
  /** Step 1 alone: the key's id, or null. */
  authenticate: (request: Request) => Promise<number | null>;
  load: (id: string) => Promise<T | null>;
  /** The 404's message (`Job not found.`). */
  notFound: string;
}

/**
 * The record `id` if the request's key owns it; else throws the HttpError (401, 404) that answers.
 * Meant for a feature's `resolve` macro: `ownJob: (keyIn) => ({ resolve: ... })` (src/jobs/routes.ts).
 */
export function ownership<T extends { keyId: number }>(deps: OwnershipDeps<T>) {
  return async (request: Request, id: string, keyIn: KeyIn = "header"): Promise<T> => {
    const keyId = await deps.authenticate(keyIn === "header" ? request : withQueryKey(request));
    if (keyId === null) throw new HttpError(401, AUTH_FAILED_MESSAGE);
    const record = await deps.load(id);
    if (!record || record.keyId !== keyId) throw new HttpError(404, deps.notFound);
    return record;
  };
}

/** The request with `?api_key=` as its X-API-Key when it sends none (the request log never records query strings). */
function withQueryKey(request: Request): Request {
  const queryKey = new URL(request.url).searchParams.get("api_key");
  return request.headers.has("x-api-key") || !queryKey ? request : new Request(request.url, { headers: { "x-api-key": queryKey } });
}
