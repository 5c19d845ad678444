// The crawl options as pure functions: parsing with the contract's messages, the URL filter, the
// alternates/images extraction and their rendering (validated with xmllint against the schemas).
import { describe, expect, test } from "bun:test";
import { defaultCrawlOptions, linkChecksOf, parseCrawlOptions } from "../../src/crawler/options.ts";
import { extractPage, MAX_IMAGES_PER_PAGE, MAX_RESOURCES_PER_PAGE, srcsetUrls } from "../../src/crawler/html/links.ts";
import { createUrlFilter } from "../../src/crawler/filter.ts";
import { renderSitemap, urlsetHead } from "../../src/crawler/output/xml.ts";
import { validateSitemap, validateXml } from "../support/xmllint.ts";

const parse = (body: Record<string, unknown>, maxPagesCap = 500) => parseCrawlOptions(body, { maxPagesCap, hostConcurrency: 4 });
const message = (body: Record<string, unknown>, maxPagesCap = 500) => {
  const parsed = parse(body, maxPagesCap);
  return parsed.ok ? undefined : parsed.message;
};

describe("parseCrawlOptions", () => {
  test("no option: the defaults, max_pages at the server's cap; unknown fields and url are ignored", () => {
    expect(parse({ url: "https://example.com/", colour: "blue" })).toEqual({ ok: true, options: defaultCrawlOptions(500) });
    expect(defaultCrawlOptions(100_000)).toEqual({
      max_pages: 100_000,
      max_depth: null,
      include: [],
      exclude: [],
      ignore_query_params: [],
      sitemaps_from_robots: false,
      alternates: false,
      images: false,
      max_concurrency: null,
      delay_ms: 0,
      render: "never",
      link_report: false,
      robots: "obey",
      noindex: "obey",
      public_origin: null,
      documents: false,
      max_urls_per_file: 50_000,
      sitemap_base_url: null,
      gzip_files: false,
    });
  });

  test("every option, accepted as sent", () => {
    const body = {
      max_pages: 20,
      max_depth: 0,
      include: ["/blog/", "/*.html$"],
      exclude: ["/private"],
      ignore_query_params: ["utm_*", "sessionid"],
      sitemaps_from_robots: true,
      alternates: true,
      images: false,
      max_concurrency: 2,
      delay_ms: 250,
      render: "never" as const,
      link_report: true,
      robots: "obey" as const,
      noindex: "ignore" as const,
      public_origin: "https://www.example.com",
      documents: true,
      max_urls_per_file: 40_000,
      sitemap_base_url: "https://www.example.com/sitemaps/",
      gzip_files: true,
    };
    expect(parseCrawlOptions(body, { maxPagesCap: 500, hostConcurrency: 4, publishes: true })).toEqual({ ok: true, options: body });
  });

  test("robots and noindex: obey or ignore; ignore needs auth where the caller says so (the API), not otherwise (the CLI)", () => {
    const api = (body: Record<string, unknown>) => parseCrawlOptions(body, { maxPagesCap: 500, hostConcurrency: 4, ignoreNeedsAuth: true });
    for (const field of ["robots", "noindex"]) {
      for (const value of ["Ignore", "skip", true, null, 1])
        expect(message({ [field]: value })).toBe(`${field} must be one of: obey, ignore.`);
      expect(api({ [field]: "ignore" })).toEqual({ ok: false, message: `${field} "ignore" needs auth.` });
      expect(api({ [field]: "obey" })).toMatchObject({ ok: true, options: { [field]: "obey" } });
      expect(api({ [field]: "ignore", auth: { basic: { username: "u", password: "p" } } })).toMatchObject({
        ok: true,
        options: { [field]: "ignore" },
      });
      expect(parse({ [field]: "ignore" })).toMatchObject({ ok: true, options: { [field]: "ignore" } });
    }
  });

  test("public_origin: an http(s) origin, written as its origin", () => {
    const refused = "public_origin must be an http(s) origin such as https://www.example.com.";
    for (const value of [
      "www.example.com",
      "ftp://example.com",
      "https://example.com/blog",
      "https://example.com/?a",
      "https://example.com#x",
      "https://u:p@example.com",
      "",
      7,
      null,
      "https://",
    ]) {
      expect(message({ public_origin: value })).toBe(refused);
    }
    expect(parse({ public_origin: "HTTPS://WWW.Example.com:443/" })).toMatchObject({
      ok: true,
      options: { public_origin: "https://www.example.com" },
    });
    expect(parse({ public_origin: "http://example.com:8080" })).toMatchObject({
      ok: true,
      options: { public_origin: "http://example.com:8080" },
    });
  });

  test("documents: true or false", () => {
    for (const value of ["true", 1, null]) expect(message({ documents: value })).toBe("documents must be true or false.");
    expect(parse({ documents: true })).toMatchObject({ ok: true, options: { documents: true } });
  });

  test("publishing fields: only for crawls that write files; each checked", () => {
    for (const [field, value] of [
      ["max_urls_per_file", 10],
      ["sitemap_base_url", "https://example.com/"],
      ["gzip_files", true],
    ] as const) {
      expect(message({ [field]: value })).toBe(`${field} is only for jobs.`);
    }
    const jobs = (body: Record<string, unknown>) => {
      const parsed = parseCrawlOptions(body, { maxPagesCap: 500, hostConcurrency: 4, publishes: true });
      return parsed.ok ? parsed.options : parsed.message;
    };
    for (const value of [0, 50_001, 1.5, "10", null])
      expect(jobs({ max_urls_per_file: value })).toBe("max_urls_per_file must be an integer from 1 to 50000.");
    for (const value of ["https://example.com/sitemaps", "https://example.com/s/?x=1", "ftp://example.com/", "/sitemaps/", 1]) {
      expect(jobs({ sitemap_base_url: value })).toBe(
        "sitemap_base_url must be an http(s) URL that ends with /, such as https://www.example.com/sitemaps/.",
      );
    }
    for (const value of ["yes", 0]) expect(jobs({ gzip_files: value })).toBe("gzip_files must be true or false.");
    expect(jobs({ max_urls_per_file: 1, sitemap_base_url: "https://CDN.example.com:443/maps/", gzip_files: true })).toMatchObject({
      max_urls_per_file: 1,
      sitemap_base_url: "https://cdn.example.com/maps/",
      gzip_files: true,
    });
  });

  test("link_report: true, false or {external, resources} of booleans, named in the message", () => {
    const shape = 'link_report must be true, false or an object {"external": true|false, "resources": true|false}.';
    for (const value of ["true", 1, null, [], [true]]) expect(message({ link_report: value })).toBe(shape);
    expect(message({ link_report: { external: "yes" } })).toBe("link_report.external must be true or false.");
    expect(message({ link_report: { external: true, resources: 1 } })).toBe("link_report.resources must be true or false.");
    for (const key of ["extern", "pages", "__proto__x"])
      expect(message({ link_report: { external: true, [key]: true } })).toBe(
        "link_report takes only external and resources (true or false each).",
      );
    expect(parse({ link_report: true })).toMatchObject({ ok: true, options: { link_report: true } });
    // An object is the report with its checks, each false when absent; `true` is both false.
    expect(parse({ link_report: { external: true } })).toMatchObject({
      ok: true,
      options: { link_report: { external: true, resources: false } },
    });
    expect(parse({ link_report: {} })).toMatchObject({ ok: true, options: { link_report: { external: false, resources: false } } });
    const both = parse({ link_report: { external: true, resources: true } });
    expect(both.ok && linkChecksOf(both.options)).toEqual({ external: true, resources: true });
    const plain = parse({ link_report: true });
    expect(plain.ok && linkChecksOf(plain.options)).toEqual({ external: false, resources: false });
  });

  test("max_pages: an integer from 1 to the cap, the cap named in the message", () => {
    for (const value of [0, -1, 501, 1.5, "10", null, true, 2 ** 53]) {
      expect(message({ max_pages: value })).toBe("max_pages must be an integer from 1 to 500.");
    }
    expect(message({ max_pages: 100_001 }, 100_000)).toBe("max_pages must be an integer from 1 to 100000.");
    expect(parse({ max_pages: 500 })).toMatchObject({ ok: true, options: { max_pages: 500 } });
    expect(parse({ max_pages: 1 })).toMatchObject({ ok: true, options: { max_pages: 1 } });
  });

  test("max_depth: an integer of 0 or more", () => {
    for (const value of [-1, 0.5, "1", null, false])
      expect(message({ max_depth: value })).toBe("max_depth must be an integer of 0 or more.");
    expect(parse({ max_depth: 0 })).toMatchObject({ ok: true, options: { max_depth: 0 } });
  });

  test("include and exclude: at most 50 strings, each a pattern starting with /", () => {
    for (const field of ["include", "exclude"]) {
      for (const value of ["/a", [1], ["/a", null], {}, Array(51).fill("/a")]) {
        expect(message({ [field]: value })).toBe(`${field} must be an array of at most 50 patterns (strings).`);
      }
      expect(message({ [field]: ["/a", "b"] })).toBe(`${field}[1] must be a pattern that starts with / and has at most 2048 characters.`);
      expect(message({ [field]: [""] })).toBe(`${field}[0] must be a pattern that starts with / and has at most 2048 characters.`);
      expect(message({ [field]: [`/${"a".repeat(2048)}`] })).toBe(
        `${field}[0] must be a pattern that starts with / and has at most 2048 characters.`,
      );
      expect(parse({ [field]: Array(50).fill("/*") }).ok).toBe(true);
      expect(parse({ [field]: [] })).toMatchObject({ ok: true, options: { [field]: [] } });
    }
  });

  test("ignore_query_params: at most 50 non-empty names", () => {
    expect(message({ ignore_query_params: "utm_*" })).toBe("ignore_query_params must be an array of at most 50 parameter names (strings).");
    expect(message({ ignore_query_params: Array(51).fill("a") })).toBe(
      "ignore_query_params must be an array of at most 50 parameter names (strings).",
    );
    expect(message({ ignore_query_params: ["a", ""] })).toBe("ignore_query_params[1] must be a parameter name of 1 to 256 characters.");
    expect(message({ ignore_query_params: ["x".repeat(257)] })).toBe(
      "ignore_query_params[0] must be a parameter name of 1 to 256 characters.",
    );
  });

  test("booleans are JSON booleans", () => {
    for (const field of ["sitemaps_from_robots", "alternates", "images"]) {
      for (const value of ["true", 1, 0, null]) expect(message({ [field]: value })).toBe(`${field} must be true or false.`);
      expect(parse({ [field]: true })).toMatchObject({ ok: true, options: { [field]: true } });
    }
  });

  test("the first invalid field in the contract's order answers", () => {
    expect(message({ images: "yes", max_pages: 0 })).toBe("max_pages must be an integer from 1 to 500.");
  });
});

