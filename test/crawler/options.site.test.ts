// The crawl options and the exclusion report against fixture sites served on loopback, through Bun's
// real fetch: exact listed sets, exact reports, the requests each option allows, and every sitemap
// validated against the sitemaps.org schema (with the image and xhtml schemas when those are on).
import { describe, expect, test } from "bun:test";
import { defaultCrawlOptions, type CrawlOptions } from "../../src/crawler/options.ts";
import { crawlSite, defaultCrawlLimits, type CrawlLimits, type CrawlResult, type HopFetcher } from "../../src/crawler/index.ts";
import { NothingListedError } from "../../src/crawler/errors.ts";
import { sitesStoppedAfterEach, type Route, type Site } from "../support/site.ts";
import { validateSitemap } from "../support/xmllint.ts";

const hop: HopFetcher = (url, init) => fetch(url, { ...init, redirect: "manual" });
const serve = sitesStoppedAfterEach();

/** Crawls the site with `options` and checks its sitemap against the schemas. */
async function crawl(site: Site, options: Partial<CrawlOptions> = {}, limits: Partial<CrawlLimits> = {}, path = "/"): Promise<CrawlResult> {
  const all = { ...defaultCrawlLimits, ...limits };
  const result = await crawlSite(`${site.url}${path}`, all, { fetch: hop, now: Date.now, userAgent: "genapi/0.1.0" }, undefined, {
    ...defaultCrawlOptions(all.maxPages),
    ...options,
  });
  expect(await validateSitemap(result.sitemap)).toEqual({ valid: true, errors: [] });
  return result;
}

const links = (...hrefs: string[]) => hrefs.map((h) => `<a href="${h}">${h}</a>`).join("\n");
const redirect = (to: string) => new Response(null, { status: 301, headers: { location: to } });
const rel = (site: Site, urls: string[]) => urls.map((u) => u.replace(site.url, ""));
const locs = (site: Site, result: CrawlResult) =>
  rel(
    site,
    result.entries.map((e) => e.loc),
  );
const requested = (site: Site) => rel(site, site.requests).sort();
const examples = (site: Site, result: CrawlResult) =>
  Object.fromEntries(Object.entries(result.excluded_examples).map(([reason, urls]) => [reason, rel(site, urls).sort()]));
const ZERO = { robots: 0, noindex: 0, canonical: 0, redirect: 0, not_html: 0, http_error: 0, failed: 0, filtered: 0, invalid: 0 };
const NONE = { robots: [], noindex: [], canonical: [], redirect: [], not_html: [], http_error: [], failed: [], filtered: [], invalid: [] };

