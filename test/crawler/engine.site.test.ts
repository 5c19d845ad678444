// The crawler against fixture websites served on loopback, through Bun's real fetch.
import { describe, expect, test } from "bun:test";
import { crawlSite, defaultCrawlLimits, type CrawlLimits, type HopFetcher } from "../../src/crawler/index.ts";
import { CrawlFailedError } from "../../src/crawler/errors.ts";
import { serveSite, sitesStoppedAfterEach, type Site } from "../support/site.ts";
import { validateSitemap } from "../support/xmllint.ts";

/** One hop through global fetch: what src/crawler/net/guarded-fetch.ts does, minus the address check. */
const hop: HopFetcher = (url, init) => fetch(url, { ...init, redirect: "manual" });

const serve = sitesStoppedAfterEach();

/** Crawls the site; every sitemap it produces must validate against the sitemaps.org schema. */
const crawl = async (site: Site, limits: Partial<CrawlLimits> = {}, path = "/") => {
  const result = await crawlSite(
    `${site.url}${path}`,
    { ...defaultCrawlLimits, ...limits },
    { fetch: hop, now: Date.now, userAgent: "genapi/0.1.0" },
  );
  expect(await validateSitemap(result.sitemap)).toEqual({ valid: true, errors: [] });
  return result;
};

const links = (...hrefs: string[]) => hrefs.map((h) => `<a href="${h}">${h}</a>`).join("\n");
const redirect = (to: string, status = 301) => new Response(null, { status, headers: { location: to } });
/** Listed URLs and requested paths, relative to the site. */
const locs = (site: Site, entries: { loc: string }[]) => entries.map((e) => e.loc.replace(site.url, ""));
const requested = (site: Site) => site.requests.map((r) => r.replace(site.url, "")).sort();

async function expectCrawlFailure(crawling: Promise<unknown>, reason: string) {
  const err = await crawling.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CrawlFailedError);
  expect((err as CrawlFailedError).reason).toBe(reason);
}

describe("robots.txt", () => {
  test("wildcards, $ and Allow overrides in the genapi group decide what is fetched and listed", async () => {
    const robots = [
      "User-agent: *",
      "Disallow: /",
      "",
      "User-agent: genapi",
      "Disallow: /private",
      "Allow: /private/open$",
      "Disallow: /*.pdf$",
      "Disallow: /docs/",
      "Allow: /docs/public",
    ].join("\n");
    const pages = [
      "/private/secret",
      "/private/open",
      "/private/open/deeper",
      "/report.pdf",
      "/report.pdf?download",
      "/docs/guide",
      "/docs/public/intro",
      "/public",
    ];
    const site = await serve({
      "/robots.txt": new Response(robots),
      "/": links(...pages),
      ...Object.fromEntries(pages.map((p) => [p, "<p>page"])),
    });
    const result = await crawl(site);
    const allowed = ["/", "/docs/public/intro", "/private/open", "/public", "/report.pdf?download"];
    expect(locs(site, result.entries)).toEqual(allowed);
    expect(requested(site)).toEqual([...allowed, "/robots.txt"].sort());
    expect(result.pagesCrawled).toBe(5);
  });

  test("404: everything is allowed", async () => {
    const site = await serve({ "/": links("/private"), "/private": "<p>p" });
    expect(locs(site, (await crawl(site)).entries)).toEqual(["/", "/private"]);
  });

  test("503: the whole site is disallowed, nothing else is fetched", async () => {
    const site = await serve({ "/robots.txt": new Response("busy", { status: 503 }), "/": "<p>home" });
    await expectCrawlFailure(crawl(site), "robots.txt unreachable (HTTP 503)");
    expect(requested(site)).toEqual(["/robots.txt"]);
  });

  test("disallowing the start URL fails the crawl", async () => {
    const site = await serve({ "/robots.txt": new Response("User-agent: genapi\nDisallow: /$\n"), "/": "<p>home" });
    await expectCrawlFailure(crawl(site), "robots.txt disallows it");
    expect(requested(site)).toEqual(["/robots.txt"]);
  });
});

