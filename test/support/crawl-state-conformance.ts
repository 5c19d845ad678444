// What every CrawlState must do for the engine, as tests any implementation can run: the memory
// one (test/crawler/state.test.ts) and the store-backed one of jobs.
import { describe, expect, test } from "bun:test";
import type { CrawlState } from "../../src/crawler/state.ts";
import {
  defaultCrawlLimits,
  defaultCrawlOptions,
  fullLinkLists,
  type LinkReport,
  type LinkSource,
  MemoryCrawlState,
  runCrawl,
  type CrawlLimits,
  type CrawlProgress,
  type HopFetcher,
} from "../../src/crawler/index.ts";

/**
 * A fresh state (for a crawl with link_report when asked), a way to open the same crawl's state
 * again as a new process would, and the link report's rows of a state once its crawl is over.
 */
export type OpenState = (options?: { linkReport?: boolean }) => Promise<{
  state: CrawlState;
  reopen: () => Promise<CrawlState>;
  links: (state: CrawlState) => Promise<LinkSource>;
}>;

const SITE = "http://site.test";

/**
 * A site of `size` pages, each linking to the next 5 (mod size) and to a redirect to the page 7
 * further on, with every 10th page noindex: links, redirects and exclusions all take part.
 */
function site(size: number, onRequest: (path: string) => Promise<void> | void = () => {}) {
  const requests: string[] = [];
  const fetch: HopFetcher = async (url) => {
    const path = url.pathname;
    requests.push(path);
    await onRequest(path);
    if (path === "/robots.txt") return new Response("User-agent: *\nDisallow: /private\n");
    const redirect = /^\/r(\d+)$/.exec(path);
    if (redirect) return new Response(null, { status: 301, headers: { location: `/p${(Number(redirect[1]) + 7) % size}` } });
    const page = path === "/" ? 0 : Number(/^\/p(\d+)$/.exec(path)?.[1] ?? NaN);
    if (!(page >= 0 && page < size)) return new Response("no", { status: 404 });
    const hrefs = [1, 2, 3, 4, 5].map((d) => `/p${(page + d) % size}`).concat(`/r${page}`, "/private/x");
    const meta = page % 10 === 3 ? '<meta name="robots" content="noindex">' : "";
    return new Response(`${meta}${hrefs.map((h) => `<a href="${h}">x</a>`).join("")}`, { headers: { "content-type": "text/html" } });
  };
  return { fetch, requests };
}

const deps = (fetch: HopFetcher) => ({ fetch, now: Date.now, userAgent: "genapi/1.2.3" });
const limits = (more: Partial<CrawlLimits> = {}): CrawlLimits => ({ ...defaultCrawlLimits, maxPages: 10_000, concurrency: 4, ...more });

async function listed(state: CrawlState): Promise<string[]> {
  const locs: string[] = [];
  for await (const entry of state.entries()) locs.push(entry.loc.slice(SITE.length));
  return locs;
}

/**
 * A site for the link report: page i links to the next 5 pages, to a redirect to the page 7 further
 * on, to one of 13 broken pages, and (nofollow) to the page 6 further on and to 3 broken pages no
 * followed link reaches; page 0 also to a redirect loop and a robots-disallowed page; pages 7, 17, ...
 * name /b0 canonical. Its sitemap
 * lists a fine page, a noindex one, a broken one, a redirect, an unlinked page and a disallowed one.
 */
