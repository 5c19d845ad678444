// The crawl options and report through the compiled executable: a 400 naming the field that
// costs no quota, and one crawl with every option on whose sitemap validates against the sitemaps.org
// schema with the image and xhtml extensions.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { createKey, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { serveSite, type Site } from "../support/site.ts";
import { validateSitemap } from "../support/xmllint.ts";

const html = (body: string) =>
  new Response(`<!doctype html><html><head></head><body>${body}</body></html>`, { headers: { "content-type": "text/html" } });
const a = (...hrefs: string[]) => hrefs.map((h) => `<a href="${h}">x</a>`).join("");

let site: Site;
let server: RunningBinary;
let key: string;
beforeAll(async () => {
  site = await serveSite({
    "/robots.txt": new Response("User-agent: *\nDisallow: /blocked\nSitemap: /sitemap.xml\n"),
    "/": () =>
      new Response(
        `<html><head><link rel="alternate" hreflang="fr" href="/fr/"></head><body><img src="/logo.png">${a("/fr/", "/admin/", "/blocked", "/a?utm_source=x", "/deep/1")}</body></html>`,
        { headers: { "content-type": "text/html" } },
      ),
    // A link too long to be listed and one that is not a URI: counted under invalid, never fetched.
    "/fr/": html(a("/", `/${"q".repeat(2_100)}`, "http://exa mple.com/")),
    "/admin/": html("secret"),
    "/a": html(""),
    "/deep/1": html(a("/deep/2")),
    "/deep/2": html(""),
  });
  // robots.txt names its sitemap by a relative path: only absolute same-origin URLs are read.
  const dbPath = join(tempDir(), "genapi.db");
  key = await createKey(dbPath, "--daily-limit", "100");
  server = await startBinary({ dbPath, args: ["--allow-private-targets", "--max-pages", "50"] });
});
afterAll(async () => {
  await server.stop();
  await site.stop();
});

const post = (body: Record<string, unknown>) =>
  fetch(`${server.url}/api/generate`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify(body),
  });

test("an invalid option: 400 naming the field, before admission", async () => {
  const res = await post({ url: `${site.url}/`, max_pages: 51 });
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({ success: false, message: "max_pages must be an integer from 1 to 50." });
  expect(res.headers.get("x-ratelimit-remaining")).toBe("100");
  expect(site.requests).toEqual([]);
});

test("every option at once: the listed set, the report, and a sitemap valid against the extension schemas", async () => {
  const res = await post({
    url: `${site.url}/`,
    max_pages: 20,
    max_depth: 1,
    exclude: ["/admin/"],
    include: ["/$", "/fr/", "/a$"],
    ignore_query_params: ["utm_*"],
    sitemaps_from_robots: true,
    alternates: true,
    images: true,
  });
  expect(res.status).toBe(200);
  const { data } = (await res.json()) as { data: Record<string, any> };
  const u = site.url;
  expect(data.sitemap).toBe(
    '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">' +
      `<url><loc>${u}/</loc><xhtml:link rel="alternate" hreflang="fr" href="${u}/fr/"/><image:image><image:loc>${u}/logo.png</image:loc></image:image></url>` +
      `<url><loc>${u}/a</loc></url><url><loc>${u}/fr/</loc></url></urlset>\n`,
  );
  expect(await validateSitemap(data.sitemap)).toEqual({ valid: true, errors: [] });
  expect(data.url_count).toBe(3);
  // /admin/ is excluded (never requested), /deep/2 beyond max_depth, /deep/1 listed nowhere by include.
  expect(data.excluded).toEqual({
    robots: 1,
    noindex: 0,
    canonical: 0,
    redirect: 0,
    not_html: 0,
    http_error: 0,
    failed: 0,
    filtered: 3,
    invalid: 2,
  });
  // The response schema gives invalid examples no URI format: the compiled server answers them.
  expect(data.excluded_examples.invalid).toEqual([`${u}/${"q".repeat(200 - u.length - 1)}`, "http://exa mple.com/"]);
  expect(data.excluded_examples.robots).toEqual([`${u}/blocked`]);
  expect([...data.excluded_examples.filtered].sort()).toEqual([`${u}/admin/`, `${u}/deep/1`, `${u}/deep/2`]);
  expect(site.requests.map((r) => r.slice(u.length)).sort()).toEqual(["/", "/a", "/deep/1", "/fr/", "/robots.txt"]);
});
