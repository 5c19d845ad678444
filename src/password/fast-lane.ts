// GET /api.php answered without Elysia. Why: the password endpoint's target is 0.9x a bare
// Bun.serve doing the same work (scripts/bench/fixtures/fair-ceiling-server.ts); through Elysia it measured
// 0.78-0.81x, most of the gap being Elysia's per-request context and response mapping. With this
// lane: 0.89-0.91x (CPU µs per request, medians of 32-72 alternating runs: 28.2 -> 25.2 µs against
// the ceiling's 22.3; notes/bench-profile.md section 6, "Fast lane").
//
// It is no second implementation: the result is the route's own (passwordFromQuery), the headers
// the app's own set (API_HEADERS), the body mapped by Response.json as Elysia maps it; and it runs
// inside the server's request-log wrapper (src/server.ts), so the log line, X-Request-Id, metrics
// and Connection handling are those of every request. It takes only a GET whose path is exactly
// /api.php; HEAD, OPTIONS, POST, `/api.php/` and every other path go to the app.
import { API_HEADERS } from "../http/api-headers.ts";
import { targetStart } from "../http/entry.ts";
import { passwordFromQuery } from "./routes.ts";
import type { PasswordResult } from "./service.ts";

const PATH = "/api.php";
// Built once: Response.json copies a Headers object natively, ~0.7 µs a response less than from a
// plain object; each response gets its own copy (the wrapper's X-Request-Id stays in it).
const headers = new Headers(API_HEADERS as Record<string, string>);

/** The answer to a `GET /api.php[?query]`, or undefined for any other request (the app's). */
export function passwordFastLane(request: Request): Response | undefined {
  if (request.method !== "GET") return undefined;
  const url = request.url;
  const start = targetStart(url);
  if (start < 0 || !url.startsWith(PATH, start)) return undefined;
  const end = start + PATH.length;
  if (end < url.length && url.charCodeAt(end) !== 63 /* "?" */) return undefined;
  let result: PasswordResult;
  try {
    result = passwordFromQuery(url);
  } catch {
    // Never expected; the app then answers (and logs) it as it answers any failing route.
    return undefined;
  }
  return Response.json(result.body, { status: result.status, headers });
}