describe("the exclusion report", () => {
  test("one URL per reason: each counted once, named as an example, never listed", async () => {
    const site = await serve({
      "/robots.txt": new Response("User-agent: *\nDisallow: /blocked\n"),
      "/": links(
        "/ok",
        "/blocked",
        "/blocked",
        "/noindex",
        "/canon",
        "/moved",
        "/image.png",
        "/missing",
        "/broken",
        "/big",
        "/ok",
        "http://exa mple.com/",
      ),
      "/ok": links("/", "/moved", "/noindex"),
      "/blocked": "<p>never fetched",
      "/noindex": `<meta name="robots" content="noindex">`,
      "/canon": `<link rel="canonical" href="/ok">`,
      "/moved": redirect("/moved-here"),
      "/moved-here": "<p>target",
      "/image.png": new Response("png", { headers: { "content-type": "image/png" } }),
      "/broken": new Response("oops", { status: 500, headers: { "content-type": "text/html" } }),
      "/big": `<p>${"x".repeat(100_000)}`,
    });
    const result = await crawl(site, {}, { maxBodyBytes: 10_000 });
    expect(locs(site, result)).toEqual(["/", "/moved-here", "/ok"]);
    expect(result.excluded).toEqual({
      robots: 1,
      noindex: 1,
      canonical: 1,
      redirect: 1,
      not_html: 1,
      http_error: 2,
      failed: 1,
      filtered: 0,
      invalid: 1,
    });
    expect(examples(site, result)).toEqual({
      ...NONE,
      robots: ["/blocked"],
      noindex: ["/noindex"],
      canonical: ["/canon"],
      redirect: ["/moved"],
      not_html: ["/image.png"],
      http_error: ["/broken", "/missing"],
      failed: ["/big"],
      invalid: ["http://exa mple.com/"],
    });
    expect(requested(site)).not.toContain("/blocked");
  });

  test("at most 5 examples per reason, every reason counted", async () => {
    const missing = Array.from({ length: 8 }, (_, i) => `/gone-${i}`);
    const site = await serve({ "/": links(...missing) });
    const result = await crawl(site);
    expect(result.excluded).toEqual({ ...ZERO, http_error: 8 });
    expect(result.excluded_examples.http_error).toHaveLength(5);
    expect(result.excluded_examples.robots).toEqual([]);
  });

  test("a crawl that lists nothing answers why: the start page is noindex", async () => {
    const site = await serve({
      "/": `<meta name="robots" content="noindex">${links("/a")}`,
      "/a": `<meta name="robots" content="noindex">`,
    });
    const error = await crawl(site).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NothingListedError);
    expect((error as NothingListedError).reason).toBe("the start page is noindex");
  });
});

