// The outermost layer of every request: gives it an id (echoed as X-Request-Id), resolves the
// client address once, and writes one JSON line when the response is ready. It wraps the whole
// app instead of living in Elysia hooks so that every status, 404s and errors included, is
// logged as sent, and so the peer address is read while the server still knows it.

import { targetStart } from "./entry.ts";

export interface RequestLogDeps {
  /** The client address for this request (peer, or X-Forwarded-For from a trusted proxy). */
  clientIp: (request: Request) => string;
  write: (line: string) => void;
  now: () => number;
  /** Metrics of the answered request (src/metrics): the same path and duration as the log line. */
  observe?: (method: string, path: string, status: number, durationMs: number) => void;
}

export interface LogLine {
  time: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  ip: string;
  request_id: string;
  user_agent?: string;
}

/**
 * The request target's path without its query string (queries can carry secrets and are never
 * logged). The URL comes through routableRequest, so the target is never read from Host.
 */
function pathOf(url: string): string {
  const start = targetStart(url);
  if (start < 0) return "/";
  const end = url.indexOf("?", start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}

export function withRequestLog(
  handle: (request: Request) => Promise<Response> | Response,
  deps: RequestLogDeps,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const started = deps.now();
    const requestId = crypto.randomUUID();
    const response = await handle(request);
    response.headers.set("X-Request-Id", requestId);
    // A body refused before it was read (no key, too large, too slow) would keep the connection
    // waiting for an upload nobody reads: close it after the response instead.
    if (response.status === 413 || response.status === 408 || (request.body !== null && !request.bodyUsed)) {
      response.headers.set("Connection", "close");
    }
    const line: LogLine = {
      time: new Date(started).toISOString(),
      method: request.method,
      path: pathOf(request.url),
      status: response.status,
      duration_ms: Math.round((deps.now() - started) * 100) / 100,
      ip: deps.clientIp(request),
      request_id: requestId,
    };
    const agent = request.headers.get("user-agent");
    if (agent) line.user_agent = agent.slice(0, 200);
    deps.write(`${JSON.stringify(line)}\n`);
    deps.observe?.(line.method, line.path, line.status, line.duration_ms);
    return response;
  };
}
