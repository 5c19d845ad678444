// Conformance defects once found, through the compiled executable: what the sitemap lists and how
// the request answers, with exact statuses and messages, against loopback fixture sites.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createKey, generate, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { serveSite, type Site } from "../support/site.ts";
import { validateSitemap } from "../support/xmllint.ts";

const INVALID_URL = "Invalid URL. Provide a full URL that includes http:// or https://.";
const page = (links: string[], head = "", headers: Record<string, string> = {}) =>
  new Response(`<!doctype html><html><head>${head}</head><body>${links.map((l) => `<a href="${l}">x</a>`).join("")}</body></html>`, {
    headers: { "content-type": "text/html; charset=utf-8", ...headers },
  });
const json = async (res: Response) => (await res.json()) as any;
const locsOf = (sitemap: string) => [...sitemap.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));

let site: Site;
let server: RunningBinary;
let key: string;
beforeAll(async () => {
  site = await serveSite({
    "/robots.txt": new Response("User-agent: *\nDisallow: /path/file-with-a-%2A.html\nDisallow: /search?q=é\n"),
    "/": page([
      "/q2?arr[]=1&arr[]=2",
      "/p?x=100%",
      "/p?x=%zz",
      "/path/file-with-a-*.html",
      "/search?q=é",
      "/search?q=e",
      "/dates/850",
      "/dates/asctime",
    ]),
    "/q2": page([]),
    "/p": page([]),
    "/search": page([]),
    "/path/file-with-a-*.html": page([]),
    "/dates/850": page([], "", { "last-modified": "Sunday, 06-Nov-94 08:49:37 GMT" }),
    "/dates/asctime": page([], "", { "last-modified": "Sun Nov  6 08:49:37 1994" }),
    "/noindex": page(["/noindex-too"], '<meta name="robots" content="noindex">'),
    "/noindex-too": page([], '<meta name="robots" content="noindex">'),
    "/to-long": new Response(null, { status: 301, headers: { location: `/${"a".repeat(3000)}` } }),
  });
  const dbPath = join(tempDir(), "genapi.db");
  key = await createKey(dbPath, "--daily-limit", "100");
  server = await startBinary({ dbPath, args: ["--allow-private-targets"] });
});
afterAll(async () => {
  await server.stop();
  await site.stop();
});

describe("dist/genapi: what the crawl lists (issue 11, defects 1-6)", () => {
  test("query characters are encoded once, robots.txt matches encoded forms and %2A, every date form gives lastmod", async () => {
    const res = await generate(server, key, `${site.url}/`);
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(locsOf(data.sitemap).map((l) => l.slice(site.url.length))).toEqual([
      "/",
      "/dates/850",
      "/dates/asctime",
      "/p?x=%25zz",
      "/p?x=100%25",
      "/q2?arr%5B%5D=1&arr%5B%5D=2",
      "/search?q=e",
    ]);
    expect(data.sitemap).toContain(`<loc>${site.url}/dates/850</loc><lastmod>1994-11-06T08:49:37Z</lastmod>`);
    expect(data.sitemap).toContain(`<loc>${site.url}/dates/asctime</loc><lastmod>1994-11-06T08:49:37Z</lastmod>`);
    expect(site.requests.some((r) => r.includes("file-with-a-"))).toBe(false);
    expect(site.requests.some((r) => r.includes("/search?q=%C3%A9"))).toBe(false);
    expect(await validateSitemap(data.sitemap)).toEqual({ valid: true, errors: [] });
  });

  test("a start URL that normalises past 2,048 characters answers 400 and is not counted", async () => {
    const sent = `${site.url}/${"é".repeat(2000)}`;
    expect(sent.length).toBeLessThanOrEqual(2048);
    const res = await generate(server, key, sent);
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ success: false, message: INVALID_URL });
    expect(res.headers.get("x-ratelimit-remaining")).toBe("99");
  });

  test("a start page redirecting to a URL over 2,048 characters answers 502, and it counts", async () => {
    const res = await generate(server, key, `${site.url}/to-long`);
    expect(res.status).toBe(502);
    expect(await json(res)).toEqual({
      success: false,
      message: `Could not crawl ${site.url}/to-long: redirect to a URL longer than 2,048 characters`,
    });
    expect(res.headers.get("x-ratelimit-remaining")).toBe("98");
  });

  test("a crawl that lists nothing answers 422 with the reason, and it counts", async () => {
    const res = await generate(server, key, `${site.url}/noindex`);
    expect(res.status).toBe(422);
    expect(await json(res)).toEqual({
      success: false,
      message: `Could not crawl ${site.url}/noindex: no indexable page found (the start page is noindex)`,
    });
    expect(res.headers.get("x-ratelimit-remaining")).toBe("97");
  });
});
