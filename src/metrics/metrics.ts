// Prometheus metrics for GET /metrics. One set per server, so tests and several apps in one process
// never share counts. Label values are bounded: route templates, a fixed method list and status
// codes; never a path, key, address, URL or job id.
//
// Counting is plain numbers (request-metrics.ts). prom-client, the Node ecosystem's standard, formats
// them and adds the process metrics; it is imported and its registry built on the first scrape,
// because importing it at start cost every start and every CLI command 20-25 ms.
import type { Registry } from "prom-client";
import { family, requestMetrics } from "./request-metrics.ts";
import { routeTemplates } from "./route-template.ts";

/** What the metrics read on each scrape; nothing is pushed to them ahead of time. */
export interface MetricsSources {
  /** Sitemap crawls of POST /api/generate running and waiting for a slot now. */
  crawls: () => { running: number; queued: number };
  /** Jobs by status (the job store's counts); a failing store leaves the last values. */
  jobCounts?: () => Promise<Record<string, number>>;
}

export const JOB_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"] as const;

/** Seconds: /api.php answers in tens of microseconds, a crawl may take a minute. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export interface Scrape {
  contentType: string;
  body: string;
}

export type Metrics = ReturnType<typeof createMetrics>;

const PROMTOOL_MISNAMED = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

export function createMetrics(sources: MetricsSources) {
  const requests = requestMetrics(DURATION_BUCKETS);
  let crawlPages = 0;
  let crawlThrottled = 0;
  let quotaRefusals = 0;
  let routeOf: (path: string) => string = routeTemplates([]);

  const buildRegistry = async (): Promise<Registry> => {
    const { collectDefaultMetrics, Gauge, Registry } = await import("prom-client");
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    // prom-client's totals of active handles, requests and resources are gauges named `_total`, which
    // `promtool check metrics` refuses (the suffix marks a counter); under Bun they read 0 anyway.
    for (const name of PROMTOOL_MISNAMED) registry.removeSingleMetric(name);
    const registers = [registry];
    requests.register(registry);
    new Gauge({
      name: "genapi_crawls_running",
      help: "Sitemap crawls of POST /api/generate running now.",
      registers,
      collect() {
        this.set(sources.crawls().running);
      },
    });
    new Gauge({
      name: "genapi_crawls_queued",
      help: "Sitemap crawls of POST /api/generate waiting for a crawl slot now.",
      registers,
      collect() {
        this.set(sources.crawls().queued);
      },
    });
    family(
      registry,
      "genapi_crawl_pages_total",
      "Pages fetched by sitemap crawls: finished crawls of POST /api/generate and crawl jobs' runs.",
      "counter",
      () => [{ value: crawlPages, labels: {} }],
    );
    family(
      registry,
      "genapi_crawl_throttled_total",
      "429 and 503 answers crawled sites gave genapi's crawls (each pauses the host; the request is retried up to 3 times).",
      "counter",
      () => [{ value: crawlThrottled, labels: {} }],
    );
    family(
      registry,
      "genapi_quota_refusals_total",
      "Requests refused with 429 because the free tier's daily quota was used up.",
      "counter",
      () => [{ value: quotaRefusals, labels: {} }],
    );
    const jobs = new Gauge({
      name: "genapi_jobs",
      help: "Crawl jobs in the store, by status.",
      labelNames: ["status"] as const,
      registers,
      async collect() {
        if (!sources.jobCounts) return;
        try {
          const counts = await sources.jobCounts();
          for (const status of JOB_STATUSES) this.set({ status }, counts[status] ?? 0);
        } catch {
          // A busy or unreachable store must not fail the scrape: the last values stay.
        }
      },
    });
    for (const status of JOB_STATUSES) jobs.set({ status }, 0);
    return registry;
  };
  let registry: Promise<Registry> | undefined;

  return {
    /** The text a scraper gets, and its content type. */
    async scrape(): Promise<Scrape> {
      registry ??= buildRegistry();
      const ready = await registry;
      return { contentType: ready.contentType, body: await ready.metrics() };
    },
    /** The app's route templates (Elysia's `app.routes`), set once the app is composed. */
    setRoutes(templates: Iterable<string>) {
      routeOf = routeTemplates(templates);
    },
    /** One answered request; `path` is the target's path without its query. */
    observe(method: string, path: string, status: number, durationMs: number) {
      requests.observe(method, routeOf(path), status, durationMs / 1000);
      if (status === 429) quotaRefusals++;
    },
    /** Pages a crawl fetched: a finished POST /api/generate crawl, or a job's run (stopped or not). */
    crawlPages(count: number) {
      crawlPages += count;
    },
    /** A crawled site answered 429 or 503. */
    crawlThrottled() {
      crawlThrottled++;
    },
  };
}