const filter = (options: Partial<Parameters<typeof createUrlFilter>[0]>) =>
  createUrlFilter({ include: [], exclude: [], ignore_query_params: [], max_depth: null, ...options });
const S = "https://site.test";

describe("createUrlFilter", () => {
  test("no option: inactive, everything passes unchanged", () => {
    const f = filter({});
    expect(f.active).toBe(false);
    expect(f.strip(`${S}/a?utm_source=x`)).toBe(`${S}/a?utm_source=x`);
    expect([f.excluded(`${S}/a`), f.included(`${S}/a`), f.withinDepth(1_000_000)]).toEqual([false, true, true]);
  });

  test("include/exclude use robots.txt syntax on path and query: prefix, *, $", () => {
    const f = filter({ exclude: ["/private", "/*.pdf$", "/*?print="], include: ["/blog/", "/$"] });
    expect(f.active).toBe(true);
    expect(f.excluded(`${S}/private/x`)).toBe(true);
    expect(f.excluded(`${S}/privately`)).toBe(true);
    expect(f.excluded(`${S}/files/a.pdf`)).toBe(true);
    expect(f.excluded(`${S}/files/a.pdf?dl=1`)).toBe(false);
    expect(f.excluded(`${S}/post?print=1`)).toBe(true);
    expect(f.excluded(`${S}/Private`)).toBe(false);
    expect(f.included(`${S}/`)).toBe(true);
    expect(f.included(`${S}/blog/post`)).toBe(true);
    expect(f.included(`${S}/blog`)).toBe(false);
    expect(f.included(`${S}/about`)).toBe(false);
  });

  test("patterns are percent-encoded like URLs: é and %C3%A9 match alike", () => {
    const f = filter({ exclude: ["/café"] });
    expect(f.excluded(`${S}/caf%C3%A9/menu`)).toBe(true);
  });

  test("ignore_query_params removes matching names, keeps the rest in order, drops an emptied query", () => {
    const f = filter({ ignore_query_params: ["utm_*", "sid", "*_ref"] });
    expect(f.strip(`${S}/a?utm_source=x&id=2&utm_medium=y&sid=9&b`)).toBe(`${S}/a?id=2&b`);
    expect(f.strip(`${S}/a?utm_source=x&sid`)).toBe(`${S}/a`);
    expect(f.strip(`${S}/a?sidx=1&SID=2&x_ref=3&ref=4`)).toBe(`${S}/a?sidx=1&SID=2&ref=4`);
    expect(f.strip(`${S}/a?utm%5Fsource=x&k=1`)).toBe(`${S}/a?k=1`);
    expect(f.strip(`${S}/a`)).toBe(`${S}/a`);
    expect(f.strip(`${S}/a?`)).toBe(`${S}/a`);
  });

  test('["*"] drops every query', () => {
    expect(filter({ ignore_query_params: ["*"] }).strip(`${S}/a?x=1&y=2`)).toBe(`${S}/a`);
  });

  test("a hostile wildcard name is matched in linear time", () => {
    const f = filter({ ignore_query_params: [`${"a*".repeat(120)}b`] });
    const url = `${S}/?${"a".repeat(2000)}=1`;
    const started = performance.now();
    expect(f.strip(url)).toBe(url);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  test("max_depth: the start page is depth 0", () => {
    const f = filter({ max_depth: 1 });
    expect([f.withinDepth(0), f.withinDepth(1), f.withinDepth(2)]).toEqual([true, true, false]);
    expect(filter({ max_depth: 0 }).withinDepth(1)).toBe(false);
  });
});

const PAGE = "http://site.test/dir/page";

describe("extractPage resources (the link report's resource checks)", () => {
  const html = `<base href="/b/">
    <link rel="stylesheet" href="site.css"><link rel="Preload Stylesheet" href="/two.css"><link rel="icon" href="/fav.ico">
    <script src="https://cdn.test/app.js?v=1&amp;x=2"></script><script>var s = '<img src="/not-a-tag.png">';</script>
    <img src="a.png" srcset="a-2x.png 2x, /c,d.png 3x,https://cdn.test/e.png 600w">
    <img src="">
    <img src="data:image/png;base64,AAAA">
    <picture><source srcset="/s1.webp 1x, /s2.webp 2x" type="image/webp"><source src="/s3.webm"></picture>
    <video src="/v.mp4" poster="/poster.jpg"></video><audio src="/a.mp3"></audio>
    <img src="a.png"><a href="/page">a page is no resource</a>`;

  test("gathered only when asked for; then every kind, resolved against the base, unique, in document order", () => {
    expect(extractPage(html, PAGE, "genapi", 100).resources).toBeUndefined();
    const { resources, links } = extractPage(html, PAGE, "genapi", 100, { resources: true });
    expect(resources).toEqual([
      "http://site.test/b/site.css",
      "http://site.test/two.css",
      "https://cdn.test/app.js?v=1&x=2",
      "http://site.test/b/a.png",
      "http://site.test/b/a-2x.png",
      "http://site.test/c,d.png",
      "https://cdn.test/e.png",
      "http://site.test/s1.webp",
      "http://site.test/s2.webp",
      "http://site.test/s3.webm",
      "http://site.test/v.mp4",
      "http://site.test/poster.jpg",
      "http://site.test/a.mp3",
    ]);
    expect(links).toEqual(["http://site.test/page"]);
  });

  test("srcset candidates: a URL up to whitespace, trailing commas off, descriptors up to a comma outside parentheses", () => {
    expect(srcsetUrls("a.png")).toEqual(["a.png"]);
    expect(srcsetUrls(" a.png 1x,b.png 2x , c.png")).toEqual(["a.png", "b.png", "c.png"]);
    expect(srcsetUrls("a.png,b.png")).toEqual(["a.png,b.png"]);
    expect(srcsetUrls("a.png, b.png,, ,")).toEqual(["a.png", "b.png"]);
    expect(srcsetUrls("a.png (max-width: 1px, 2px) 1x, b.png")).toEqual(["a.png", "b.png"]);
    expect(srcsetUrls("")).toEqual([]);
  });

  test(`at most ${MAX_RESOURCES_PER_PAGE.toLocaleString("en-US")} a page`, () => {
    const many = Array.from({ length: MAX_RESOURCES_PER_PAGE + 5 }, (_, i) => `<img src="/i${i}.png">`).join("");
    expect(extractPage(many, PAGE, "genapi", 100, { resources: true }).resources).toHaveLength(MAX_RESOURCES_PER_PAGE);
  });
});

describe("extractPage alternates and images", () => {
  test("gathered only when asked for", () => {
    const html = `<link rel="alternate" hreflang="fr" href="/fr/"><img src="/a.png">`;
    const facts = extractPage(html, PAGE, "genapi", 100);
    expect(facts.alternates).toBeUndefined();
    expect(facts.images).toBeUndefined();
  });

  test("hreflang alternates: resolved against the base, valid language tags only, unique", () => {
    const html = `<base href="/b/">
      <link rel="alternate" hreflang="fr" href="fr/">
      <link rel="Alternate" hreflang="x-default" href="http://site.test/">
      <link rel="alternate" hreflang="de-CH" href="https://other.test/de?x=1&amp;y=2">
      <link rel="alternate" hreflang="fr" href="fr/#top">
      <link rel="alternate" href="/no-lang">
      <link rel="alternate" hreflang="not a tag" href="/bad">
      <link rel="alternate" hreflang="es" href="mailto:x@site.test">
      <link rel="alternate" type="application/rss+xml" href="/feed">
      <link rel="stylesheet" hreflang="en" href="/style.css">`;
    expect(extractPage(html, PAGE, "genapi", 100, { alternates: true }).alternates).toEqual([
      { hreflang: "fr", href: "http://site.test/b/fr/" },
      { hreflang: "x-default", href: "http://site.test/" },
      { hreflang: "de-CH", href: "https://other.test/de?x=1&y=2" },
    ]);
  });

  test("images: absolute http(s) after resolution, unique, data: and other schemes dropped", () => {
    const html = `<img src="/a.png"><img src="b.jpg"><img src="//cdn.test/c.webp"><img src="/a.png">
      <img src="data:image/png;base64,AAAA"><img src="javascript:x"><img alt="no src"><img src=" /spaced.png ">
      <picture><source srcset="/s.webp"><img src="/pic.jpg"></picture>`;
    expect(extractPage(html, PAGE, "genapi", 100, { images: true }).images).toEqual([
      "http://site.test/a.png",
      "http://site.test/dir/b.jpg",
      "http://cdn.test/c.webp",
      "http://site.test/spaced.png",
      "http://site.test/pic.jpg",
    ]);
  });

  test("at most 1,000 images per page, even from a page repeating one icon thousands of times", () => {
    const html = `${'<img src="/icon.png">'.repeat(20_000)}${Array.from({ length: 1_500 }, (_, i) => `<img src="/i${i}.png">`).join("")}`;
    const images = extractPage(html, PAGE, "genapi", 100, { images: true }).images!;
    expect(images).toHaveLength(MAX_IMAGES_PER_PAGE);
    expect(images.slice(0, 2)).toEqual(["http://site.test/icon.png", "http://site.test/i0.png"]);
  });

  test("links, canonical and directives are the same with the extras on", () => {
    const html = `<link rel="canonical" href="/c"><meta name="robots" content="noindex"><a href="/x">x</a><img src="/i.png">`;
    const plain = extractPage(html, PAGE, "genapi", 100);
    const extra = extractPage(html, PAGE, "genapi", 100, { alternates: true, images: true });
    expect({ ...extra, alternates: undefined, images: undefined }).toEqual({ ...plain, alternates: undefined, images: undefined });
  });
});

describe("rendering the extensions", () => {
  const entries = [
    {
      loc: "https://site.test/",
      lastmod: "2026-11-21T10:15:00Z",
      alternates: [
        { hreflang: "fr", href: "https://site.test/fr/" },
        { hreflang: "x-default", href: "https://site.test/?a=1&b=2" },
      ],
      images: ["https://cdn.test/a.png", "https://site.test/b.jpg?s=1&t=2"],
    },
    { loc: "https://site.test/plain", alternates: [], images: [] },
  ];

  test("namespaces are declared only for the features in use", () => {
    expect(urlsetHead()).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
    expect(urlsetHead({ alternates: true })).toContain(' xmlns:xhtml="http://www.w3.org/1999/xhtml">');
    expect(urlsetHead({ images: true })).toContain(' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">');
  });

  test("xhtml:link and image:image after loc and lastmod, escaped", () => {
    const xml = renderSitemap(entries, { alternates: true, images: true });
    expect(xml).toContain(
      "<url><loc>https://site.test/</loc><lastmod>2026-11-21T10:15:00Z</lastmod>" +
        '<xhtml:link rel="alternate" hreflang="fr" href="https://site.test/fr/"/>' +
        '<xhtml:link rel="alternate" hreflang="x-default" href="https://site.test/?a=1&amp;b=2"/>' +
        "<image:image><image:loc>https://cdn.test/a.png</image:loc></image:image>" +
        "<image:image><image:loc>https://site.test/b.jpg?s=1&amp;t=2</image:loc></image:image></url>",
    );
    expect(xml).toContain("<url><loc>https://site.test/plain</loc></url>");
  });

  test("validate against sitemap.xsd with the image and xhtml schemas (xmllint)", async () => {
    for (const features of [{ alternates: true, images: true }, { alternates: true }, { images: true }]) {
      const used = entries.map((e) => ({
        ...e,
        alternates: features.alternates ? e.alternates : undefined,
        images: features.images ? e.images : undefined,
      }));
      expect(await validateSitemap(renderSitemap(used, features))).toEqual({ valid: true, errors: [] });
    }
    expect(await validateSitemap(renderSitemap([{ loc: "https://site.test/" }]))).toEqual({ valid: true, errors: [] });
  });

  test("the validator refuses what the schemas refuse", async () => {
    // A <url> without <loc>, a <lastmod> of the wrong form, an <image> outside its namespace: each
    // refused with xmllint's message, where the same document with the fault mended validates.
    const sm = "{http://www.sitemaps.org/schemas/sitemap/0.9}";
    const refused = (message: string) => ({ valid: false, errors: [`sitemap.xml:3: Schemas validity error : Element '${message}`] });
    const url = (inner: string) =>
      `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n<url>${inner}</url>\n</urlset>\n`;
    const loc = "<loc>https://site.test/</loc>";
    expect(await validateSitemap(url(`${loc}<lastmod>2024-01-02</lastmod>`))).toEqual({ valid: true, errors: [] });
    expect(await validateSitemap(url("<lastmod>2024-01-02</lastmod>"))).toEqual(
      refused(`${sm}lastmod': This element is not expected. Expected is ( ${sm}loc ).`),
    );
    expect(await validateSitemap(url(`${loc}<lastmod>02/01/2024</lastmod>`))).toEqual(
      refused(`${sm}lastmod': '02/01/2024' is not a valid value of the union type '${sm}tLastmod'.`),
    );
    const image = renderSitemap([{ loc: "https://site.test/", images: ["https://site.test/a.png"] }], { images: true });
    expect(await validateSitemap(image)).toEqual({ valid: true, errors: [] });
    const unprefixed = image.replaceAll("image:image>", "image>").replaceAll("image:loc>", "loc>");
    expect((await validateSitemap(unprefixed)).errors).toEqual([
      expect.stringContaining(`Schemas validity error : Element '${sm}image': This element is not expected.`),
    ]);
    // An empty urlset, an extension without its schema, an invalid hreflang, a changefreq out of place.
    expect((await validateSitemap(renderSitemap([]))).valid).toBe(false);
    const undeclared = renderSitemap([{ loc: "https://site.test/", images: ["https://site.test/a.png"] }], { images: true });
    expect((await validateXml(undeclared, "sitemap")).errors.join("\n")).toContain("No matching global element declaration");
    const badLang = renderSitemap([{ loc: "https://site.test/", alternates: [{ hreflang: "en us", href: "https://site.test/" }] }], {
      alternates: true,
    });
    expect((await validateSitemap(badLang)).valid).toBe(false);
    const misplaced = renderSitemap([{ loc: "https://site.test/" }]).replace("</loc>", "</loc><priority>2</priority>");
    expect((await validateSitemap(misplaced)).valid).toBe(false);
  });
});

describe("the exclusion report", () => {
  test("every reason present, counted, at most 5 examples each", async () => {
    const { emptyExclusionReport, recordExclusion, EXCLUSION_REASONS } = await import("../../src/crawler/exclusions.ts");
    const report = emptyExclusionReport();
    expect(Object.keys(report.excluded)).toEqual([...EXCLUSION_REASONS]);
    expect(Object.keys(report.excluded_examples)).toEqual([...EXCLUSION_REASONS]);
    for (let i = 0; i < 7; i++) recordExclusion(report, "noindex", `${S}/n${i}`);
    recordExclusion(report, "robots", `${S}/r`);
    expect(report.excluded).toEqual({
      robots: 1,
      noindex: 7,
      canonical: 0,
      redirect: 0,
      not_html: 0,
      http_error: 0,
      failed: 0,
      filtered: 0,
      invalid: 0,
    });
    expect(report.excluded_examples.noindex).toEqual([0, 1, 2, 3, 4].map((i) => `${S}/n${i}`));
    expect(report.excluded_examples.filtered).toEqual([]);
  });
});
