// The response headers every API answer carries, defined once for the app (src/app.ts) and for
// GET /api.php's fast lane (src/password/fast-lane.ts).
import { corsHeaders } from "./cors.ts";

/** Headers that browsers may read from cross-origin responses. */
export const EXPOSED_HEADERS = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "RateLimit",
  "RateLimit-Policy",
  "Retry-After",
  "X-Request-Id",
];

/**
 * The headers of every API answer, defined once: CORS's (any origin, the exposed list) and
 * `Cache-Control: no-store` (answers are per request: passwords, quotas; static assets override
 * it). The app sends them (the cors plugin's static headers and its own no-store hook; a
 * preflight answers before that hook, without no-store); GET /api.php's fast lane
 * (src/password/fast-lane.ts) answers with this same object.
 */
export const API_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...corsHeaders(EXPOSED_HEADERS),
  "cache-control": "no-store",
});
