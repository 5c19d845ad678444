// The link report's checks beyond the origin in the crawl held in memory, over the crawler's own
// network path (createCrawlNetwork) against loopback sites: the cap (CrawlLimits.maxCheckedUrls, a
// small one here; 10,000 by default, test/crawler/links/outside.test.ts) bounds what is requested,
// and the distinct URLs past it are counted in external_unchecked / resources_unchecked.
import { expect, test } from "bun:test";
import { crawlSite, createCrawlNetwork, defaultCrawlLimits, defaultCrawlOptions } from "../../src/crawler/index.ts";

test("past the cap nothing more is requested; the distinct rest is counted, however often it is linked", async () => {
  const requested: string[] = [];
  const outside = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      requested.push(`${req.method} ${new URL(req.url).pathname}`);
      return new Response(null, { status: 404 });
    },
  });
  const O = `http://127.0.0.1:${outside.port}`;
  // 3 pages, each linking to the same 30 external URLs and loading the same 20 images elsewhere.
  const body = (extra: string) =>
    Array.from({ length: 30 }, (_, i) => `<a href="${O}/x${i}">x</a>`).join("") +
    Array.from({ length: 20 }, (_, i) => `<img src="${O}/i${i}.png">`).join("") +
    extra;
  const site = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/robots.txt") return new Response("", { status: 404 });
      const html = path === "/" ? body(`<a href="/p1">1</a><a href="/p2">2</a>`) : body("");
      return new Response(html, { headers: { "content-type": "text/html" } });
    },
  });
  try {
    const network = createCrawlNetwork({ policy: { allowPrivate: true, allowTargets: [] } });
    const result = await crawlSite(
      `http://127.0.0.1:${site.port}/`,
      { ...defaultCrawlLimits, maxCheckedUrls: 7 },
      { fetch: network, now: Date.now, userAgent: "genapi/1.0.0" },
      undefined,
      { ...defaultCrawlOptions(100), link_report: { external: true, resources: true } },
    );
    const links = result.links!;
    expect(links.external_unchecked).toBe(23);
    expect(links.resources_unchecked).toBe(13);
    // The first 7 of each kind, in the order the start page gives them, each asked once.
    const first = (prefix: string, suffix: string) => Array.from({ length: 7 }, (_, i) => `HEAD /${prefix}${i}${suffix}`);
    expect(requested.sort()).toEqual([...first("x", ""), ...first("i", ".png")].sort());
    expect(links.broken).toHaveLength(14);
    for (const entry of links.broken) expect(entry).toMatchObject({ status: 404, referrer_count: 3 });
  } finally {
    site.stop(true);
    outside.stop(true);
  }
});

test("a host paused by 429 holds up its own checks, not another host's: each origin gets at most half the slots", async () => {
  const log: { at: number; host: string }[] = [];
  let firstAt = 0;
  const paused = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      const now = performance.now();
      if (firstAt === 0) firstAt = now;
      log.push({ at: now, host: "paused" });
      // Throttled for its first second, each answer asking for a 2 s pause.
      return now - firstAt < 1_000 ? new Response(null, { status: 429, headers: { "retry-after": "2" } }) : new Response(null);
    },
  });
  const quick = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      log.push({ at: performance.now(), host: "quick" });
      return new Response(null, { status: 404 });
    },
  });
  const P = `http://127.0.0.1:${paused.port}`;
  const Q = `http://127.0.0.1:${quick.port}`;
  const html =
    Array.from({ length: 8 }, (_, i) => `<a href="${P}/p${i}">p</a>`).join("") +
    Array.from({ length: 6 }, (_, i) => `<a href="${Q}/q${i}">q</a>`).join("");
  const site = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      if (new URL(req.url).pathname === "/robots.txt") return new Response("", { status: 404 });
      return new Response(html, { headers: { "content-type": "text/html" } });
    },
  });
  try {
    const network = createCrawlNetwork({ policy: { allowPrivate: true, allowTargets: [] } });
    const result = await crawlSite(
      `http://127.0.0.1:${site.port}/`,
      defaultCrawlLimits,
      { fetch: network, now: Date.now, userAgent: "genapi/1.0.0" },
      undefined,
      { ...defaultCrawlOptions(10), link_report: { external: true, resources: false } },
    );
    expect(result.links!.broken.map((b) => b.url)).toEqual(Array.from({ length: 6 }, (_, i) => `${Q}/q${i}`));
    const quickAt = log.filter((r) => r.host === "quick").map((r) => r.at - firstAt);
    expect(quickAt).toHaveLength(6);
    // The paused host's 2 s never delayed the other host's checks.
    for (const at of quickAt) expect(at).toBeLessThan(1_000);
  } finally {
    site.stop(true);
    paused.stop(true);
    quick.stop(true);
  }
}, 30_000);

test("a resource of the crawl's own origin is requested only where a page would be: robots.txt and exclude keep it out", async () => {
  const requested: string[] = [];
  const site = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      requested.push(`${req.method} ${path}`);
      if (path === "/robots.txt") return new Response("User-agent: *\nDisallow: /private/\n");
      if (path === "/") {
        const imgs = ["/private/a.png", "/drafts/b.png", "/c.png"].map((src) => `<img src="${src}">`).join("");
        return new Response(imgs, { headers: { "content-type": "text/html" } });
      }
      return new Response(null, { status: 404 });
    },
  });
  try {
    const network = createCrawlNetwork({ policy: { allowPrivate: true, allowTargets: [] } });
    const result = await crawlSite(
      `http://127.0.0.1:${site.port}/`,
      defaultCrawlLimits,
      { fetch: network, now: Date.now, userAgent: "genapi/1.0.0" },
      undefined,
      { ...defaultCrawlOptions(10), exclude: ["/drafts/"], link_report: { external: false, resources: true } },
    );
    expect(requested).toEqual(["GET /robots.txt", "GET /", "HEAD /c.png"]);
    expect(result.links!.broken.map((b) => b.url)).toEqual([`http://127.0.0.1:${site.port}/c.png`]);
  } finally {
    site.stop(true);
  }
});