describe("include and exclude", () => {
  const routes = (): Record<string, Route> => ({
    "/": links("/about", "/blog/", "/private/", "/files/report.pdf", "/files/notes.txt"),
    "/about": links("/blog/only-from-about"),
    "/blog/": links("/blog/post-1", "/blog/post-2.html"),
    "/blog/post-1": "<p>1",
    "/blog/post-2.html": "<p>2",
    "/blog/only-from-about": "<p>a",
    "/private/": links("/blog/only-from-private", "/private/secret"),
    "/private/secret": "<p>s",
    "/blog/only-from-private": "<p>p",
    "/files/report.pdf": "<p>pdf as html",
    "/files/notes.txt": "<p>notes as html",
  });

  test("exclude: matching URLs are never requested, so nothing only they link to is found", async () => {
    const site = await serve(routes());
    const result = await crawl(site, { exclude: ["/private", "/*.pdf$"] });
    expect(locs(site, result)).toEqual([
      "/",
      "/about",
      "/blog/",
      "/blog/only-from-about",
      "/blog/post-1",
      "/blog/post-2.html",
      "/files/notes.txt",
    ]);
    expect(requested(site)).toEqual([
      "/",
      "/about",
      "/blog/",
      "/blog/only-from-about",
      "/blog/post-1",
      "/blog/post-2.html",
      "/files/notes.txt",
      "/robots.txt",
    ]);
    expect(result.excluded).toEqual({ ...ZERO, filtered: 2 });
    expect(examples(site, result).filtered).toEqual(["/files/report.pdf", "/private/"]);
  });

  test("include: only matching URLs are listed; the others are still crawled for links", async () => {
    const site = await serve(routes());
    const result = await crawl(site, { include: ["/blog/post", "/blog/only-"] });
    expect(locs(site, result)).toEqual(["/blog/only-from-about", "/blog/only-from-private", "/blog/post-1", "/blog/post-2.html"]);
    expect(result.excluded.filtered).toBe(7);
    expect(requested(site)).toContain("/private/secret");
  });

  test("both, with $ and *: exclude wins over include", async () => {
    const site = await serve(routes());
    const result = await crawl(site, { include: ["/blog/*.html$", "/files/"], exclude: ["/files/*.pdf"] });
    expect(locs(site, result)).toEqual(["/blog/post-2.html", "/files/notes.txt"]);
    expect(requested(site)).not.toContain("/files/report.pdf");
  });

  test("an excluded start URL: nothing is requested, 422 with the reason", async () => {
    const site = await serve(routes());
    const error = await crawl(site, { exclude: ["/$"] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NothingListedError);
    expect((error as NothingListedError).reason).toBe("the start URL matches exclude");
    expect(site.requests).toEqual([]);
  });
});

describe("ignore_query_params", () => {
  test("named parameters are removed before a URL is queued, fetched or listed; [*] drops every query", async () => {
    const site = await serve({
      "/": links("/a?utm_source=x", "/a?sid=2&utm_medium=y", "/a", "/b?id=1&utm_campaign=z", "/b?utm_campaign=z&id=1", "/c?sid=1&page=2"),
      "/a": `<link rel="canonical" href="/a?utm_source=feed">`,
      "/b": "<p>b",
      "/c": "<p>c",
    });
    const result = await crawl(site, { ignore_query_params: ["utm_*", "sid"] });
    expect(locs(site, result)).toEqual(["/", "/a", "/b?id=1", "/c?page=2"]);
    expect(requested(site)).toEqual(["/", "/a", "/b?id=1", "/c?page=2", "/robots.txt"]);
    expect(result.excluded).toEqual(ZERO);

    site.requests.length = 0;
    const all = await crawl(site, { ignore_query_params: ["*"] });
    expect(locs(site, all)).toEqual(["/", "/a", "/b", "/c"]);
  });

  test("a redirect to a tracking URL lands on the stripped one", async () => {
    const site = await serve({ "/": links("/go"), "/go": redirect("/landing?utm_source=go"), "/landing": "<p>l" });
    const result = await crawl(site, { ignore_query_params: ["utm_source"] });
    expect(locs(site, result)).toEqual(["/", "/landing"]);
    expect(requested(site)).toEqual(["/", "/go", "/landing", "/robots.txt"]);
  });
});

describe("max_depth and max_pages", () => {
  const chain = () => ({ "/": links("/d1"), "/d1": links("/d2"), "/d2": links("/d3"), "/d3": "<p>3" });

  test("max_depth: links followed away from the start page (depth 0); deeper URLs are filtered, never fetched", async () => {
    const site = await serve(chain());
    const one = await crawl(site, { max_depth: 1 });
    expect(locs(site, one)).toEqual(["/", "/d1"]);
    expect(requested(site)).toEqual(["/", "/d1", "/robots.txt"]);
    expect(one.excluded).toEqual({ ...ZERO, filtered: 1 });
    expect(examples(site, one).filtered).toEqual(["/d2"]);

    site.requests.length = 0;
    const zero = await crawl(site, { max_depth: 0 });
    expect(locs(site, zero)).toEqual(["/"]);
    expect(requested(site)).toEqual(["/", "/robots.txt"]);
  });

  test("a redirect keeps its depth; the limit is the options' max_pages when lower than the server's", async () => {
    const site = await serve({ ...chain(), "/": links("/r"), "/r": redirect("/d1") });
    expect(locs(site, await crawl(site, { max_depth: 1 }))).toEqual(["/", "/d1"]);
    site.requests.length = 0;
    const capped = await crawl(site, { max_pages: 2 });
    expect(capped.pagesCrawled).toBe(2);
    expect(capped.truncated).toBe(true);
    expect(locs(site, capped)).toEqual(["/"]);
  });
});

describe("sitemaps_from_robots", () => {
  test("orphan pages named by robots.txt's sitemaps are fetched and judged like any page", async () => {
    let site: Site;
    site = await serve({
      "/robots.txt": () =>
        new Response(`User-agent: *\nDisallow: /blocked\nSitemap: ${site.url}/sitemap_index.xml\nSitemap: http://other.test/sitemap.xml\n`),
      "/": links("/linked"),
      "/linked": "<p>linked",
      "/sitemap_index.xml": () =>
        new Response(
          `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${site.url}/pages.xml.gz</loc></sitemap></sitemapindex>`,
        ),
      "/pages.xml.gz": () =>
        new Response(
          Bun.gzipSync(
            new TextEncoder().encode(
              `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${["/orphan", "/linked", "/noindexed", "/blocked", "/gone"]
                .map((p) => `<url><loc>${site.url}${p}</loc></url>`)
                .join("")}<url><loc>http://other.test/x</loc></url></urlset>`,
            ),
          ),
        ),
      "/orphan": "<p>orphan",
      "/noindexed": `<meta name="robots" content="noindex">`,
      "/blocked": "<p>b",
    });
    const result = await crawl(site, { sitemaps_from_robots: true });
    expect(locs(site, result)).toEqual(["/", "/linked", "/orphan"]);
    expect(result.excluded).toEqual({ ...ZERO, robots: 1, noindex: 1, http_error: 1 });
    expect(requested(site)).toEqual([
      "/",
      "/gone",
      "/linked",
      "/noindexed",
      "/orphan",
      "/pages.xml.gz",
      "/robots.txt",
      "/sitemap_index.xml",
    ]);

    site.requests.length = 0;
    expect(locs(site, await crawl(site))).toEqual(["/", "/linked"]);
    expect(requested(site)).not.toContain("/sitemap_index.xml");
  });

  test("at most the page budget of sitemap URLs is queued", async () => {
    let site: Site;
    site = await serve({
      "/robots.txt": () => new Response(`Sitemap: ${site.url}/sitemap.xml\n`),
      "/": "<p>home",
      "/sitemap.xml": () =>
        new Response(
          `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Array.from({ length: 50 }, (_, i) => `<url><loc>${site.url}/p${i}</loc></url>`).join("")}</urlset>`,
        ),
      "/p*": "<p>p",
    });
    const result = await crawl(site, { sitemaps_from_robots: true, max_pages: 5 });
    expect(result.pagesCrawled).toBe(5);
    expect(result.truncated).toBe(true);
    expect(rel(site, site.requests).filter((p) => p.startsWith("/p"))).toHaveLength(4);
  });
});

describe("alternates and images", () => {
  const routes = (): Record<string, Route> => ({
    "/": `<link rel="alternate" hreflang="en" href="/"><link rel="alternate" hreflang="fr" href="/fr/">
      <link rel="alternate" hreflang="x-default" href="/"><img src="/logo.png"><img src="https://cdn.test/hero.jpg?w=1&h=2">${links("/fr/")}`,
    "/fr/": `<link rel="alternate" hreflang="en" href="/"><link rel="alternate" hreflang="fr" href="/fr/">`,
  });

  test("both on: xhtml:link and image:image entries, namespaces declared, valid against the extension schemas", async () => {
    const site = await serve(routes());
    const result = await crawl(site, { alternates: true, images: true });
    const u = site.url;
    expect(result.sitemap).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">' +
        `<url><loc>${u}/</loc><xhtml:link rel="alternate" hreflang="en" href="${u}/"/><xhtml:link rel="alternate" hreflang="fr" href="${u}/fr/"/>` +
        `<xhtml:link rel="alternate" hreflang="x-default" href="${u}/"/>` +
        `<image:image><image:loc>${u}/logo.png</image:loc></image:image><image:image><image:loc>https://cdn.test/hero.jpg?w=1&amp;h=2</image:loc></image:image></url>` +
        `<url><loc>${u}/fr/</loc><xhtml:link rel="alternate" hreflang="en" href="${u}/"/><xhtml:link rel="alternate" hreflang="fr" href="${u}/fr/"/></url>` +
        "</urlset>\n",
    );
    // Images are listed, never fetched.
    expect(requested(site)).toEqual(["/", "/fr/", "/robots.txt"]);
  });

  test("each alone, and neither: only what was asked for, only its namespace", async () => {
    const site = await serve(routes());
    const alternates = await crawl(site, { alternates: true });
    expect(alternates.sitemap).toContain('xmlns:xhtml="http://www.w3.org/1999/xhtml">');
    expect(alternates.sitemap).not.toContain("image");
    const images = await crawl(site, { images: true });
    expect(images.sitemap).toContain('xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">');
    expect(images.sitemap).not.toContain("xhtml");
    const plain = await crawl(site);
    expect(plain.sitemap).not.toContain("xhtml");
    expect(plain.sitemap).not.toContain("image");
  });
});

