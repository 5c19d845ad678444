// Composes the Elysia app from its features. It never listens: src/server.ts serves it, and
// tests call app.handle(new Request(...)).
import { Elysia, type AnyElysia } from "elysia";
import { API_HEADERS, EXPOSED_HEADERS } from "./http/api-headers.ts";
import { cors } from "./http/cors.ts";
import { errorHandling, methodIndex } from "./http/errors.ts";
import { docs } from "./ops/docs.ts";
import { healthRoutes } from "./ops/health.ts";
import { passwordRoutes } from "./password/routes.ts";
import { sitemapRoutes, type SitemapDeps } from "./sitemap/routes.ts";

export interface AppDeps {
  isReady: () => Promise<boolean>;
  /** Where a request that failed unexpectedly (a 500) is told, one message, no newline. */
  log: (message: string) => void;
  sitemap: SitemapDeps;
  /** The job endpoints (src/jobs/routes.ts), when the server runs them. */
  jobs?: AnyElysia;
  /** The site endpoints (src/sites/routes.ts), when the server runs them. */
  sites?: AnyElysia;
  /** GET /metrics (src/metrics/routes.ts), when the server keeps metrics. */
  metrics?: AnyElysia;
}

export function createApp(deps: AppDeps) {
  // One trailing-slash rule for every route, those of later features included: `/healthz/` is
  // `/healthz` (Elysia's loose paths, stated here so no feature turns it off for itself).
  const app = new Elysia({ name: "genapi", strictPath: false })
    .use(
      cors({
        methods: ["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
        allowedHeaders: ["Content-Type", "X-API-Key"],
        exposeHeaders: EXPOSED_HEADERS,
        maxAgeSeconds: 600,
      }),
    )
    .onRequest(({ set }) => {
      set.headers["cache-control"] = API_HEADERS["cache-control"]!;
    })
    .use(errorHandling((path) => allowed(path), deps.log))
    .use(docs({ freeDailyLimit: deps.sitemap.freeDailyLimit }))
    .use(healthRoutes(deps.isReady))
    .use(passwordRoutes)
    .use(sitemapRoutes(deps.sitemap))
    .use(deps.jobs ?? new Elysia({ name: "jobs" }))
    .use(deps.sites ?? new Elysia({ name: "sites" }))
    .use(deps.metrics ?? new Elysia({ name: "metrics" }));
  const allowed = methodIndex(app.routes);
  return app;
}