describe("indexing directives and canonical URLs", () => {
  test("noindex, nofollow and rel=canonical decide the listed set", async () => {
    let site: Site;
    site = await serve({
      "/": links(
        "/noindex-meta",
        "/noindex-header",
        "/noindex-for-us",
        "/noindex-for-others",
        "/nofollow-meta",
        "/rel",
        "/canon-self",
        "/canon-other",
        "/canon-out",
      ),
      "/noindex-meta": `<meta name="robots" content="noindex">${links("/from-noindex")}`,
      "/noindex-header": new Response("<p>x", { headers: { "content-type": "text/html", "x-robots-tag": "noindex" } }),
      "/noindex-for-us": new Response("<p>x", { headers: { "content-type": "text/html", "x-robots-tag": "genapi: noindex" } }),
      "/noindex-for-others": new Response("<p>x", { headers: { "content-type": "text/html", "x-robots-tag": "otherbot: noindex" } }),
      "/nofollow-meta": `<meta name="robots" content="nofollow">${links("/only-from-nofollow")}`,
      "/rel": `<a href="/only-from-rel" rel="nofollow">x</a>${links("/plain")}`,
      "/canon-self": () =>
        new Response(`<link rel="canonical" href="${site.url}/canon-self#top">`, { headers: { "content-type": "text/html" } }),
      "/canon-other": `<link rel="canonical" href="/canon-target">`,
      "/canon-out": () =>
        new Response(`<link rel="canonical" href="http://localhost:${site.port}/canon-out">`, { headers: { "content-type": "text/html" } }),
      "/canon-target": "<p>target",
      "/from-noindex": "<p>x",
      "/only-from-nofollow": "<p>x",
      "/only-from-rel": "<p>x",
      "/plain": "<p>x",
    });
    const result = await crawl(site);
    expect(locs(site, result.entries)).toEqual([
      "/",
      "/canon-self",
      "/canon-target",
      "/from-noindex",
      "/nofollow-meta",
      "/noindex-for-others",
      "/plain",
      "/rel",
    ]);
    expect(requested(site)).not.toContain("/only-from-nofollow");
    expect(requested(site)).not.toContain("/only-from-rel");
    expect(site.requests.every((r) => r.startsWith(site.url))).toBe(true);
    expect(result.truncated).toBe(false);
  });
});

describe("links, redirects and scope", () => {
  test("resolves every kind of link, stays on the origin and fetches each page once", async () => {
    let site: Site;
    site = await serve({
      "/": () =>
        new Response(
          links(
            "/r1",
            "/loop1",
            "/out-redirect",
            `//127.0.0.1:${site.port}/proto`,
            `http://localhost:${site.port}/other-host`,
            `https://127.0.0.1:${site.port}/other-scheme`,
            "/q?a=1&amp;b=2",
            "/café",
            "/caf%c3%a9",
            "/%7Euser",
            "/~user#bio",
            "/image.png",
            "/missing",
            "/broken",
            "/based/",
            "mailto:someone@example.com",
            "javascript:void(0)",
          ),
          { headers: { "content-type": "text/html" } },
        ),
      "/r1": redirect("/r2"),
      "/r2": redirect("/final", 302),
      "/final": "<p>final",
      "/loop1": redirect("/loop2"),
      "/loop2": redirect("/loop1", 307),
      "/out-redirect": () => redirect(`http://localhost:${site.port}/elsewhere`),
      "/proto": "<p>proto",
      "/q": "<p>query",
      "/caf%C3%A9": "<p>café",
      "/~user": "<p>user",
      "/image.png": new Response(new Uint8Array([137, 80, 78, 71]), { headers: { "content-type": "image/png" } }),
      "/broken": new Response("<p>oops", { status: 500, headers: { "content-type": "text/html" } }),
      "/based/": `<base href="/sub/">${links("leaf")}`,
      "/sub/leaf": "<p>leaf",
    });
    const result = await crawl(site);
    expect(locs(site, result.entries)).toEqual(["/", "/based/", "/caf%C3%A9", "/final", "/proto", "/q?a=1&b=2", "/sub/leaf", "/~user"]);
    // Another host name (or scheme) on the same server is out of scope: never requested.
    expect(site.requests.filter((r) => !r.startsWith(`${site.url}/`))).toEqual([]);
    const paths = requested(site);
    expect(paths).toEqual([...new Set(paths)]);
    expect(paths).toEqual(
      [
        "/",
        "/based/",
        "/broken",
        "/caf%C3%A9",
        "/final",
        "/image.png",
        "/loop1",
        "/loop2",
        "/missing",
        "/out-redirect",
        "/proto",
        "/q?a=1&b=2",
        "/r1",
        "/r2",
        "/robots.txt",
        "/sub/leaf",
        "/~user",
      ].sort(),
    );
    expect(result.pagesCrawled).toBe(paths.length - 1);
    expect(result.truncated).toBe(false);
  });

  test("lastmod comes from Last-Modified when the page gives no date of its own", async () => {
    const site = await serve({
      "/": new Response(links("/dated"), { headers: { "content-type": "text/html" } }),
      "/dated": new Response("<p>x", { headers: { "content-type": "text/html", "last-modified": "Mon, 02 Mar 2026 09:30:00 GMT" } }),
    });
    expect((await crawl(site)).entries).toEqual([{ loc: `${site.url}/` }, { loc: `${site.url}/dated`, lastmod: "2026-03-02T09:30:00Z" }]);
  });
});

