// The link report (the README's link report) of the crawl held in memory (POST
// /api/generate's and `genapi crawl`'s), against fixture sites on loopback.
import { afterEach, describe, expect, test } from "bun:test";
import {
  type CrawlOptions,
  crawlReport,
  crawlSite,
  defaultCrawlLimits,
  defaultCrawlOptions,
  type HopFetcher,
  MemoryCrawlState,
  runCrawl,
} from "../../src/crawler/index.ts";
import { fullLinkLists } from "../../src/crawler/links/report.ts";
import { serveLinkSite, serveManyBroken } from "../support/link-site.ts";
import { stopRawServers } from "../support/raw-http-server.ts";
import { serveSite } from "../support/site.ts";

afterEach(() => stopRawServers());

/** A port nothing listens on: a link rerouted there meets a refused connection. */
function closedPort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** One hop through Bun's fetch; /refused goes to a closed loopback port instead. */
function hopWithRefused(): HopFetcher {
  const port = closedPort();
  return (url, init) => fetch(url.pathname === "/refused" ? `http://127.0.0.1:${port}/refused` : url, { ...init, redirect: "manual" });
}

const deps = (fetch: HopFetcher) => ({ fetch, now: Date.now, userAgent: "genapi/1.0.0" });
// A short request timeout: /slow never answers.
const limits = { ...defaultCrawlLimits, maxPages: 2_000, requestTimeoutMs: 1_500 };
const options = (more: Partial<CrawlOptions> = {}): CrawlOptions => ({
  ...defaultCrawlOptions(2_000),
  link_report: true,
  sitemaps_from_robots: true,
  ...more,
});

describe("the link report of a crawl held in memory", () => {
  test("is exactly what the site holds: broken links, redirects, sitemap errors, referrers cut to 5 and counted", async () => {
    const site = serveLinkSite({ fillers: 12 });
    const result = await crawlSite(`${site.url}/`, limits, deps(hopWithRefused()), undefined, options());
    expect(result.links).toEqual(site.expected("connection refused"));
    // robots-disallowed and nofollow-only URLs are never requested, so never broken.
    for (const path of ["/private/x", "/private/y", "/nofollowed", "/never"]) expect(site.requests).not.toContain(path);
    // The report builds on the same crawl: listed pages and exclusions as without it.
    const plain = await crawlSite(`${site.url}/`, limits, deps(hopWithRefused()), undefined, options({ link_report: false }));
    expect(plain.links).toBeUndefined();
    expect(result.entries).toEqual(plain.entries);
    expect(result.excluded).toEqual(plain.excluded);
    // crawlReport carries it as data.links only when it is there.
    expect(crawlReport({ ...result, urlCount: 1, exclusions: result }, new Date()).links).toEqual(result.links);
    expect("links" in crawlReport({ ...plain, urlCount: 1, exclusions: plain }, new Date())).toBe(false);
  });

  test("without sitemaps_from_robots there are no sitemap errors, and the sitemap's pages are not crawled", async () => {
    const site = serveLinkSite({ fillers: 3 });
    const result = await crawlSite(`${site.url}/`, limits, deps(hopWithRefused()), undefined, options({ sitemaps_from_robots: false }));
    const expected = site.expected("connection refused");
    expect(result.links).toEqual({ ...expected, sitemap_errors: [] });
    expect(site.requests).not.toContain("/orphan");
  });

  test("a site with more broken links than a list holds: 1,000 entries, the first by url, and truncated", async () => {
    const site = serveManyBroken(1_003);
    try {
      const result = await crawlSite(`${site.url}/`, { ...limits, maxPages: 1_100 }, deps(hopWithRefused()), undefined, options());
      const broken = result.links!.broken;
      expect(broken).toHaveLength(1_000);
      expect(broken[0]).toEqual({
        url: `${site.url}/broken/00000`,
        kind: "page",
        status: 404,
        error: "HTTP 404",
        referrers: [`${site.url}/`],
        referrer_count: 1,
      });
      expect(broken.at(-1)!.url).toBe(`${site.url}/broken/00999`);
      expect(result.links!.truncated).toBe(true);
      expect(result.links!.redirects).toEqual([]);
    } finally {
      site.stop();
    }
  });

  test("a chain longer than the crawl follows is broken (too many redirects); a redirect out of scope ends there", async () => {
    const routes: Record<string, Response | string> = {
      "/": '<a href="/c0">long</a> <a href="/out">out</a> <a href="/bad">bad</a>',
      "/bad": new Response(null, { status: 302, headers: { location: "http://[::1" } }),
    };
    for (let i = 0; i < 12; i++) routes[`/c${i}`] = new Response(null, { status: 301, headers: { location: `/c${i + 1}` } });
    routes["/c12"] = "<p>end";
    routes["/out"] = new Response(null, { status: 307, headers: { location: "https://elsewhere.example/x" } });
    const site = await serveSite(routes);
    try {
      const result = await crawlSite(`${site.url}/`, limits, deps(hopWithRefused()), undefined, options({ sitemaps_from_robots: false }));
      const u = (path: string) => `${site.url}${path}`;
      const home = { referrers: [u("/")], referrer_count: 1 };
      expect(result.links).toEqual({
        broken: [
          { url: u("/bad"), kind: "page", status: 302, error: "redirect to an invalid URL", ...home },
          { url: u("/c0"), kind: "page", status: null, error: "too many redirects", ...home },
        ],
        redirects: [
          { url: u("/c0"), status: 301, target: u("/c11"), hops: 11, ...home },
          { url: u("/out"), status: 307, target: "https://elsewhere.example/x", hops: 1, ...home },
        ],
        sitemap_errors: [],
        truncated: false,
      });
    } finally {
      await site.stop();
    }
  });

  test("memory: what a URL held is dropped once it answers fine", async () => {
    // 400 pages, each linking to the next 20 and home: 8,000 links, every one fine.
    const size = 400;
    const fetch: HopFetcher = async (url) => {
      if (url.pathname === "/robots.txt") return new Response("", { status: 404 });
      const i = url.pathname === "/" ? 0 : Number(url.pathname.slice(2));
      const links = Array.from({ length: 20 }, (_, d) => `<a href="/p${(i + d + 1) % size}">x</a>`).join("");
      return new Response(`<a href="/">home</a>${links}`, { headers: { "content-type": "text/html" } });
    };
    const state = new MemoryCrawlState({ linkReport: true });
    await runCrawl("http://site.test/", state, { ...limits, maxPages: size + 10 }, deps(fetch), { crawl: options() });
    const source = state.linkSource()!;
    expect(await fullLinkLists(source, limits)).toEqual({ broken: [], redirects: [], sitemap_errors: [], truncated: false });
    expect((source as unknown as { size: number }).size).toBe(0);
  });
});
