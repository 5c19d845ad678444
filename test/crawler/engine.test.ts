// Crawl logic over an injected fetcher and clock: no network, no dependence on real time.
import { describe, expect, test } from "bun:test";
import {
  crawlSite,
  defaultCrawlLimits,
  defaultCrawlOptions,
  MemoryCrawlState,
  runCrawl,
  type CrawlLimits,
  type HopFetcher,
} from "../../src/crawler/index.ts";
import { CrawlFailedError, NothingListedError, TargetRefusedError } from "../../src/crawler/errors.ts";
import { renderSitemap } from "../../src/crawler/output/xml.ts";
import { validateSitemap } from "../support/xmllint.ts";

const SITE = "http://site.test";
const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

type Page = string | Response | ((url: URL, signal: AbortSignal) => Response | Promise<Response>);

/** A site of canned responses; keys are paths on SITE or absolute URLs. Strings are 200 HTML. */
function fakeSite(pages: Record<string, Page>) {
  const clock = { now: T0 };
  const requests: { url: string; headers: Record<string, string> }[] = [];
  const hooks = { onFetch: (_url: URL) => {} };
  const fetch: HopFetcher = async (url, init) => {
    requests.push({ url: url.href, headers: init.headers });
    hooks.onFetch(url);
    const page = pages[url.href] ?? (url.origin === SITE ? pages[url.pathname + url.search] : undefined);
    if (page === undefined) return new Response("not found", { status: 404 });
    if (typeof page === "string") return new Response(page, { headers: { "content-type": "text/html" } });
    return typeof page === "function" ? page(url, init.signal) : (page.clone() as Response);
  };
  // Every sitemap a crawl produces must validate against the sitemaps.org schema.
  const crawl = async (limits: Partial<CrawlLimits> = {}, start = `${SITE}/`, signal?: AbortSignal) => {
    const result = await crawlSite(
      start,
      { ...defaultCrawlLimits, ...limits },
      { fetch, now: () => clock.now, userAgent: "genapi/1.2.3" },
      signal,
    );
    expect(await validateSitemap(result.sitemap)).toEqual({ valid: true, errors: [] });
    return result;
  };
  const paths = () => requests.map((r) => r.url.replace(SITE, ""));
  return { crawl, requests, paths, clock, hooks };
}

/** Asserts that `crawl` fails with CrawlFailedError(reason) (toThrow would compare messages only). */
async function expectCrawlFailure(crawl: Promise<unknown>, reason: string) {
  const err = await crawl.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CrawlFailedError);
  expect((err as CrawlFailedError).reason).toBe(reason);
}

const links = (...hrefs: string[]) => hrefs.map((h) => `<a href="${h}">${h}</a>`).join("\n");
const html = (body: string, headers: Record<string, string> = {}, status = 200) =>
  new Response(body, { status, headers: { "content-type": "text/html; charset=utf-8", ...headers } });
const redirect = (to: string, status = 301) => new Response(null, { status, headers: { location: to } });
const locs = (entries: { loc: string }[]) => entries.map((e) => e.loc.replace(SITE, ""));