describe("staging options", () => {
  test("sitemaps_from_robots reads /sitemap.xml when robots.txt names no sitemap, and only then", async () => {
    const sitemap = (site: Site, ...paths: string[]) =>
      new Response(
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${paths.map((p) => `<url><loc>${site.url}${p}</loc></url>`).join("")}</urlset>`,
        { headers: { "content-type": "application/xml" } },
      );
    const routes: Record<string, Route> = {
      "/": "<p>no links",
      "/orphan": "<p>only in /sitemap.xml",
      "/named": "<p>only in the named one",
    };
    const unnamed = await serve({ ...routes, "/sitemap.xml": () => sitemap(unnamed, "/orphan") });
    expect(locs(unnamed, await crawl(unnamed, { sitemaps_from_robots: true }))).toEqual(["/", "/orphan"]);
    expect(locs(unnamed, await crawl(unnamed))).toEqual(["/"]);
    const named = await serve({
      ...routes,
      "/robots.txt": (req) => new Response(`Sitemap: ${new URL(req.url).origin}/other.xml\n`),
      "/other.xml": () => sitemap(named, "/named"),
      "/sitemap.xml": () => sitemap(named, "/orphan"),
    });
    expect(locs(named, await crawl(named, { sitemaps_from_robots: true }))).toEqual(["/", "/named"]);
    expect(requested(named)).not.toContain("/sitemap.xml");
  });

  test("robots ignore: a robots.txt that answers 5xx keeps nothing out; obeyed, it fails the crawl", async () => {
    const site = await serve({ "/robots.txt": new Response("down", { status: 503 }), "/": links("/a"), "/a": "<p>a" });
    expect(locs(site, await crawl(site, { robots: "ignore" }))).toEqual(["/", "/a"]);
    await expect(crawl(site)).rejects.toThrow("robots.txt");
  });

  test("noindex ignore lists noindex pages and still obeys nofollow", async () => {
    const site = await serve({
      "/": links("/meta", "/header"),
      "/meta": `<meta name="robots" content="noindex, nofollow">${links("/hidden")}`,
      "/header": () => new Response(links("/b"), { headers: { "content-type": "text/html", "x-robots-tag": "noindex" } }),
      "/b": "<p>b",
      "/hidden": "<p>never fetched",
    });
    const result = await crawl(site, { noindex: "ignore" });
    expect(locs(site, result)).toEqual(["/", "/b", "/header", "/meta"]);
    expect(result.excluded.noindex).toBe(0);
    expect(requested(site)).not.toContain("/hidden");
  });

  test("public_origin: locs, hreflang and image URLs of the crawled origin move to it; other origins' stay", async () => {
    const site = await serve({
      "/": `<link rel="alternate" hreflang="de" href="/de"><link rel="alternate" hreflang="fr" href="https://fr.example.org/"><img src="/a.png"><img src="https://img.example.net/b.png">${links("/de")}`,
      "/de": `<link rel="alternate" hreflang="en" href="/">`,
    });
    const result = await crawl(site, { public_origin: "https://www.example.com", alternates: true, images: true });
    expect(result.url).toBe(`${site.url}/`);
    expect(result.sitemap).toContain(
      '<url><loc>https://www.example.com/</loc><xhtml:link rel="alternate" hreflang="de" href="https://www.example.com/de"/><xhtml:link rel="alternate" hreflang="fr" href="https://fr.example.org/"/><image:image><image:loc>https://www.example.com/a.png</image:loc></image:image><image:image><image:loc>https://img.example.net/b.png</image:loc></image:image></url>',
    );
    expect(result.sitemap).not.toContain(site.url);
  });
});
