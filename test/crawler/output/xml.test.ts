import { expect, test } from "bun:test";
import { escapeXml, fitSitemap, renderSitemap } from "../../../src/crawler/output/xml.ts";

const HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">';

test("renders the sitemaps.org 0.9 urlset, with lastmod only when known", () => {
  const xml = renderSitemap([{ loc: "https://site.test/", lastmod: "2026-11-21T10:15:00Z" }, { loc: "https://site.test/a" }]);
  expect(xml).toBe(
    HEAD +
      "<url><loc>https://site.test/</loc><lastmod>2026-11-21T10:15:00Z</lastmod></url>" +
      "<url><loc>https://site.test/a</loc></url>" +
      "</urlset>\n",
  );
  expect(xml).not.toContain("changefreq");
  expect(xml).not.toContain("priority");
});

test("an empty sitemap is still a complete document", () => {
  expect(renderSitemap([])).toBe(`${HEAD}</urlset>\n`);
});

test("escapes the five XML special characters", () => {
  expect(renderSitemap([{ loc: `https://site.test/?a=1&b='2'&c="<3>"` }])).toBe(
    `${HEAD}<url><loc>https://site.test/?a=1&amp;b=&apos;2&apos;&amp;c=&quot;&lt;3&gt;&quot;</loc></url></urlset>\n`,
  );
});

test("escaped text reads back as the original", () => {
  const unescapeXml = (s: string) =>
    s.replace(/&(amp|lt|gt|apos|quot);/g, (_, name: string) => ({ amp: "&", lt: "<", gt: ">", apos: "'", quot: '"' })[name]!);
  for (const original of [`&amp;`, `a&b<c>d'e"f`, "&&<<", "plain", "&lt;"]) {
    const escaped = escapeXml(original);
    expect(escaped).not.toMatch(/[<>'"]|&(?!(amp|lt|gt|apos|quot);)/);
    expect(unescapeXml(escaped)).toBe(original);
  }
});

test("fitSitemap sorts by loc in code-unit order", () => {
  const { entries, truncated } = fitSitemap(
    [{ loc: "https://s.test/b" }, { loc: "https://s.test/B" }, { loc: "https://s.test/a" }, { loc: "https://s.test/" }],
    10,
    1e6,
  );
  expect(entries.map((e) => e.loc)).toEqual(["https://s.test/", "https://s.test/B", "https://s.test/a", "https://s.test/b"]);
  expect(truncated).toBe(false);
});

test("fitSitemap keeps at most maxUrls entries", () => {
  const all = ["c", "a", "b"].map((p) => ({ loc: `https://s.test/${p}` }));
  const fit = fitSitemap(all, 2, 1e6);
  expect(fit.entries.map((e) => e.loc)).toEqual(["https://s.test/a", "https://s.test/b"]);
  expect(fit.truncated).toBe(true);
});

test("fitSitemap keeps the document within maxBytes", () => {
  const all = ["a", "b", "c"].map((p) => ({ loc: `https://s.test/${p}` }));
  const two = renderSitemap(all.slice(0, 2));
  const exact = fitSitemap(all, 10, Buffer.byteLength(two));
  expect(exact.entries).toHaveLength(2);
  expect(exact.truncated).toBe(true);
  expect(fitSitemap(all, 10, Buffer.byteLength(renderSitemap(all))).truncated).toBe(false);
});
