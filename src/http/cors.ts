// CORS for an API that any origin may call without credentials. Every answer is the same whatever
// the Origin (`Access-Control-Allow-Origin: *`), so no response varies by Origin and none carries
// `Vary` for CORS: @elysiajs/cors sends `Vary: *` on every response for `origin: "*"`, which makes
// every answer uncacheable by any shared cache and is not what CORS asks for.
import { Elysia } from "elysia";

export interface CorsOptions {
  methods: string[];
  allowedHeaders: string[];
  exposeHeaders: string[];
  maxAgeSeconds: number;
}

/**
 * The CORS headers of every answer (preflights add theirs). The app's full set of response headers
 * (API_HEADERS in src/http/api-headers.ts) is built from this too.
 */
export function corsHeaders(exposeHeaders: string[]): Record<string, string> {
  return {
    "access-control-allow-origin": "*",
    "access-control-expose-headers": exposeHeaders.join(", "),
  };
}

export function cors(options: CorsOptions) {
  const always = corsHeaders(options.exposeHeaders);
  const preflight = {
    ...always,
    "access-control-allow-methods": options.methods.join(", "),
    "access-control-allow-headers": options.allowedHeaders.join(", "),
    "access-control-max-age": String(options.maxAgeSeconds),
  };
  return (
    new Elysia({ name: "cors" })
      .headers(always)
      // Any OPTIONS request is a preflight (the routes define none), answered before routing.
      .onRequest(({ request }) => {
        if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: preflight });
      })
  );
}
