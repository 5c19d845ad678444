import { Elysia } from "elysia";

// Each API keeps its own error shape: the password service answers {success, error} (seed 000),
// everything else {success, message} (seed 001).
export function errorBody(path: string, text: string) {
  return withoutTrailingSlash(path) === "/api.php" ? { success: false, error: text } : { success: false, message: text };
}

/** Routes answer with or without one trailing slash (Elysia's loose paths); so do 405 and the error shape. */
const withoutTrailingSlash = (path: string) => (path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path);

export function jsonError(path: string, status: number, text: string, headers: Record<string, string> = {}) {
  return Response.json(errorBody(path, text), { status, headers });
}

/**
 * Turns Elysia's errors into JSON: unknown paths 404, a known path with another method 405 with
 * `Allow` (Elysia has no 405 of its own), unparsable bodies 400, anything unexpected 500 without
 * internals (logged through `log`). `allowedMethods` is asked lazily, once the app is composed.
 */
export function errorHandling(allowedMethods: (path: string) => string[], log: (message: string) => void) {
  return new Elysia({ name: "error-handling" }).onError({ as: "global" }, ({ code, error, request, path }) => {
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
        return jsonError(path, status, status >= 500 ? "Internal server error." : String((error as Error).message));
      }
    }
  });
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