describe("crawlSite: what is listed", () => {
  test("every reachable HTML page once, sorted by loc, with lastmod from Last-Modified", async () => {
    const site = fakeSite({
      "/": links("/b", "/a", "/a#again", "c"),
      "/a": html(links("/"), { "last-modified": "Fri, 20 Nov 2026 08:00:00 GMT" }),
      "/b": links("/a"),
      "/c": links("/b"),
    });
    const result = await site.crawl();
    expect(result).toMatchObject({
      url: `${SITE}/`,
      entries: [{ loc: `${SITE}/` }, { loc: `${SITE}/a`, lastmod: "2026-11-20T08:00:00Z" }, { loc: `${SITE}/b` }, { loc: `${SITE}/c` }],
      pagesCrawled: 4,
      truncated: false,
      durationMs: 0,
    });
    expect(result.sitemap).toBe(renderSitemap(result.entries));
    expect(site.paths()).toEqual(["/robots.txt", "/", "/b", "/a", "/c"]);
  });

  test("sends User-Agent and Accept on every request, robots.txt included", async () => {
    const site = fakeSite({ "/": links("/a"), "/a": "a" });
    await site.crawl();
    expect(site.requests).toHaveLength(3);
    for (const { headers } of site.requests) {
      expect(headers).toEqual({ "User-Agent": "genapi/1.2.3", Accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1" });
    }
  });

  test("robots.txt-disallowed URLs are neither fetched nor listed, not even through a redirect", async () => {
    const site = fakeSite({
      "/robots.txt": new Response("User-agent: genapi\nDisallow: /private\n"),
      "/": links("/private/a", "/jump", "/ok"),
      "/jump": redirect("/private/b"),
      "/ok": "ok",
    });
    const result = await site.crawl();
    expect(locs(result.entries)).toEqual(["/", "/ok"]);
    expect(site.paths()).toEqual(["/robots.txt", "/", "/jump", "/ok"]);
  });

  test("a redirect lists its target once, never the redirecting URL", async () => {
    const site = fakeSite({ "/": links("/old", "/new"), "/old": redirect("/new", 308), "/new": "new" });
    const result = await site.crawl();
    expect(locs(result.entries)).toEqual(["/", "/new"]);
    expect(site.paths().filter((p) => p === "/new")).toHaveLength(1);
    expect(result.pagesCrawled).toBe(3);
  });

  test("a redirect chain longer than maxRedirects is not listed", async () => {
    const site = fakeSite({ "/": links("/r0"), "/r0": redirect("/r1"), "/r1": redirect("/r2"), "/r2": redirect("/end"), "/end": "end" });
    expect(locs((await site.crawl({ maxRedirects: 2 })).entries)).toEqual(["/"]);
    expect(site.paths()).not.toContain("/end");
    expect(
      locs(
        (await fakeSite({ "/": links("/r0"), "/r0": redirect("/r1"), "/r1": redirect("/end"), "/end": "end" }).crawl({ maxRedirects: 2 }))
          .entries,
      ),
    ).toEqual(["/", "/end"]);
  });

  test("a canonical in a Link header counts like <link rel=canonical>", async () => {
    const site = fakeSite({
      "/": links("/print", "/self"),
      "/print": html("print", { link: '</article>; rel="canonical"' }),
      "/self": html("self", { link: `<${SITE}/self>; rel=canonical` }),
      "/article": "article",
    });
    expect(locs((await site.crawl()).entries)).toEqual(["/", "/article", "/self"]);
  });

  test("a 2xx page other than 200 is not listed but its links are followed", async () => {
    const site = fakeSite({ "/": links("/partial"), "/partial": html(links("/deep"), {}, 203), "/deep": "deep" });
    expect(locs((await site.crawl()).entries)).toEqual(["/", "/deep"]);
  });

  test("pages in a legacy charset, bad charsets and binary junk do not stop the crawl", async () => {
    const latin1 = new Uint8Array([...new TextEncoder().encode('<a href="/caf'), 0xe9, ...new TextEncoder().encode('">x</a>')]);
    const junk = Uint8Array.from({ length: 20_000 }, (_, i) => (i * 7919 + (i >> 3)) & 255);
    const site = fakeSite({
      "/": links("/latin", "/junk", "/bogus"),
      "/latin": new Response(latin1, { headers: { "content-type": "text/html; charset=windows-1252" } }),
      "/junk": new Response(junk, { headers: { "content-type": "text/html" } }),
      "/bogus": new Response("<p>x", { headers: { "content-type": "text/html; charset=x-no-such" } }),
      "/caf%C3%A9": "café",
    });
    expect(locs((await site.crawl()).entries)).toEqual(["/", "/bogus", "/caf%C3%A9", "/junk", "/latin"]);
  });
});

describe("crawlSite: limits", () => {
  test("the page cap stops the crawl with truncated: true; the frontier never outgrows it", async () => {
    const many = Array.from({ length: 1000 }, (_, i) => `/p${i}`);
    const pages: Record<string, Page> = { "/": links(...many) };
    for (const p of many) pages[p] = links(...many);
    const site = fakeSite(pages);
    const result = await site.crawl({ maxPages: 5 });
    expect(result.pagesCrawled).toBe(5);
    expect(result.truncated).toBe(true);
    expect(site.paths()).toEqual(["/robots.txt", "/", "/p0", "/p1", "/p2", "/p3"]);
    expect(locs(result.entries)).toEqual(["/", "/p0", "/p1", "/p2", "/p3"]);
  });

  test("a site exactly as large as the page cap is not truncated", async () => {
    const site = fakeSite({ "/": links("/a", "/b"), "/a": links("/b"), "/b": "b" });
    expect(await site.crawl({ maxPages: 3 })).toMatchObject({ pagesCrawled: 3, truncated: false });
  });

  test("the time budget, read from the clock, covers robots.txt, the start page and the crawl", async () => {
    const site = fakeSite({
      "/": links("/1", "/2", "/3", "/4", "/5", "/6", "/7", "/8"),
      ...Object.fromEntries([1, 2, 3, 4, 5, 6, 7, 8].map((n) => [`/${n}`, "x"])),
    });
    site.hooks.onFetch = () => {
      site.clock.now += 10_000;
    };
    const result = await site.crawl({ timeoutMs: 60_000, concurrency: 1 });
    // robots.txt at 10 s, start page at 20 s, /1../4 at 30..60 s: the budget is spent.
    expect(result).toMatchObject({ pagesCrawled: 5, truncated: true, durationMs: 60_000 });
    expect(locs(result.entries)).toEqual(["/", "/1", "/2", "/3", "/4"]);
  });

  test("concurrency bounds the requests in flight", async () => {
    const many = Array.from({ length: 30 }, (_, i) => `/p${i}`);
    let inFlight = 0;
    let peak = 0;
    const slow = async () => {
      peak = Math.max(peak, ++inFlight);
      await Bun.sleep(1);
      inFlight--;
      return html("x");
    };
    const site = fakeSite({ "/": links(...many), ...Object.fromEntries(many.map((p) => [p, slow])) });
    const result = await site.crawl({ concurrency: 3 });
    expect(result.entries).toHaveLength(31);
    expect(peak).toBe(3);
  });

  test("links past maxLinksPerPage are dropped and the crawl is truncated", async () => {
    const site = fakeSite({ "/": links("/a", "/b", "/c", "/d"), "/a": "a", "/b": "b", "/c": "c", "/d": "d" });
    const result = await site.crawl({ maxLinksPerPage: 2 });
    expect(locs(result.entries)).toEqual(["/", "/a", "/b"]);
    expect(result.truncated).toBe(true);
  });

  test("links longer than maxUrlLength are neither fetched nor listed: counted under invalid", async () => {
    const long = `/${"x".repeat(100)}`;
    const site = fakeSite({ "/": links(long, "/short"), [long]: "long", "/short": "short" });
    const result = await site.crawl({ maxUrlLength: 100 });
    expect(locs(result.entries)).toEqual(["/", "/short"]);
    expect(site.paths()).not.toContain(long);
    expect(result.excluded.invalid).toBe(1);
    expect(result.excluded_examples.invalid).toEqual([`${SITE}${long}`]);
    expect(result.truncated).toBe(false);
  });

  test("entries past maxUrls are dropped (the first in loc order are kept)", async () => {
    const site = fakeSite({ "/": links("/c", "/b", "/a"), "/a": "a", "/b": "b", "/c": "c" });
    const result = await site.crawl({ maxUrls: 2 });
    expect(locs(result.entries)).toEqual(["/", "/a"]);
    expect(result.truncated).toBe(true);
  });

  test("a page over maxBodyBytes is skipped, its links unfollowed, and the crawl truncated", async () => {
    const site = fakeSite({
      "/": links("/big", "/small"),
      "/big": `${links("/hidden")}${"x".repeat(5000)}`,
      "/small": "s",
      "/hidden": "h",
    });
    const result = await site.crawl({ maxBodyBytes: 1000 });
    expect(locs(result.entries)).toEqual(["/", "/small"]);
    expect(result.truncated).toBe(true);
    expect(site.paths()).not.toContain("/hidden");
  });
});

describe("crawlSite: nothing to list", () => {
  /** Asserts that `crawl` fails with NothingListedError(reason). */
  async function expectNothingListed(crawl: Promise<unknown>, reason: string) {
    const err = await crawl.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NothingListedError);
    expect((err as NothingListedError).reason).toBe(reason);
  }

  test("no page listed fails the crawl with why, from what became of the start page", async () => {
    await expectNothingListed(
      fakeSite({ "/": '<meta name="robots" content="noindex"><a href="/a">a</a>', "/a": '<meta name="robots" content="noindex">' }).crawl(),
      "the start page is noindex",
    );
    await expectNothingListed(fakeSite({ "/": html("x", { "x-robots-tag": "noindex" }) }).crawl(), "the start page is noindex");
    await expectNothingListed(fakeSite({ "/": html("x", {}, 203) }).crawl(), "the start page is an HTTP error");
    await expectNothingListed(
      fakeSite({ "/": '<link rel="canonical" href="/c">', "/c": html("gone", {}, 404) }).crawl(),
      "the start page's canonical URL points elsewhere, and no page was listed",
    );
  });

  test("the report says what each URL met became", async () => {
    const site = fakeSite({
      "/robots.txt": new Response("User-agent: *\nDisallow: /private\n"),
      "/": links("/private/a", "/private/b", "/old", "/gone", "/img", "/noindex", "/copy", "/ok"),
      "/old": redirect("/ok"),
      "/img": new Response("png", { headers: { "content-type": "image/png" } }),
      "/noindex": '<meta name="robots" content="noindex">',
      "/copy": '<link rel="canonical" href="/ok">',
      "/ok": "ok",
    });
    const result = await site.crawl();
    expect(locs(result.entries)).toEqual(["/", "/ok"]);
    expect(result.excluded).toEqual({
      robots: 2,
      noindex: 1,
      canonical: 1,
      redirect: 1,
      not_html: 1,
      http_error: 1,
      failed: 0,
      filtered: 0,
      invalid: 0,
    });
    expect(result.excluded_examples.robots).toEqual([`${SITE}/private/a`, `${SITE}/private/b`]);
    expect(result.excluded_examples.redirect).toEqual([`${SITE}/old`]);
  });
});

describe("crawlSite: links that cannot be listed (invalid)", () => {
  const over = (n: number, tag = "") => `/${tag}${"y".repeat(2_100 + n)}`;

  test("each distinct one counted once per crawl, wherever met; the examples cut to 200 characters", async () => {
    // Longer than 2,048 characters once normalised, or not a valid URI: they were dropped without a
    // trace, neither fetched nor counted.
    const a = over(1, "a");
    const b = over(2, "b");
    const site = fakeSite({
      "/": links(a, b, "/next", "http://exa mple.com/", "https://[::1/", "mailto:x@example.com", "javascript:void(0)"),
      // The same links again: not counted again.
      "/next": links(a, b, "http://exa mple.com/", "/ok"),
      "/ok": "ok",
    });
    const result = await site.crawl();
    expect(locs(result.entries)).toEqual(["/", "/next", "/ok"]);
    expect(site.paths().some((p) => p.length > 2_048)).toBe(false);
    expect(result.excluded.invalid).toBe(4);
    expect(result.excluded_examples.invalid).toEqual(
      ["http://exa mple.com/", "https://[::1/", `${SITE}${a}`.slice(0, 200), `${SITE}${b}`.slice(0, 200)].sort(),
    );
    expect(result.excluded_examples.invalid.every((e) => e.length <= 200)).toBe(true);
    expect(result.truncated).toBe(false);
  });

  test("another origin's long link is not the crawl's to count; a long redirect target or canonical is", async () => {
    const long = over(3);
    const site = fakeSite({
      "/": links(`http://elsewhere.test${long}`, "/moved", "/copy"),
      "/moved": redirect(long),
      "/copy": `<link rel="canonical" href="${long}x">`,
    });
    const result = await site.crawl();
    expect(locs(result.entries)).toEqual(["/"]);
    expect(result.excluded).toMatchObject({ invalid: 2, redirect: 1, canonical: 1 });
    // Two URLs, one example: cut to 200 characters, they read the same.
    expect(result.excluded_examples.invalid).toEqual([`${SITE}${long}`.slice(0, 200)]);
  });

  test("ignore_query_params is applied first: a link long only by a stripped parameter is crawled", async () => {
    const site = fakeSite({ "/": links(`/page?utm_source=${"u".repeat(2_100)}`), "/page": "page" });
    const result = await site.crawl();
    expect(result.excluded.invalid).toBe(1);
    const stripped = await crawlSite(
      `${SITE}/`,
      defaultCrawlLimits,
      {
        fetch: async (url) =>
          new Response(url.pathname === "/" ? links(`/page?utm_source=${"u".repeat(2_100)}`) : "page", {
            headers: { "content-type": "text/html" },
          }),
        now: () => T0,
        userAgent: "genapi/1.2.3",
      },
      undefined,
      { ...defaultCrawlOptions(500), ignore_query_params: ["utm_*"] },
    );
    expect(locs(stripped.entries)).toEqual(["/", "/page"]);
    expect(stripped.excluded.invalid).toBe(0);
  });

  test("10,000 distinct long links on a page: counted, and never handed to the crawl state", async () => {
    // The state keeps every URL it is given (the seen set, for the whole crawl): 10,000 long links
    // would be 10,000 strings of 2,000+ characters. It is given a short key for each instead. The
    // page stays small: short hrefs made long by a long <base>.
    const base = `/${"b".repeat(2_000)}/`;
    const page = `<base href="${base}">${Array.from({ length: 10_000 }, (_, i) => `<a href="${String(i).padStart(60, "p")}">`).join("")}<a href="/ok">`;
    const state = new MemoryCrawlState();
    let longest = 0;
    const record = state.record.bind(state);
    state.record = (written) => {
      for (const link of written.links) longest = Math.max(longest, link.url.length);
      for (const url of written.seen) longest = Math.max(longest, url.length);
      return record(written);
    };
    const claim = state.claim.bind(state);
    state.claim = (url, by) => {
      longest = Math.max(longest, url.length);
      return claim(url, by);
    };
    const run = await runCrawl(
      `${SITE}/`,
      state,
      { ...defaultCrawlLimits, maxLinksPerPage: 20_000 },
      {
        fetch: async (url) => new Response(url.pathname === "/" ? page : "ok", { headers: { "content-type": "text/html" } }),
        now: () => T0,
        userAgent: "genapi/1.2.3",
      },
    );
    expect(run.urlsListed).toBe(2);
    const report = await state.report();
    expect(report.excluded.invalid).toBe(10_000);
    // Their first 200 characters are the same: one example.
    expect(report.excluded_examples.invalid).toEqual([`${SITE}${base}`.slice(0, 200)]);
    expect(longest).toBeLessThanOrEqual(2_048);
  });
});

describe("crawlSite: stopping and refusing", () => {
  test("an abort before the start page is done fails the crawl", async () => {
    const ctrl = new AbortController();
    ctrl.abort();
    await expectCrawlFailure(fakeSite({ "/": "x" }).crawl({}, `${SITE}/`, ctrl.signal), "aborted");

    const later = new AbortController();
    const site = fakeSite({
      "/": () => {
        later.abort();
        return new Promise<Response>(() => {});
      },
    });
    await expectCrawlFailure(site.crawl({}, `${SITE}/`, later.signal), "aborted");
  });

  test("an abort during the crawl returns what was found, truncated", async () => {
    const ctrl = new AbortController();
    const site = fakeSite({
      "/": links("/a", "/b", "/c"),
      "/a": "a",
      "/b": () => {
        ctrl.abort();
        return new Promise<Response>(() => {});
      },
      "/c": "c",
    });
    const result = await site.crawl({ concurrency: 1 }, `${SITE}/`, ctrl.signal);
    expect(locs(result.entries)).toEqual(["/", "/a"]);
    expect(result.truncated).toBe(true);
    expect(site.paths()).not.toContain("/c");
  });

  test("a refused start URL, or hop of its redirects, rethrows TargetRefusedError", async () => {
    const refuse = () => Promise.reject(new TargetRefusedError("loopback address"));
    await expect(fakeSite({ "/": refuse }).crawl()).rejects.toThrow(new TargetRefusedError("loopback address"));
    const viaRedirect = fakeSite({ "/": redirect("http://internal.test/"), "http://internal.test/": refuse });
    await expect(viaRedirect.crawl()).rejects.toBeInstanceOf(TargetRefusedError);
  });

  test("a state that fails to give the next URLs fails the crawl with its error, after the pages in flight have stopped", async () => {
    const state = new MemoryCrawlState();
    const take = state.take.bind(state);
    let slowInFlight = false;
    state.take = (limit) => (slowInFlight ? Promise.reject(new Error("the store is gone")) : take(limit));
    const record = state.record.bind(state);
    const recorded: string[] = [];
    state.record = (page) => {
      recorded.push(page.done?.url ?? `start ${page.start}`);
      return record(page);
    };
    // "/slow" is in flight when the next take fails: it ends only when the crawl stops it.
    let slowStopped = false;
    const pages: Record<string, string> = { "/": links("/a", "/slow"), "/a": links("/b"), "/b": "b" };
    const failure = await runCrawl(
      `${SITE}/`,
      state,
      { ...defaultCrawlLimits, concurrency: 2 },
      {
        fetch: (url, init) => {
          if (url.pathname === "/slow") {
            slowInFlight = true;
            return new Promise<Response>((_, reject) =>
              init.signal.addEventListener("abort", () => {
                slowStopped = true;
                reject(init.signal.reason);
              }),
            );
          }
          const body = pages[url.pathname];
          return Promise.resolve(
            body === undefined ? new Response("", { status: 404 }) : new Response(body, { headers: { "content-type": "text/html" } }),
          );
        },
        now: () => T0,
        userAgent: "genapi/1.2.3",
      },
    ).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toEqual(new Error("the store is gone"));
    expect(slowStopped).toBe(true);
    const settled = recorded.length;
    await Bun.sleep(20);
    expect(recorded.length).toBe(settled);
    // The pages before the failure were recorded; the stopped one never is.
    expect(recorded).toEqual([`start ${SITE}/`, `${SITE}/a`]);
  });

  test("a refused page later in the crawl is skipped", async () => {
    const site = fakeSite({
      "/": links("/a", "/b"),
      "/a": () => Promise.reject(new TargetRefusedError("private address")),
      "/b": "b",
    });
    expect(await site.crawl()).toMatchObject({ entries: [{ loc: `${SITE}/` }, { loc: `${SITE}/b` }], truncated: false });
  });
});

describe("crawlSite: the start URL", () => {
  test("its redirects may change origin: scope is the final origin, each origin's robots.txt is checked", async () => {
    const site = fakeSite({
      "http://old.test/": redirect(`${SITE}/home`),
      "/home": links("http://old.test/page", "/about"),
      "/about": "about",
    });
    const result = await site.crawl({}, "http://OLD.test");
    expect(result.url).toBe(`${SITE}/home`);
    expect(locs(result.entries)).toEqual(["/about", "/home"]);
    expect(site.requests.map((r) => r.url)).toEqual([
      "http://old.test/robots.txt",
      "http://old.test/",
      `${SITE}/robots.txt`,
      `${SITE}/home`,
      `${SITE}/about`,
    ]);
    expect(result.pagesCrawled).toBe(3);
  });

  test("fails with a short reason when the start page cannot be crawled", async () => {
    const cases: [Record<string, Page>, string][] = [
      [{}, "HTTP 404"],
      [{ "/": html("oops", {}, 500) }, "HTTP 500"],
      [{ "/": new Response("png", { headers: { "content-type": "image/png" } }) }, "not an HTML page (image/png)"],
      [{ "/": new Response("x", { headers: { "content-type": "" } }) }, "not an HTML page (no content type)"],
      [{ "/": "x".repeat(2000) }, "page larger than 1000 bytes"],
      [{ "/": () => Promise.reject(Object.assign(new Error("Unable to connect"), { code: "ECONNREFUSED" })) }, "connection refused"],
      [{ "/": () => Promise.reject(new Error("certificate has expired")) }, "certificate has expired"],
      [{ "/robots.txt": new Response("busy", { status: 503 }), "/": "x" }, "robots.txt unreachable (HTTP 503)"],
      [{ "/robots.txt": new Response("User-agent: *\nDisallow: /\n"), "/": "x" }, "robots.txt disallows it"],
      [{ "/": redirect("/a"), "/a": redirect("/") }, "redirect loop"],
      [{ "/": redirect("mailto:x@site.test") }, "redirect to an invalid URL"],
    ];
    for (const [pages, reason] of cases) {
      await expectCrawlFailure(fakeSite(pages).crawl({ maxBodyBytes: 1000 }), reason);
    }
  });

  test("a start redirect to a URL over 2,048 characters fails; a start URL over it is invalid", async () => {
    const long = `/${"é".repeat(400)}`; // 2,401 characters once encoded
    await expectCrawlFailure(fakeSite({ "/": redirect(long) }).crawl(), "redirect to a URL longer than 2,048 characters");
    await expectCrawlFailure(fakeSite({}).crawl({}, `${SITE}${long}`), "invalid URL");
  });

  test("a start redirect chain longer than maxPages fails; maxRedirects does not apply to it", async () => {
    const chain = fakeSite({ "/": redirect("/1"), "/1": redirect("/2"), "/2": redirect("/3"), "/3": "end" });
    await expectCrawlFailure(chain.crawl({ maxPages: 3 }), "too many redirects");
    expect(await chain.crawl({ maxPages: 4, maxRedirects: 1 })).toMatchObject({ url: `${SITE}/3`, pagesCrawled: 4 });
  });

  test("the time budget counts against the start page too", async () => {
    const site = fakeSite({ "/": "x" });
    site.hooks.onFetch = () => {
      site.clock.now += 61_000;
    };
    await expectCrawlFailure(site.crawl({ timeoutMs: 60_000 }), "timed out");
  });
});

test("a time budget past setTimeout's range does not fire at once", async () => {
  const site = fakeSite({
    "/": links("/a"),
    "/a": async () => {
      await Bun.sleep(5);
      return html("a");
    },
  });
  expect(await site.crawl({ timeoutMs: 2 ** 40, requestTimeoutMs: 2 ** 40 })).toMatchObject({ pagesCrawled: 2, truncated: false });
});
