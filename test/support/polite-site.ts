// A website that watches how it is crawled: every request's start and end (ms, performance.now of
// this process), the most requests it ever had in flight at once, and what it answered. Its pages
// form a small tree (page i links to 2i+1 and 2i+2 up to `pages`), each answered after `latencyMs`;
// `answer` may replace any answer (a 429, a 503 with Retry-After, a robots.txt with Crawl-delay).
export interface PoliteSiteOptions {
  pages: number;
  latencyMs?: number;
  robots?: string;
  /** Called for each request before the normal answer; a Response replaces it. */
  answer?: (path: string, nth: number) => Response | undefined | Promise<Response | undefined>;
}

export interface Visit {
  path: string;
  /** The Host header as sent (lower-cased): which spelling of the host the request named. */
  host: string;
  start: number;
  end: number;
  status: number;
}

export interface PoliteSite {
  url: string;
  /** Every request, in the order they started (end is 0 until it ends). */
  visits: Visit[];
  /** The most requests in flight at one moment (of those `which` keeps: all by default). */
  maxInFlight(which?: (visit: Visit) => boolean): number;
  /** The shortest time between two request starts (Infinity with fewer than two). */
  minStartGap(): number;
  /** Requests of `path`, in order. */
  visitsOf(path: string): Visit[];
  stop(): Promise<void>;
}

export const pagePath = (i: number) => (i === 0 ? "/" : `/p${i}`);

export function pageHtml(i: number, pages: number): string {
  const links = [2 * i + 1, 2 * i + 2].filter((j) => j < pages).map((j) => `<a href="${pagePath(j)}">page ${j}</a>`);
  return `<!doctype html><html><head><title>page ${i}</title></head><body><h1>page ${i}</h1>${links.join(" ")}</body></html>`;
}

export function servePoliteSite(options: PoliteSiteOptions): PoliteSite {
  const visits: Visit[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const seen = new Map<string, number>();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 60,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const visit: Visit = { path, host: (req.headers.get("host") ?? "").toLowerCase(), start: performance.now(), end: 0, status: 0 };
      visits.push(visit);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const nth = (seen.get(path) ?? 0) + 1;
      seen.set(path, nth);
      try {
        if (options.latencyMs) await Bun.sleep(options.latencyMs);
        const res = (await options.answer?.(path, nth)) ?? normalAnswer(path, options);
        visit.status = res.status;
        // Read the body here, so that "in flight" lasts until the whole answer is made.
        const body = await res.arrayBuffer();
        return new Response(body, { status: res.status, headers: res.headers });
      } finally {
        visit.end = performance.now();
        inFlight--;
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    visits,
    maxInFlight: (which) => (which === undefined ? maxInFlight : mostAtOnce(visits.filter(which))),
    minStartGap() {
      const starts = visits.map((v) => v.start).sort((a, b) => a - b);
      let gap = Number.POSITIVE_INFINITY;
      for (let i = 1; i < starts.length; i++) gap = Math.min(gap, starts[i]! - starts[i - 1]!);
      return gap;
    },
    visitsOf: (path) => visits.filter((v) => v.path === path),
    stop: () => server.stop(true),
  };
}

/** The most of `visits` in flight at one moment (a request ending as another starts is not counted twice; one not ended is still in flight). */
export function mostAtOnce(visits: Visit[]): number {
  const events = visits.flatMap((v) => [
    { at: v.start, step: 1 },
    { at: v.end === 0 ? Number.POSITIVE_INFINITY : v.end, step: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.step - b.step);
  let now = 0;
  let most = 0;
  for (const event of events) {
    now += event.step;
    most = Math.max(most, now);
  }
  return most;
}

function normalAnswer(path: string, options: PoliteSiteOptions): Response {
  if (path === "/robots.txt")
    return new Response(options.robots ?? "User-agent: *\nAllow: /\n", { headers: { "content-type": "text/plain" } });
  const i = path === "/" ? 0 : /^\/p(\d+)$/.test(path) ? Number(path.slice(2)) : -1;
  if (i < 0 || i >= options.pages) return new Response("not found", { status: 404 });
  return new Response(pageHtml(i, options.pages), { headers: { "content-type": "text/html; charset=utf-8" } });
}
