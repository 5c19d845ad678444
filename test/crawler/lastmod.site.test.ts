// A page's <lastmod> in a one-shot crawl, against a site served on loopback through Bun's real
// fetch: the page's article:modified_time, then its JSON-LD dateModified, then Last-Modified; a date
// in the future or a Last-Modified within 60 s of the answer's Date is not used, and a page with no
// plausible date has no <lastmod>. With `fingerprint`, each entry carries the page's fingerprint.
import { describe, expect, test } from "bun:test";
import { defaultCrawlOptions, type CrawlOptions } from "../../src/crawler/options.ts";
import { crawlSite, defaultCrawlLimits, type HopFetcher, NO_HISTORY, runCrawl } from "../../src/crawler/index.ts";
import { RememberingState } from "../support/remembering-state.ts";
import { sitesStoppedAfterEach, type Site } from "../support/site.ts";
import { validateSitemap } from "../support/xmllint.ts";

const hop: HopFetcher = (url, init) => fetch(url, { ...init, redirect: "manual" });
const serve = sitesStoppedAfterEach();
const deps = { fetch: hop, now: Date.now, userAgent: "genapi/0.1.0" };

async function entries(site: Site, options: Partial<CrawlOptions> = {}): Promise<Record<string, string | undefined>> {
  const result = await crawlSite(`${site.url}/`, defaultCrawlLimits, deps, undefined, {
    ...defaultCrawlOptions(defaultCrawlLimits.maxPages),
    ...options,
  });
  expect(await validateSitemap(result.sitemap)).toEqual({ valid: true, errors: [] });
  return Object.fromEntries(result.entries.map((entry) => [entry.loc.replace(site.url, ""), entry.lastmod]));
}

const links = (...hrefs: string[]) => hrefs.map((h) => `<a href="${h}">${h}</a>`).join("\n");
const html = (body: string, headers: Record<string, string> = {}) =>
  new Response(`<!DOCTYPE html><html><head><title>t</title>${body}`, { headers: { "content-type": "text/html", ...headers } });
const meta = (date: string) => `<meta property="article:modified_time" content="${date}">`;
const jsonLd = (data: unknown) => `<script type="application/ld+json">${JSON.stringify(data)}</script>`;
const LAST_MODIFIED = "Mon, 02 Mar 2026 09:30:00 GMT";
const FUTURE = "2099-01-01T00:00:00Z";

describe("one-shot lastmod", () => {
  test("from article:modified_time, then JSON-LD dateModified, then Last-Modified, each passed over when in the future", async () => {
    const site = await serve({
      "/": html(links("/meta", "/jsonld", "/header", "/date-only", "/future-meta", "/future-all")),
      "/meta": html(meta("2026-03-05T10:15:00+01:00") + jsonLd({ dateModified: "2026-03-04T00:00:00Z" }), {
        "last-modified": LAST_MODIFIED,
      }),
      "/jsonld": html(
        jsonLd({
          "@context": "https://schema.org",
          "@graph": [{ "@type": "WebSite" }, { "@type": "Article", dateModified: "2026-04-01T08:00:00.123Z" }],
        }),
        {
          "last-modified": LAST_MODIFIED,
        },
      ),
      "/header": html("<p>no date of its own", { "last-modified": LAST_MODIFIED }),
      "/date-only": html(meta("2026-05-06")),
      "/future-meta": html(meta(FUTURE) + jsonLd({ dateModified: FUTURE }), { "last-modified": LAST_MODIFIED }),
      "/future-all": html(meta(FUTURE), { "last-modified": "Thu, 01 Jan 2099 00:00:00 GMT" }),
    });
    expect(await entries(site)).toEqual({
      "/": undefined,
      "/meta": "2026-03-05T09:15:00Z",
      "/jsonld": "2026-04-01T08:00:00Z",
      "/header": "2026-03-02T09:30:00Z",
      "/date-only": "2026-05-06",
      "/future-meta": "2026-03-02T09:30:00Z",
      "/future-all": undefined,
    });
  });

  test("a Last-Modified within 60 s of the answer's own Date is a server's 'now': no lastmod, for pages and documents", async () => {
    const stamped = (type: string, skewMs: number) => () => {
      const now = Date.now();
      const headers = { "content-type": type, date: new Date(now).toUTCString(), "last-modified": new Date(now - skewMs).toUTCString() };
      return new Response(type === "text/html" ? "<p>x" : "%PDF-1.7", { headers });
    };
    const site = await serve({
      "/": html(links("/now", "/59s", "/2min", "/now.pdf", "/2min.pdf")),
      "/now": stamped("text/html", 0),
      "/59s": stamped("text/html", 59_000),
      "/2min": stamped("text/html", 120_000),
      "/now.pdf": stamped("application/pdf", 0),
      "/2min.pdf": stamped("application/pdf", 120_000),
    });
    const found = await entries(site, { documents: true });
    expect(Object.keys(found).sort()).toEqual(["/", "/2min", "/2min.pdf", "/59s", "/now", "/now.pdf"]);
    expect([found["/now"], found["/59s"], found["/now.pdf"]]).toEqual([undefined, undefined, undefined]);
    // Two minutes before its Date: plausible, to the second.
    expect(found["/2min"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(found["/2min.pdf"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });
});

describe("fingerprint", () => {
  /** The pages' memories of a site's run (history given) or of a plain crawl, by URL. */
  async function fingerprints(site: Site, siteRun: boolean): Promise<{ loc: string; fingerprint?: string | null }[]> {
    const state = new RememberingState();
    await runCrawl(`${site.url}/`, state, defaultCrawlLimits, deps, siteRun ? { history: NO_HISTORY } : {});
    const listed: { loc: string; fingerprint?: string | null }[] = [];
    for await (const entry of state.entries())
      listed.push({
        loc: entry.loc,
        ...(state.memories.has(entry.loc) ? { fingerprint: state.memories.get(entry.loc)!.fingerprint } : {}),
      });
    return listed.sort((a, b) => (a.loc < b.loc ? -1 : 1));
  }

  test("a site's run remembers each page's fingerprint, a plain crawl none; pages that differ only outside <main> share one", async () => {
    const page = (footer: string) =>
      `<title>Same</title><nav>${links("/", "/a", "/b", "/c")}</nav><main><p>Body text</p></main><footer>${footer}</footer>`;
    const site = await serve({
      "/": page("© 2025"),
      "/a": page("© 2026"),
      "/b": `<title>Same</title><main><p>Other body text</p></main>`,
      "/c": `<title>Same</title><main><p>Body   text</p>\n</main>`,
    });
    const listed = await fingerprints(site, true);
    const byPath = Object.fromEntries(listed.map((entry) => [entry.loc.replace(site.url, ""), entry.fingerprint]));
    expect(Object.keys(byPath)).toEqual(["/", "/a", "/b", "/c"]);
    for (const value of Object.values(byPath)) expect(value).toMatch(/^[0-9a-f]{16}$/);
    expect(byPath["/a"]).toBe(byPath["/"]!);
    expect(byPath["/c"]).toBe(byPath["/"]!);
    expect(byPath["/b"]).not.toBe(byPath["/"]!);
    expect((await fingerprints(site, false)).every((entry) => !("fingerprint" in entry))).toBe(true);
  });
});