function linkSite(size: number, onRequest: (path: string) => Promise<void> | void = () => {}) {
  const requests: string[] = [];
  const page = (body: string) => new Response(body, { headers: { "content-type": "text/html" } });
  const fetch: HopFetcher = async (url) => {
    const path = url.pathname;
    requests.push(path);
    await onRequest(path);
    if (path === "/robots.txt") return new Response(`User-agent: *\nDisallow: /private\nSitemap: ${SITE}/sitemap.xml\n`);
    if (path === "/sitemap.xml") {
      const locs = ["/p1", "/p3", "/b1", "/r2", "/orphan", "/private/z"].map((p) => `<url><loc>${SITE}${p}</loc></url>`).join("");
      return new Response(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs}</urlset>`);
    }
    if (path === "/orphan") return page("<p>only in the sitemap");
    if (path === "/loop-a") return new Response(null, { status: 301, headers: { location: "/loop-b" } });
    if (path === "/loop-b") return new Response(null, { status: 302, headers: { location: "/loop-a" } });
    const redirect = /^\/r(\d+)$/.exec(path);
    if (redirect) return new Response(null, { status: 301, headers: { location: `/p${(Number(redirect[1]) + 7) % size}` } });
    const i = path === "/" ? 0 : Number(/^\/p(\d+)$/.exec(path)?.[1] ?? NaN);
    if (!(i >= 0 && i < size)) return new Response("no", { status: 404 });
    const hrefs = [1, 2, 3, 4, 5].map((d) => `/p${(i + d) % size}`).concat(`/r${i}`, `/b${i % 13}`);
    if (i === 0) hrefs.push("/loop-a", "/private/x");
    // Pages 7, 17, ... name the broken /b0 canonical: not a link, so not among /b0's referrers.
    const meta = i % 10 === 3 ? '<meta name="robots" content="noindex">' : i % 10 === 7 ? '<link rel="canonical" href="/b0">' : "";
    const nofollow = [`/p${(i + 6) % size}`, `/b${100 + (i % 3)}`].map((h) => `<a rel="nofollow" href="${h}">n</a>`).join("");
    return page(`${meta}${hrefs.map((h) => `<a href="${h}">x</a>`).join("")}${nofollow}`);
  };
  return { fetch, requests };
}

const linkOptions = { ...defaultCrawlOptions(10_000), link_report: true, sitemaps_from_robots: true };

/** The memory state's report of the same site: the reference every state must match. */
async function referenceLinks(size: number): Promise<LinkReport> {
  const state = new MemoryCrawlState({ linkReport: true });
  await runCrawl(`${SITE}/`, state, limits(), deps(linkSite(size).fetch), { crawl: linkOptions });
  return fullLinkLists(state.linkSource()!, defaultCrawlLimits);
}

export function describeCrawlState(name: string, open: OpenState, options: { skip?: boolean } = {}): void {
  describe.skipIf(options.skip === true)(`CrawlState contract: ${name}`, () => {
    test("a fresh state has nothing to resume; a crawl fills it, entries sorted by loc", async () => {
      const { state } = await open();
      expect(await state.resume()).toBeNull();
      const run = await runCrawl(`${SITE}/`, state, limits(), deps(site(60).fetch));
      const locs = await listed(state);
      expect(locs).toEqual([...locs].sort());
      expect(run).toMatchObject({ url: `${SITE}/`, urlsListed: locs.length, truncated: false, stopped: null });
      expect(locs).toHaveLength(60 - 6 + 1); // p0..p59 less the 6 noindex ones, plus "/"
      const report = await state.report();
      expect(report.excluded).toMatchObject({ noindex: 6, redirect: 60, robots: 1 });
      // The state counts each page request once, as the engine does, however many run at once.
      expect((await state.resume())?.pagesCrawled).toBe(run.pagesCrawled);
    });

    test("stopped mid-crawl and resumed from a reopened state, it lists what an uninterrupted crawl lists", async () => {
      const whole = await open();
      const wholeSite = site(300);
      await runCrawl(`${SITE}/`, whole.state, limits(), deps(wholeSite.fetch));
      const expected = await listed(whole.state);

      const { state, reopen } = await open();
      const stop = new AbortController();
      let seen = 0;
      // Stop after 120 requests, with requests in flight and redirects half followed.
      const first = site(300, async () => {
        if (++seen === 120) stop.abort();
        if (seen >= 120) await Bun.sleep(5);
      });
      const stopped = await runCrawl(`${SITE}/`, state, limits(), deps(first.fetch), { signal: stop.signal });
      expect(stopped).toMatchObject({ stopped: "aborted", truncated: true });

      const again = await reopen();
      const resumed = await again.resume();
      expect(resumed).toMatchObject({ start: `${SITE}/` });
      const second = site(300);
      const run = await runCrawl(`${SITE}/`, again, limits(), deps(second.fetch));
      expect(run).toMatchObject({ stopped: null, truncated: false, urlsListed: expected.length });
      expect(await listed(again)).toEqual(expected);
      // The start page is not fetched again; only what was in flight is (robots.txt once more, too).
      expect(second.requests).not.toContain("/");
      expect(first.requests.length + second.requests.length).toBeLessThan(wholeSite.requests.length + 20);
    });

    test("link report: the lists of the memory state, referrers counted over every page", async () => {
      const { state, links } = await open({ linkReport: true });
      await runCrawl(`${SITE}/`, state, limits(), deps(linkSite(130).fetch), { crawl: linkOptions });
      const report = await fullLinkLists(await links(state), defaultCrawlLimits);
      expect(report).toEqual(await referenceLinks(130));
      // 130 pages: /b0 is linked from pages 0 (both / and /p0), 13, ..., 117: 11 pages; its 5 smallest referrers in code-unit order.
      expect(report.broken.find((b) => b.url === `${SITE}/b0`)).toEqual({
        url: `${SITE}/b0`,
        kind: "page",
        status: 404,
        error: "HTTP 404",
        referrers: [`${SITE}/`, `${SITE}/p0`, `${SITE}/p104`, `${SITE}/p117`, `${SITE}/p13`],
        referrer_count: 11,
      });
      expect(report.broken.filter((b) => b.url.startsWith(`${SITE}/b1`)).map((b) => b.url)).toEqual([
        `${SITE}/b1`,
        `${SITE}/b10`,
        `${SITE}/b11`,
        `${SITE}/b12`,
      ]);
      expect(report.redirects.find((r) => r.url === `${SITE}/loop-a`)).toMatchObject({ target: `${SITE}/loop-a`, hops: 2 });
      expect(report.sitemap_errors.map((e) => [e.url.slice(SITE.length), e.reason])).toEqual([
        ["/b1", "http_error"],
        ["/orphan", "not_linked"],
        ["/p3", "noindex"],
        ["/private/z", "robots"],
        ["/r2", "redirect"],
      ]);
    });

    test("link report: stopped mid-crawl and resumed from a reopened state, the same lists as an uninterrupted crawl", async () => {
      const expected = await referenceLinks(300);
      const { state, reopen, links } = await open({ linkReport: true });
      const stop = new AbortController();
      let seen = 0;
      const first = linkSite(300, async () => {
        if (++seen === 150) stop.abort();
        if (seen >= 150) await Bun.sleep(5);
      });
      const stopped = await runCrawl(`${SITE}/`, state, limits(), deps(first.fetch), { signal: stop.signal, crawl: linkOptions });
      expect(stopped.stopped).toBe("aborted");
      const again = await reopen();
      const run = await runCrawl(`${SITE}/`, again, limits(), deps(linkSite(300).fetch), { crawl: linkOptions });
      expect(run.stopped).toBeNull();
      expect(await fullLinkLists(await links(again), defaultCrawlLimits)).toEqual(expected);
    });

    test("an invalid link is counted once per crawl, across pages and a resume, and given to the state by a short key", async () => {
      // Page n links to pages n+1..n+3, to a long link of its own, to one every page shares, and to
      // one the URL parser refuses: 1 + size + 1 distinct invalid links, whatever the order.
      const size = 80;
      const long = (tag: string) => `/${tag}/${"z".repeat(2_100)}`;
      const invalidSite = (onRequest: () => Promise<void> | void = () => {}) => {
        const fetch: HopFetcher = async (url) => {
          await onRequest();
          const page = url.pathname === "/" ? 0 : Number(/^\/p(\d+)$/.exec(url.pathname)?.[1] ?? NaN);
          if (!(page >= 0 && page < size)) return new Response("no", { status: 404 });
          const hrefs = [1, 2, 3]
            .map((d) => `/p${Math.min(size - 1, page + d)}`)
            .concat(long("shared"), long(`own${page}`), "http://exa mple.com/");
          return new Response(hrefs.map((h) => `<a href="${h}">x</a>`).join(""), { headers: { "content-type": "text/html" } });
        };
        return fetch;
      };
      const longest = (state: CrawlState) => {
        const seen = { max: 0 };
        const record = state.record.bind(state);
        state.record = (page) => {
          for (const link of page.links) seen.max = Math.max(seen.max, link.url.length);
          for (const url of page.seen) seen.max = Math.max(seen.max, url.length);
          return record(page);
        };
        return seen;
      };

      const whole = await open();
      const wholeLongest = longest(whole.state);
      await runCrawl(`${SITE}/`, whole.state, limits(), deps(invalidSite()));
      const expected = await whole.state.report();
      expect(expected.excluded.invalid).toBe(size + 2);
      expect(expected.excluded_examples.invalid).toHaveLength(5);
      expect(expected.excluded_examples.invalid.every((e) => e.length <= 200)).toBe(true);
      expect(wholeLongest.max).toBeLessThanOrEqual(2_048);

      const { state, reopen } = await open();
      const stop = new AbortController();
      let requests = 0;
      await runCrawl(`${SITE}/`, state, limits(), deps(invalidSite(() => void (++requests === 30 && stop.abort()))), {
        signal: stop.signal,
      });
      const again = await reopen();
      await again.resume();
      await runCrawl(`${SITE}/`, again, limits(), deps(invalidSite()));
      const report = await again.report();
      expect(report.excluded.invalid).toBe(expected.excluded.invalid);
      expect(report.excluded_examples.invalid).toEqual(expected.excluded_examples.invalid);
    });

    test("progress is reported while the crawl runs and once at its end", async () => {
      const { state } = await open();
      const seen: CrawlProgress[] = [];
      const slow = site(40, () => Bun.sleep(2));
      await runCrawl(`${SITE}/`, state, limits({ concurrency: 2 }), deps(slow.fetch), {
        onProgress: (p) => seen.push(p),
        progressEveryMs: 10,
      });
      expect(seen.length).toBeGreaterThan(2);
      const last = seen.at(-1)!;
      expect(last).toMatchObject({ pagesCrawled: slow.requests.length - 1, pagesQueued: 0, urlsListed: 40 - 4 + 1 });
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.pagesCrawled).toBeGreaterThanOrEqual(seen[i - 1]!.pagesCrawled);
    });
  });
}