describe("limits", () => {
  test("a calendar-style infinite trap is stopped by the page cap", async () => {
    const site = await serve({
      "/": links("/calendar?day=0"),
      "/calendar": (req) => {
        const day = Number(new URL(req.url).searchParams.get("day"));
        return new Response(links(`/calendar?day=${day + 1}`, `/calendar?day=${day - 1}`), { headers: { "content-type": "text/html" } });
      },
    });
    const result = await crawl(site, { maxPages: 25 });
    expect(result.pagesCrawled).toBe(25);
    expect(result.truncated).toBe(true);
    expect(result.entries).toHaveLength(25);
    expect(site.requests).toHaveLength(26);
  });

  test("a page that never finishes is stopped by the time budget", async () => {
    const site = await serve({
      "/": links("/fast", "/slow"),
      "/fast": "<p>fast",
      "/slow": () =>
        new Response(
          new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode("<p>start")), pull: () => new Promise(() => {}) }),
          {
            headers: { "content-type": "text/html" },
          },
        ),
    });
    const result = await crawl(site, { timeoutMs: 300 });
    expect(locs(site, result.entries)).toEqual(["/", "/fast"]);
    expect(result.truncated).toBe(true);
  });

  test("an oversized page, gzip bomb included, is cut by the size cap and skipped", async () => {
    const bomb = Bun.gzipSync(new TextEncoder().encode(`${links("/behind-bomb")}${" ".repeat(8 * 1024 * 1024)}`));
    const site = await serve({
      "/": links("/big", "/bomb", "/small"),
      "/big": `${links("/behind-big")}${"<p>filler</p>".repeat(20_000)}`,
      "/bomb": new Response(bomb, { headers: { "content-type": "text/html", "content-encoding": "gzip" } }),
      "/small": "<p>small",
      "/behind-big": "<p>x",
      "/behind-bomb": "<p>x",
    });
    const result = await crawl(site, { maxBodyBytes: 64 * 1024 });
    expect(locs(site, result.entries)).toEqual(["/", "/small"]);
    expect(result.truncated).toBe(true);
    expect(requested(site)).toEqual(["/", "/big", "/bomb", "/robots.txt", "/small"]);
  });
});

describe("a start page that cannot be crawled", () => {
  test("404", async () => {
    await expectCrawlFailure(crawl(await serve({})), "HTTP 404");
  });

  test("not HTML", async () => {
    const site = await serve({ "/logo": new Response("png", { headers: { "content-type": "image/png" } }) });
    await expectCrawlFailure(crawl(site, {}, "/logo"), "not an HTML page (image/png)");
  });

  test("a refused port", async () => {
    const site = await serveSite({});
    await site.stop();
    await expectCrawlFailure(crawl(site), "connection refused");
  });

  test("a timeout", async () => {
    const site = await serve({ "/": () => new Promise<Response>(() => {}) });
    await expectCrawlFailure(crawl(site, { requestTimeoutMs: 200 }), "timed out");
  });

  test("a redirect loop", async () => {
    const site = await serve({ "/": redirect("/a"), "/a": redirect("/") });
    await expectCrawlFailure(crawl(site), "redirect loop");
  });
});
