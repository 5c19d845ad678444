// A website that throttles its visitors, for the politeness section (issue 23): `pages` HTML pages
// that link to each other (page i to 2i+1 and 2i+2, its neighbours, its parent, one far page and
// the home page), each answered after its own 20-200 ms (seeded, so every crawler meets the same
// site), robots.txt allowing all, and a rate limit: past `ratePerSecond` request *arrivals* in the
// last second (every request counts, robots.txt and the ones answered 429 too), it answers 429 with
// `Retry-After: 1` at once.
//
// It runs in the harness's own process (Bun.serve): what is measured here is its latency and limit,
// not its speed (a few dozen requests a second). It records every request: when it arrived and was
// answered, how many were in flight then, its status; from those, the figures of a crawl.

export interface RateLimitedSiteOptions {
  pages: number;
  /** Arrivals allowed in any 1 s window; the next ones are answered 429 (Retry-After: 1). */
  ratePerSecond: number;
  minLatencyMs?: number;
  maxLatencyMs?: number;
  seed?: number;
  /** Paths answered with this status every time, after their latency (the failed pages of a check); a 429 or 503 with Retry-After: 1. */
  broken?: Record<string, number>;
}

export interface SiteRequest {
  path: string;
  /** performance.now() of its arrival and of its answer. */
  start: number;
  end: number;
  status: number;
  /** Requests in flight when it arrived, itself included. */
  inFlight: number;
}

export interface SiteFigures {
  requests: number;
  /** 429 and 503 answers sent. */
  throttled: number;
  /** Distinct pages (HTML paths) answered 200. */
  pagesServed: number;
  maxInFlight: number;
  /** Requests that arrived while `cap` were already in flight. */
  overCap: number;
  /** From the first arrival to the last answer, s. */
  spanSeconds: number;
  /** Seconds after the first arrival at which each 429 or 503 was sent. */
  throttledAt: number[];
  /** Arrivals a second in each 10 s from the first one (the last part cut short). */
  ratePerTenSeconds: number[];
}

export interface RateLimitedSite {
  url: string;
  /** Every path of an HTML page, "/" first. */
  paths: string[];
  /** Every request since the last reset, in arrival order. */
  requests(): SiteRequest[];
  figures(cap: number): SiteFigures;
  reset(): void;
  stop(): Promise<void>;
}

export const pagePath = (i: number) => (i === 0 ? "/" : `/page/${i}.html`);

/** mulberry32, as the synthetic site uses. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FILLER = "A page of the rate-limited benchmark site, slow to answer and strict about its rate. ".repeat(12);

function pageHtml(i: number, pages: number): string {
  const targets = [2 * i + 1, 2 * i + 2, i + 1, i - 1, Math.floor((i - 1) / 2), (i * 37 + 11) % pages, 0].filter(
    (j, k, all) => j >= 0 && j < pages && j !== i && all.indexOf(j) === k,
  );
  const links = targets.map((j) => `<li><a href="${pagePath(j)}">Page ${j}</a></li>`).join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page ${i}</title></head><body><h1>Page ${i}</h1><p>${FILLER}</p><ul>${links}</ul></body></html>\n`;
}

function perTenSeconds(log: SiteRequest[], first: number): number[] {
  const counts: number[] = [];
  for (const r of log) {
    const at = Math.floor((r.start - first) / 10_000);
    counts[at] = (counts[at] ?? 0) + 1;
  }
  return Array.from(counts, (n) => (n ?? 0) / 10);
}

export function startRateLimitedSite(options: RateLimitedSiteOptions): RateLimitedSite {
  const { pages, ratePerSecond, minLatencyMs = 20, maxLatencyMs = 200, seed = 23, broken = {} } = options;
  const rand = random(seed);
  const paths = Array.from({ length: pages }, (_, i) => pagePath(i));
  const index = new Map(paths.map((path, i) => [path, i]));
  const latency = new Map(paths.map((path) => [path, minLatencyMs + Math.floor(rand() * (maxLatencyMs - minLatencyMs + 1))]));
  let log: SiteRequest[] = [];
  // Arrival times within the window: a queue (head index) trimmed at each arrival.
  let arrivals: number[] = [];
  let head = 0;
  let inFlight = 0;

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const now = performance.now();
      const path = new URL(req.url).pathname;
      arrivals.push(now);
      while (arrivals[head]! <= now - 1000) head++;
      if (head > 4096) {
        arrivals = arrivals.slice(head);
        head = 0;
      }
      inFlight++;
      const entry: SiteRequest = { path, start: now, end: 0, status: 0, inFlight };
      log.push(entry);
      try {
        if (arrivals.length - head > ratePerSecond) {
          entry.status = 429;
          return new Response("Too many requests\n", { status: 429, headers: { "retry-after": "1", "content-type": "text/plain" } });
        }
        await Bun.sleep(latency.get(path) ?? minLatencyMs);
        const i = index.get(path);
        if (broken[path] !== undefined) {
          entry.status = broken[path]!;
          const retry = entry.status === 429 || entry.status === 503 ? { "retry-after": "1" } : {};
          return new Response("broken on purpose\n", { status: entry.status, headers: { "content-type": "text/plain", ...retry } });
        }
        if (path === "/robots.txt") {
          entry.status = 200;
          return new Response("User-agent: *\nAllow: /\n", { headers: { "content-type": "text/plain" } });
        }
        if (i === undefined) {
          entry.status = 404;
          return new Response("not found\n", { status: 404, headers: { "content-type": "text/plain" } });
        }
        entry.status = 200;
        return new Response(pageHtml(i, pages), { headers: { "content-type": "text/html; charset=utf-8" } });
      } finally {
        entry.end = performance.now();
        inFlight--;
      }
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    paths,
    requests: () => log,
    figures(cap) {
      const first = log[0]?.start ?? 0;
      const throttled = log.filter((r) => r.status === 429 || r.status === 503);
      return {
        requests: log.length,
        throttled: throttled.length,
        pagesServed: new Set(log.filter((r) => r.status === 200 && index.has(r.path)).map((r) => r.path)).size,
        maxInFlight: log.reduce((most, r) => Math.max(most, r.inFlight), 0),
        overCap: log.filter((r) => r.inFlight > cap).length,
        spanSeconds: log.length === 0 ? 0 : (log.reduce((last, r) => Math.max(last, r.end), first) - first) / 1000,
        throttledAt: throttled.map((r) => (r.start - first) / 1000),
        ratePerTenSeconds: perTenSeconds(log, first),
      };
    },
    reset() {
      log = [];
      arrivals = [];
      head = 0;
    },
    stop: () => server.stop(true),
  };
}
