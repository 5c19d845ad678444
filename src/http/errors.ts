// Errors become HTTP answers here, once. Handlers refuse a request by throwing an HttpError (its
// status, message and headers: the error states its own answer, as Hono's HTTPException does);
// answerErrors, every plugin's onError, turns it and Elysia's own errors (404, 405, bad bodies) into
// the JSON error body of the endpoint's family, and anything else into a logged 500.
import { Elysia } from "elysia";

/** The password endpoint's error body: {success: false, error}. */
export const passwordErrorBody = (text: string) => ({ success: false as const, error: text });
/** Every other endpoint's error body: {success: false, message}. */
export const apiErrorBody = (text: string) => ({ success: false as const, message: text });

/**
 * The one error body: the password service answers {success, error}, everything else
 * {success, message}. `path` null: no request is known (Bun's last-resort handler), the API's.
 */
export function errorBody(path: string | null, text: string) {
  return path !== null && withoutTrailingSlash(path) === "/api.php" ? passwordErrorBody(text) : apiErrorBody(text);
}

/** Routes answer with or without one trailing slash (Elysia's loose paths); so do 405 and the error shape. */
const withoutTrailingSlash = (path: string) => (path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path);

export function jsonError(path: string | null, status: number, text: string, headers: Record<string, string> = {}) {
  return Response.json(errorBody(path, text), { status, headers });
}

export const INTERNAL_ERROR_MESSAGE = "Internal server error.";

/**
 * A refusal with its answer: the status, the message of the error body and the headers to send
 * (rate limits, Retry-After). Thrown by handlers and their resolve hooks; answered by answerErrors.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** What answerErrors reads of Elysia's error context. */
interface ErrorContext {
  code: unknown;
  error: unknown;
  request: Request;
  path: string;
}

/**
 * The one mapping from an error to its answer, every plugin's onError: an HttpError answers as it
 * says; unknown paths 404, a known path with another method 405 with `Allow` (Elysia has no 405 of
 * its own; `allowedMethods` knows the composed app's routes, a feature's plugin needs none),
 * unparsable bodies 400; anything unexpected 500 without internals, logged through `log` once.
 * Headers a handler set before failing (`set.headers`: a request's rate limits) stay on the answer.
 */
export function answerErrors(log: (message: string) => void, allowedMethods: (path: string) => string[] = () => []) {
  // It reads no more of the context than this: Elysia compiles what a hook reads (`route` would be
  // set on every request of every route), so the routes' compiled handlers stay as they were.
  return ({ code, error, request, path }: ErrorContext): Response => {
    if (error instanceof HttpError) return jsonError(path, error.status, error.message, error.headers);
    switch (code) {
      case "NOT_FOUND": {
        const allow = allowedMethods(path);
        if (allow.length > 0) {
          return jsonError(path, 405, `Method ${request.method} is not allowed here; use ${allow.join(", ")}.`, {
            Allow: allow.join(", "),
          });
        }
        return jsonError(path, 404, `Not found: ${path}`);
      }
      case "PARSE":
        return jsonError(path, 400, "Request body could not be parsed.");
      case "VALIDATION":
        return jsonError(path, 400, "Request does not match the documented schema.");
      default: {
        const status = typeof (error as { status?: unknown }).status === "number" ? (error as { status: number }).status : 500;
        // Some errors (Bun's AbortError) have an empty stack: name what happened all the same.
        if (status >= 500) log(`${request.method} ${path} failed: ${describe(error)}`);
        return jsonError(path, status, status >= 500 ? INTERNAL_ERROR_MESSAGE : String((error as Error).message));
      }
    }
  };
}

/**
 * answerErrors for every route of the app (`as: "global"`), the routes of features included.
 * `allowedMethods` is asked lazily, once the app is composed.
 */
export function errorHandling(allowedMethods: (path: string) => string[], log: (message: string) => void) {
  return new Elysia({ name: "error-handling" }).onError({ as: "global" }, answerErrors(log, allowedMethods));
}

/** Methods each path answers, from the composed app's route table (HEAD comes with GET). */
export function methodIndex(routes: { method: string; path: string }[]): (path: string) => string[] {
  let index: Map<string, string[]> | undefined;
  return (path) => {
    if (!index) {
      index = new Map();
      for (const { method, path: routePath } of routes) {
        if (method === "OPTIONS" || routePath.includes("*")) continue;
        const methods = index.get(routePath) ?? [];
        if (!methods.includes(method)) methods.push(method);
        if (method === "GET" && !methods.includes("HEAD")) methods.push("HEAD");
        index.set(routePath, methods);
      }
    }
    return index.get(withoutTrailingSlash(path)) ?? [];
  };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error) || "unknown error";
  return error.stack || `${error.name}: ${error.message || "no message"}`;
}
