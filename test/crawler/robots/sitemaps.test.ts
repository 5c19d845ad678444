// sitemaps_from_robots: reading the sitemaps robots.txt names, bounded like pages, over loopback.
import { describe, expect, test } from "bun:test";
import { createRequester, type HopFetcher } from "../../../src/crawler/net/request.ts";
import { defaultSitemapReadLimits, readRobotsSitemaps, type SitemapReadLimits } from "../../../src/crawler/robots/sitemaps.ts";
import { sitesStoppedAfterEach, type Site } from "../../support/site.ts";

const hop: HopFetcher = (url, init) => fetch(url, { ...init, redirect: "manual" });
const serve = sitesStoppedAfterEach();

const xml = (body: string) => new Response(body, { headers: { "content-type": "application/xml" } });
const urlset = (...locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<url><loc>${l}</loc></url>`).join("")}</urlset>`;
const index = (...locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<sitemap><loc>${l}</loc></sitemap>`).join("")}</sitemapindex>`;

async function read(site: Site, lines: string[], options: { limits?: Partial<SitemapReadLimits>; room?: number; timeoutMs?: number } = {}) {
  const request = createRequester(hop, { "User-Agent": "genapi/test" }, options.timeoutMs ?? 5_000, new AbortController().signal);
  const urls: string[] = [];
  const room = options.room ?? Infinity;
  const result = await readRobotsSitemaps(
    site.url,
    lines,
    request,
    (url) => {
      urls.push(url.replace(site.url, ""));
      return urls.length < room;
    },
    { ...defaultSitemapReadLimits, ...options.limits },
  );
  return { ...result, urls, requested: site.requests.map((r) => r.replace(site.url, "")) };
}

describe("readRobotsSitemaps", () => {
  test("urlsets and indexes on the origin, normalised, other origins and invalid lines ignored", async () => {
    let site: Site;
    site = await serve({
      "/sitemap.xml": () =>
        xml(urlset(`${site.url}/a`, `${site.url}/b#frag`, "http://other.test/x", `  ${site.url}/caf%c3%a9  `, "not a url")),
      "/index.xml": () => xml(index(`${site.url}/part-1.xml`, "http://other.test/part.xml", `${site.url}/part-2.xml`)),
      "/part-1.xml": () => xml(urlset(`${site.url}/c`)),
      "/part-2.xml": () =>
        xml(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
        <url><loc><![CDATA[${site.url}/d?x=1&y=2]]></loc><image:image><image:loc>${site.url}/img.png</image:loc></image:image></url>
        <url><loc>${site.url}/e?x=1&amp;y=2</loc><lastmod>2026-01-01</lastmod></url></urlset>`),
    });
    const result = await read(site, [`${site.url}/sitemap.xml`, "http://other.test/sitemap.xml", "nonsense", `${site.url}/index.xml`]);
    expect(result.urls).toEqual(["/a", "/b", "/caf%C3%A9", "/c", "/d?x=1&y=2", "/e?x=1&y=2"]);
    expect(result.requested).toEqual(["/sitemap.xml", "/index.xml", "/part-1.xml", "/part-2.xml"]);
    expect(result).toMatchObject({ files: 4, truncated: false });
  });

  test(".gz files are gunzipped, whether served as gzip bytes or with Content-Encoding", async () => {
    let site: Site;
    site = await serve({
      "/sitemap.xml.gz": () =>
        new Response(Bun.gzipSync(new TextEncoder().encode(urlset(`${site.url}/gz`))), { headers: { "content-type": "application/gzip" } }),
      "/encoded.xml": () =>
        new Response(Bun.gzipSync(new TextEncoder().encode(urlset(`${site.url}/encoded`))), {
          headers: { "content-type": "application/xml", "content-encoding": "gzip" },
        }),
    });
    expect((await read(site, [`${site.url}/sitemap.xml.gz`, `${site.url}/encoded.xml`])).urls).toEqual(["/gz", "/encoded"]);
  });

  test("a gzip bomb stops at the decompressed-size cap, keeping what came before", async () => {
    let site: Site;
    let bomb = new Uint8Array();
    site = await serve({
      "/bomb.xml.gz": () => new Response(bomb, { headers: { "content-type": "application/gzip" } }),
      "/after.xml": () => xml(urlset(`${site.url}/after`)),
    });
    // 1 GiB of spaces after the first entry, about 1 MB compressed, made before any request so that
    // the request's time limit covers only the reading.
    bomb = (() => {
      const raw = new Uint8Array(1024 * 1024 * 1024).fill(0x20);
      raw.set(
        new TextEncoder().encode(
          `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${site.url}/before-bomb</loc></url>`,
        ),
        0,
      );
      return Bun.gzipSync(raw);
    })();
    Bun.gc(true);
    const rssBefore = process.memoryUsage().rss;
    const result = await read(site, [`${site.url}/bomb.xml.gz`, `${site.url}/after.xml`], {
      limits: { maxBytes: 8 * 1024 * 1024 },
      timeoutMs: 30_000,
    });
    expect(result.urls).toEqual(["/before-bomb", "/after"]);
    expect(result.truncated).toBe(true);
    // Reading it costs about the cap, not the gigabyte it expands to.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
  }, 60_000);

  test("a huge file is cut at the byte cap", async () => {
    let site: Site;
    site = await serve({
      "/big.xml": () => xml(urlset(...Array.from({ length: 20_000 }, (_, i) => `${site.url}/p${i}`))),
    });
    const result = await read(site, [`${site.url}/big.xml`], { limits: { maxBytes: 64 * 1024 } });
    expect(result.urls.length).toBeGreaterThan(100);
    expect(result.urls.length).toBeLessThan(20_000);
    expect(result.truncated).toBe(true);
  });

  test("entities: no DTD is read, a document with a DOCTYPE (billion laughs, external entity) is refused", async () => {
    let site: Site;
    site = await serve({
      "/laughs.xml": () =>
        xml(`<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY a "${"x".repeat(100)}"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
          <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${site.url}/&c;</loc></url></urlset>`),
      "/xxe.xml": () =>
        xml(
          `<?xml version="1.0"?><!DOCTYPE urlset SYSTEM "http://127.0.0.1:${site.port}/dtd"><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${site.url}/x</loc></url></urlset>`,
        ),
      "/undefined-entity.xml": () => xml(urlset(`${site.url}/&nope;`, `${site.url}/later`)),
      "/predefined.xml": () => xml(urlset(`${site.url}/q?a=1&amp;b=&#50;&#x33;`)),
    });
    const result = await read(site, [
      `${site.url}/laughs.xml`,
      `${site.url}/xxe.xml`,
      `${site.url}/undefined-entity.xml`,
      `${site.url}/predefined.xml`,
    ]);
    expect(result.urls).toEqual(["/q?a=1&b=23"]);
    expect(result.requested).not.toContain("/dtd");
    // Broken files are the site's fault, not a limit of the crawl.
    expect(result.truncated).toBe(false);
  });

  test("deep nesting and a root that is not a sitemap are refused", async () => {
    let site: Site;
    site = await serve({
      "/deep.xml": () => xml(`<urlset>${"<x>".repeat(100_000)}<url><loc>${site.url}/deep</loc></url>${"</x>".repeat(100_000)}</urlset>`),
      "/html.xml": () => xml(`<html><urlset><url><loc>${site.url}/html</loc></url></urlset></html>`),
      "/ok.xml": () => xml(urlset(`${site.url}/ok`)),
    });
    const result = await read(site, [`${site.url}/deep.xml`, `${site.url}/html.xml`, `${site.url}/ok.xml`]);
    expect(result.urls).toEqual(["/ok"]);
  });

  test("cyclic indexes are read once each; nesting past the depth cap is not followed", async () => {
    let site: Site;
    site = await serve({
      "/a.xml": () => xml(index(`${site.url}/b.xml`, `${site.url}/a.xml`)),
      "/b.xml": () => xml(index(`${site.url}/a.xml`, `${site.url}/c.xml`)),
      "/c.xml": () => xml(index(`${site.url}/d.xml`)),
      "/d.xml": () => xml(urlset(`${site.url}/too-deep`)),
    });
    const result = await read(site, [`${site.url}/a.xml`, `${site.url}/a.xml`]);
    expect(result.requested).toEqual(["/a.xml", "/b.xml", "/c.xml"]);
    expect(result.urls).toEqual([]);
    expect(result.truncated).toBe(true);
  });

  test("an endless index stops at the file cap", async () => {
    let site: Site;
    site = await serve({
      "/gen": (req) => {
        const n = Number(new URL(req.url).searchParams.get("n") ?? 0);
        return xml(index(`${site.url}/gen?n=${n * 2 + 1}`, `${site.url}/gen?n=${n * 2 + 2}`));
      },
    });
    const result = await read(site, [`${site.url}/gen?n=0`], { limits: { maxIndexDepth: 100, maxFiles: 10 } });
    expect(result.requested).toHaveLength(10);
    expect(result.truncated).toBe(true);
  });

  test("stops when the crawl has no more room (the page budget)", async () => {
    let site: Site;
    site = await serve({
      "/one.xml": () => xml(urlset(...[1, 2, 3, 4, 5].map((n) => `${site.url}/p${n}`))),
      "/two.xml": () => xml(urlset(`${site.url}/never`)),
    });
    const result = await read(site, [`${site.url}/one.xml`, `${site.url}/two.xml`], { room: 3 });
    expect(result.urls).toEqual(["/p1", "/p2", "/p3"]);
    expect(result.requested).toEqual(["/one.xml"]);
    expect(result.truncated).toBe(true);
  });

  test("HTTP errors and stalled files are skipped; same-origin redirects are followed, others not", async () => {
    let site: Site;
    site = await serve({
      "/missing.xml": new Response("no", { status: 404 }),
      "/moved.xml": () => new Response(null, { status: 301, headers: { location: "/moved-here.xml" } }),
      "/moved-here.xml": () => xml(urlset(`${site.url}/moved`)),
      "/away.xml": () => new Response(null, { status: 302, headers: { location: `http://localhost:${site.port}/moved-here.xml` } }),
      "/stalled.xml": () =>
        new Response(
          new ReadableStream({
            start: (c) => c.enqueue(new TextEncoder().encode(urlset(`${site.url}/partial`).slice(0, -10))),
            pull: () => new Promise(() => {}),
          }),
          {
            headers: { "content-type": "application/xml" },
          },
        ),
    });
    const result = await read(
      site,
      ["/missing.xml", "/moved.xml", "/away.xml", "/stalled.xml"].map((p) => site.url + p),
      { timeoutMs: 500 },
    );
    expect(result.urls).toEqual(["/moved", "/partial"]);
    expect(result.requested).toEqual(["/missing.xml", "/moved.xml", "/moved-here.xml", "/away.xml", "/stalled.xml"]);
    expect(result.truncated).toBe(false);
  });
});

test("a file whose body never starts is given up at the request's time limit", async () => {
  let site: Site;
  site = await serve({
    "/silent.xml": () =>
      new Response(new ReadableStream({ pull: () => new Promise(() => {}) }), { headers: { "content-type": "application/xml" } }),
    "/ok.xml": () => xml(urlset(`${site.url}/ok`)),
  });
  const result = await read(site, [`${site.url}/silent.xml`, `${site.url}/ok.xml`], { timeoutMs: 500 });
  expect(result.urls).toEqual(["/ok"]);
});
