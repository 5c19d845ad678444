// Where every request enters the process: makes request.url one that Elysia routes right.
//
// Bun builds request.url as `http://<Host><target>`, or as the bare target when the Host header is
// missing or is not a valid host (HTTP/1.0 without Host, `Host: a@b`, `Host: a/b`). Elysia finds the
// path at url.indexOf("/", 11) (elysiajs/elysia#748, declined upstream), which is only right when the
// path starts at index 11 or later: `http://api/healthz` and a bare `/healthz` route to 404 or to a
// wrong path. Such a URL gets a fixed origin in front of the target as sent, so routes and the
// request log see the target's path whatever the Host. The Host header itself is left as sent.

/** An origin long enough for Elysia, and plainly not a real host (RFC 6761 `.invalid`). */
export const FALLBACK_ORIGIN = "http://host.invalid";

/** Where the request target starts in a URL as Bun builds it (0 for a bare target). */
export function targetStart(url: string): number {
  if (url.charCodeAt(0) === 47 /* "/" */) return 0;
  return url.indexOf("/", url.indexOf("//") + 2);
}

/**
 * Returns the request with a URL Elysia routes by its target. The common case (a host of 4 or more
 * characters) costs two indexOf calls and returns the request untouched; otherwise `url` is
 * redefined on the same object, so its body, its peer address and server.timeout() still apply.
 */
export function routableRequest(request: Request): Request {
  const url = request.url;
  const start = targetStart(url);
  if (start >= 11) return request;
  const target = start < 0 ? "/" : url.slice(start);
  Object.defineProperty(request, "url", { value: FALLBACK_ORIGIN + target });
  return request;
}
