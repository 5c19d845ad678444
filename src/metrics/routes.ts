// GET /metrics: Prometheus text exposition, no key (scrapers run beside the service; nothing in
// it names a client, a key or a URL).
import { Elysia } from "elysia";
import type { Scrape } from "./metrics.ts";
import { OPEN_ENDPOINT } from "../http/openapi.ts";

const EXAMPLE = [
  "# HELP genapi_http_requests_total HTTP requests answered, by method, route template and status.",
  "# TYPE genapi_http_requests_total counter",
  'genapi_http_requests_total{method="GET",route="/api.php",status="200"} 42',
  "",
].join("\n");

export function metricsRoutes(scrape: () => Promise<Scrape>) {
  return new Elysia({ name: "metrics" }).get(
    "/metrics",
    async ({ set }) => {
      const { contentType, body } = await scrape();
      set.headers["content-type"] = contentType;
      return body;
    },
    {
      detail: {
        tags: ["operations"],
        summary: "Prometheus metrics",
        description:
          "Prometheus text exposition (format 0.0.4): request counts and durations by route template, " +
          "crawls running and queued, crawl pages, quota refusals, jobs by status, and the process's " +
          "memory and CPU. No key needed.",
        ...OPEN_ENDPOINT,
        responses: {
          200: {
            description: "The metrics, in Prometheus text format.",
            content: { "text/plain": { schema: { type: "string", example: EXAMPLE } as never } },
          },
        },
      },
    },
  );
}
