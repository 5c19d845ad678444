// The sitemap writer shared by jobs and `genapi crawl`: one <urlset> while the result fits one file,
// else parts within both limits and an index over them, every file valid against the schemas.
import { describe, expect, test } from "bun:test";
import { renderSitemapIndex, writeSitemap } from "../../../src/crawler/output/sitemap-writer.ts";
import { renderSitemap, type SitemapEntry } from "../../../src/crawler/output/xml.ts";
import { validateSitemap } from "../../support/xmllint.ts";

const entries = (n: number): SitemapEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    loc: `https://example.com/p/${String(i).padStart(6, "0")}?a=1&b=2`,
    lastmod: "2026-11-01T00:00:00Z",
  }));

async function collect(
  input: Iterable<SitemapEntry> | AsyncIterable<SitemapEntry>,
  limits?: { urls: number; bytes: number },
  features = {},
) {
  const files = new Map<number, string>();
  const order: number[] = [];
  const written = await writeSitemap(input, {
    features,
    limits,
    partLoc: (n) => `https://example.com/sitemap-${n}.xml`,
    sink: (part, xml) => {
      order.push(part);
      files.set(part, xml);
    },
  });
  return { files, order, written };
}

describe("writeSitemap", () => {
  test("a result that fits is one <urlset>, byte for byte the API's sitemap", async () => {
    const list = entries(20);
    const { files, order, written } = await collect(list);
    expect(written).toEqual({ urlCount: 20, parts: 0 });
    expect(order).toEqual([0]);
    expect(files.get(0)).toBe(renderSitemap(list));
    expect((await validateSitemap(files.get(0)!)).errors).toEqual([]);
  });

  test("an empty result is one empty <urlset>", async () => {
    const { files, written } = await collect([]);
    expect(written).toEqual({ urlCount: 0, parts: 0 });
    expect(files.get(0)).toBe(renderSitemap([]));
  });

  test("past the URL limit: parts of at most that many URLs, then the index over them", async () => {
    const list = entries(25);
    const { files, order, written } = await collect(list, { urls: 10, bytes: 1_000_000 });
    expect(written).toEqual({ urlCount: 25, parts: 3 });
    expect(order).toEqual([1, 2, 3, 0]);
    expect(files.get(1)).toBe(renderSitemap(list.slice(0, 10)));
    expect(files.get(3)).toBe(renderSitemap(list.slice(20)));
    expect(files.get(0)).toBe(renderSitemapIndex([1, 2, 3].map((n) => `https://example.com/sitemap-${n}.xml`)));
    for (const xml of files.values()) expect((await validateSitemap(xml)).errors).toEqual([]);
  });

  test("past the byte limit: every part, head and tail included, within it; nothing lost or repeated", async () => {
    const list = entries(100);
    const bytes = 2_000;
    const { files, written } = await collect(
      (async function* () {
        yield* list;
      })(),
      { urls: 50_000, bytes },
    );
    expect(written.parts).toBeGreaterThan(1);
    const locs: string[] = [];
    for (let n = 1; n <= written.parts; n++) {
      const xml = files.get(n)!;
      expect(Buffer.byteLength(xml)).toBeLessThanOrEqual(bytes);
      locs.push(...[...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!.replaceAll("&amp;", "&")));
    }
    expect(locs).toEqual(list.map((e) => e.loc));
  });

  test("the extensions' namespaces go in every part's head", async () => {
    const list = entries(4).map((e) => ({ ...e, images: [`${e.loc.split("?")[0]}.png`] }));
    const { files } = await collect(list, { urls: 2, bytes: 1_000_000 }, { images: true });
    for (const n of [1, 2]) {
      expect(files.get(n)).toContain('xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"');
      expect((await validateSitemap(files.get(n)!)).errors).toEqual([]);
    }
  });

  test("an index <loc> is escaped", () => {
    expect(renderSitemapIndex(["https://example.com/a&b-1.xml"])).toContain("<loc>https://example.com/a&amp;b-1.xml</loc>");
  });
});
