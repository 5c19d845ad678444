import { describe, expect, test } from "bun:test";
import { decodeHTMLAttribute } from "entities";
import { decodeHtml, extractPage } from "../../../src/crawler/html/links.ts";
import { normaliseUrl } from "../../../src/crawler/url/url.ts";

const PAGE = "http://site.test/dir/page";
const extract = (html: string, maxLinks = 100) => extractPage(html, PAGE, "genapi", maxLinks);

describe("extractPage links", () => {
  test("<a href> and <area href>, relative and protocol-relative, resolved against the page URL", () => {
    const html = `<a href="/abs">1</a><a href="rel">2</a><a href="../up">3</a><map><area href="/area"></map>
      <a href="//other.test/x">4</a><a href="https://site.test/secure">5</a><a>no href</a><link href="/stylesheet">`;
    expect(extract(html).links).toEqual([
      "http://site.test/abs",
      "http://site.test/dir/rel",
      "http://site.test/up",
      "http://site.test/area",
      "http://other.test/x",
      "https://site.test/secure",
    ]);
  });

  test("the first <base href> (itself resolved against the page URL) is the base", () => {
    const html = `<head><base href="/sub/"><base href="/ignored/"></head><a href="x">x</a><a href="/root">r</a>`;
    expect(extract(html).links).toEqual(["http://site.test/sub/x", "http://site.test/root"]);
    expect(extract(`<base target="_blank"><a href="x">x</a>`).links).toEqual(["http://site.test/dir/x"]);
  });

  test("decodes entities in attributes", () => {
    const html = `<a href="/p?a=1&amp;b=2">1</a><a href="/caf&eacute;">2</a><a href="/&#x41;&#66;">3</a>`;
    expect(extract(html).links).toEqual(["http://site.test/p?a=1&b=2", "http://site.test/caf%C3%A9", "http://site.test/AB"]);
  });

  test("hrefs with &amp; alone or with other references read as the entities decoder reads them", () => {
    const hrefs = [
      "/p?a=1&amp;b=2",
      "/p?a=1&amp;b=2&amp;c=3",
      "/p?a=&amp;amp;",
      "/p?a=1&amp",
      "/p?a=1&ampb=2",
      "/p?a=1&amp;b=&eacute;",
      "/p?x=&lt;&amp;",
      "/p?a=1&b=2",
      "/p?a=1&amp;&",
      "/p?&amp;&#38;",
      "/&amp;/x",
    ];
    for (const href of hrefs) {
      const expected = normaliseUrl(decodeHTMLAttribute(href), PAGE);
      expect([href, extract(`<a href="${href}">x</a>`).links]).toEqual([href, expected === null ? [] : [expected]]);
    }
  });

  test("skips non-http(s) schemes and unparsable hrefs", () => {
    const html = `<a href="mailto:a@site.test">m</a><a href="javascript:void(0)">j</a><a href="tel:+1">t</a>
      <a href="data:text/html,hi">d</a><a href="ftp://site.test/f">f</a><a href="http://[bad/">b</a><a href="/ok">ok</a>`;
    expect(extract(html).links).toEqual(["http://site.test/ok"]);
    // Only what the parser refuses is not a valid URI: other schemes are valid, just not the crawl's.
    expect(extract(html).invalid).toEqual(["http://[bad/"]);
  });

  test("hrefs that are not a valid URI: as written, each once, at most maxLinks (then the page is truncated)", () => {
    const html = `<a href="http://exa mple.com/">1</a><a href="http://exa mple.com/">2</a><a href="https://[::1/">3</a><a href="/ok">`;
    expect(extract(html)).toMatchObject({
      links: ["http://site.test/ok"],
      invalid: ["http://exa mple.com/", "https://[::1/"],
      linksDropped: false,
    });
    expect(extract(html, 1)).toMatchObject({ links: ["http://site.test/ok"], invalid: ["http://exa mple.com/"], linksDropped: true });
    expect(extract(`<meta name="robots" content="nofollow">${html}`).invalid).toEqual([]);
  });

  test("drops fragments and repeats, keeping document order", () => {
    const html = `<a href="/b#one">1</a><a href="/a">2</a><a href="/b#two">3</a><a href="/B">4</a>`;
    expect(extract(html).links).toEqual(["http://site.test/b", "http://site.test/a", "http://site.test/B"]);
  });

  test("markup inside script, style, textarea, title and comments is not a link", () => {
    const html = `<title><a href="/t"></a></title><script>document.write('<a href="/s">')</script>
      <style>/* <a href="/st"> */</style><textarea><a href="/ta"></a></textarea><!-- <a href="/c"> -->
      <pre><a href="/pre">in pre</a></pre><noscript><a href="/ns">no js</a></noscript>`;
    expect(extract(html).links).toEqual(["http://site.test/pre", "http://site.test/ns"]);
  });

  test('rel="nofollow" (any case, among other tokens) is not followed', () => {
    const html = `<a href="/a" rel="nofollow">1</a><a href="/b" rel="external NoFollow">2</a><a href="/c" rel="external">3</a>`;
    expect(extract(html).links).toEqual(["http://site.test/c"]);
  });

  test("keeps at most maxLinks distinct links and says it dropped some", () => {
    const html = ["/1", "/2", "/1", "/3", "/4"].map((h) => `<a href="${h}">x</a>`).join("");
    expect(extract(html, 3)).toMatchObject({
      links: ["http://site.test/1", "http://site.test/2", "http://site.test/3"],
      linksDropped: true,
    });
    expect(extract(html, 4).linksDropped).toBe(false);
  });
});

describe("extractPage reads HTML as a browser without scripts tokenizes it", () => {
  test("the first <base href> is the document base, also for the links before it", () => {
    const html = `<a href="x">x</a><base href="/sub/"><a href="y">y</a><base href="/other/"><link rel="canonical" href="c">`;
    expect(extract(html)).toMatchObject({
      links: ["http://site.test/sub/x", "http://site.test/sub/y"],
      canonical: "http://site.test/sub/c",
    });
  });

  test("unclosed anchors are each a link, in document order", () => {
    expect(extract(`<a href="/a"><a href="/b"><a href="/c"><div><a href="/d">`).links).toEqual([
      "http://site.test/a",
      "http://site.test/b",
      "http://site.test/c",
      "http://site.test/d",
    ]);
  });

  test("markup inside iframe, noembed, noframes, xmp and after plaintext is not a link", () => {
    const html = `<iframe><a href="/if"></iframe><noembed><a href="/ne"></noembed><noframes><a href="/nf"></noframes>
      <xmp><a href="/x"></xmp><a href="/ok"><plaintext><a href="/pt">`;
    expect(extract(html).links).toEqual(["http://site.test/ok"]);
  });

  test("a noscript's content is markup, read in document order: its base, meta and links count", () => {
    expect(extract(`<a href="/1"><noscript><a href="/2"></noscript><a href="/3">`).links).toEqual([
      "http://site.test/1",
      "http://site.test/2",
      "http://site.test/3",
    ]);
    expect(extract(`<noscript><base href="/ns/"></noscript><base href="/late/"><a href="x">`).links).toEqual(["http://site.test/ns/x"]);
    expect(extract(`<noscript><meta name="robots" content="nofollow"></noscript><a href="/a">`)).toMatchObject({
      directives: { noindex: false, nofollow: true },
      links: [],
    });
  });

  test("comments, including the abrupt <!--> and <!--->, hide nothing after them", () => {
    expect(extract(`<!-- <a href="/c1"> --><!--><a href="/a"><!---><a href="/b"><!-- unclosed <a href="/c2">`).links).toEqual([
      "http://site.test/a",
      "http://site.test/b",
    ]);
  });

  test("a tag cut off by the end of the page is not a link; a duplicate attribute loses to the first", () => {
    expect(extract(`<a href="/1" href="/2"><a href="/cut"`).links).toEqual(["http://site.test/1"]);
  });

  test("rel and meta names are read after decoding entities; rel tokens are split on any whitespace", () => {
    const html = `<meta name="r&#111;bots" content="noindex"><a href="/a" rel="no&#102;ollow"><a href="/b" rel="external\n\tNOFOLLOW">
      <a href="/c" rel="nofollow/"><a href="/d">`;
    // An unquoted value runs up to whitespace or ">": rel="nofollow/" is not the nofollow token.
    expect(extract(html.replace('rel="nofollow/"', "rel=nofollow/"))).toMatchObject({
      directives: { noindex: true, nofollow: false },
      links: ["http://site.test/c", "http://site.test/d"],
    });
  });

  test("meta robots and canonical count anywhere in the page, even after the links", () => {
    const html = `<a href="/a"><link rel="alternate" href="/fr"><link rel="canonical"><link rel="alternate  CANONICAL" href="/c">
      <link rel="canonical" href="/second"><meta name="genapi" content="nofollow">`;
    expect(extract(html)).toMatchObject({ links: [], canonical: "http://site.test/c", directives: { noindex: false, nofollow: true } });
  });

  test("entity-obfuscated schemes are decoded before the scheme is checked", () => {
    const html = `<a href="javascript&colon;alert(1)">j</a><a href="&#47;&#x2F;other.test/x">o</a><a href="/q?a=1&copy=2&amp;b=&quot;">q</a>`;
    expect(extract(html).links).toEqual(["http://other.test/x", "http://site.test/q?a=1&copy=2&b=%22"]);
  });
});

// A DOM parser's time grew with the square of unclosed tags (40k anchors took 24 s, blocking the
// server): these pages, at the 5 MiB body limit, would not finish within the test timeout.
describe("extractPage on hostile 5 MiB pages", () => {
  const MiB = 1024 * 1024;

  test("unclosed anchors: every one is a link, the base and directives at the end still apply", () => {
    const anchors = Array.from({ length: 300_000 }, (_, i) => `<a href="p${i}">`).join("");
    const html = `${anchors}<base href="/b/"><link rel="canonical" href="/canon"><meta name="robots" content="noindex">`;
    expect(html.length).toBeGreaterThan(5 * MiB);
    const facts = extractPage(html, PAGE, "genapi", 10_000);
    expect(facts.links).toHaveLength(10_000);
    expect([facts.links[0], facts.links[9_999]]).toEqual(["http://site.test/b/p0", "http://site.test/b/p9999"]);
    expect(facts).toMatchObject({
      linksDropped: true,
      canonical: "http://site.test/canon",
      directives: { noindex: true, nofollow: false },
    });
    const all = extractPage(`${anchors}<a href="/last">`, PAGE, "genapi", 400_000).links;
    expect(all).toHaveLength(300_001);
    expect(all.slice(-2)).toEqual(["http://site.test/dir/p299999", "http://site.test/last"]);
  });

  test("a million nested divs, bold tags and noscripts: the link after them is found", () => {
    expect(extract(`${"<div>".repeat(MiB)}<a href="/deep">`).links).toEqual(["http://site.test/deep"]);
    expect(extract(`${"<b><i>".repeat(MiB / 6)}<a href="/deep">`).links).toEqual(["http://site.test/deep"]);
    expect(extract(`<a href="/first">${"<noscript>".repeat(MiB / 2)}</noscript><a href="/after">`).links).toEqual([
      "http://site.test/first",
      "http://site.test/after",
    ]);
  });
});

describe("extractPage robots meta", () => {
  test("noindex and nofollow from <meta name=robots> or <meta name=genapi>, case-insensitive", () => {
    expect(extract(`<meta name="robots" content="noindex"><a href="/a">a</a>`)).toMatchObject({
      directives: { noindex: true, nofollow: false },
      links: ["http://site.test/a"],
    });
    expect(extract(`<META NAME="GenAPI" CONTENT="NoFollow"><a href="/a">a</a>`)).toMatchObject({
      directives: { noindex: false, nofollow: true },
      links: [],
    });
    expect(extract(`<meta name="robots" content="index, follow"><meta name="genapi" content="none"><a href="/a">a</a>`)).toMatchObject({
      directives: { noindex: true, nofollow: true },
      links: [],
    });
  });

  test("other robots' meta tags do not apply", () => {
    expect(extract(`<meta name="googlebot" content="noindex, nofollow"><a href="/a">a</a>`)).toMatchObject({
      directives: { noindex: false, nofollow: false },
      links: ["http://site.test/a"],
    });
  });
});

describe("extractPage canonical", () => {
  test("the first <link rel=canonical>, resolved against the base and normalised", () => {
    expect(extract(`<link rel="canonical" href="/Dir/Page#top"><link rel="canonical" href="/second">`).canonical).toBe(
      "http://site.test/Dir/Page",
    );
    expect(extract(`<base href="/b/"><link rel="Canonical" href="c">`).canonical).toBe("http://site.test/b/c");
    expect(extract(`<link rel="alternate" href="/fr">`).canonical).toBeNull();
    expect(extract(`<link rel="canonical" href="mailto:x@site.test">`).canonical).toBeNull();
  });
});

describe("decodeHtml", () => {
  const latin1 = new Uint8Array([0x3c, 0x61, 0x20, 0x68, 0x72, 0x65, 0x66, 0x3d, 0x2f, 0x63, 0x61, 0x66, 0xe9, 0x3e]); // <a href=/café> in windows-1252

  test("uses the Content-Type charset", () => {
    expect(decodeHtml(latin1, "windows-1252")).toBe("<a href=/café>");
    expect(extractPage(decodeHtml(latin1, "ISO-8859-1"), PAGE, "genapi", 10).links).toEqual(["http://site.test/caf%C3%A9"]);
  });

  test("falls back to <meta charset>, then UTF-8; a byte order mark wins", () => {
    const meta = new TextEncoder().encode('<meta charset="windows-1252">');
    const withMeta = new Uint8Array([...meta, 0xe9]);
    expect(decodeHtml(withMeta, undefined).endsWith("é")).toBe(true);
    expect(decodeHtml(new TextEncoder().encode("é"), undefined)).toBe("é");
    expect(decodeHtml(new Uint8Array([0xef, 0xbb, 0xbf, 0xc3, 0xa9]), "windows-1252")).toBe("é");
  });

  test("the same label decodes alike every time, in any spelling TextDecoder reads, past the labels kept", () => {
    const bytes = new Uint8Array([0x3c, 0x70, 0x3e, 0xe9]); // <p>é in windows-1252
    for (let round = 0; round < 3; round++) {
      expect(decodeHtml(bytes, "windows-1252")).toBe("<p>é");
      expect(decodeHtml(bytes, " Windows-1252 ")).toBe("<p>é");
      expect(decodeHtml(new TextEncoder().encode("<p>é"), "utf-8")).toBe("<p>é");
    }
    // More spellings than are kept: each still decodes as its label says.
    for (let i = 0; i < 100; i++) expect(decodeHtml(bytes, `${" ".repeat(i)}latin1`)).toBe("<p>é");
    expect(decodeHtml(new TextEncoder().encode("<p>é"), "\u00a0windows-1252")).toBe("<p>é");
  });

  test("an unknown charset or binary junk never throws", () => {
    expect(decodeHtml(new TextEncoder().encode("<p>é"), "no-such-charset")).toBe("<p>é");
    const junk = Uint8Array.from({ length: 50_000 }, (_, i) => (i * 7919 + (i >> 3)) & 255);
    for (const charset of [undefined, "utf-16le", "shift_jis", "bogus"]) {
      expect(extractPage(`${decodeHtml(junk, charset)}<a href="/after">`, PAGE, "genapi", 10).links).toContain("http://site.test/after");
    }
  });
});

describe("entities in attributes (decoded by the entities package)", () => {
  test("every HTML5 named reference, numeric references, and the attribute-value exceptions", () => {
    const { links } = extract(
      `<a href="/more&hellip;">1</a><a href="/caf&eacute;">2</a><a href="/x?a=1&amp;b=2">3</a>` +
        `<a href="/q?a=1&copy=2">4</a><a href="&#x2F;hex&#47;dec">5</a>`,
    );
    expect(links).toEqual([
      "http://site.test/more%E2%80%A6",
      "http://site.test/caf%C3%A9",
      "http://site.test/x?a=1&b=2",
      "http://site.test/q?a=1&copy=2",
      "http://site.test/hex/dec",
    ]);
  });
});

describe("extractPage in svg and math (the namespace rules the tokenizer depends on)", () => {
  test("in svg, style, script, title and textarea hold markup; in its integration points they are HTML's raw text again", () => {
    const html =
      `<svg><style><a href="/svg-style"></style><script>"<a href='/svg-script'>"</script>` +
      `<foreignObject><script>"<a href='/fo-script'>"</script><a href="/in-fo"></foreignObject>` +
      `<desc><style><a href="/desc-style"></style></desc><title><textarea><a href="/title-textarea"></textarea></title></svg>` +
      `<math><mi><style><a href="/mi-style"></style></mi><annotation-xml encoding="text/html"><title><a href="/ax-title"></title></annotation-xml></math>`;
    expect(extract(html).links).toEqual(["http://site.test/svg-style", "http://site.test/svg-script", "http://site.test/in-fo"]);
  });

  test("HTML breakout tags (and font with color, face or size, and </p> </br>) end svg; <svg/> opens nothing; <svg x=/> is no self-closing tag", () => {
    for (const [open, inSvg] of [
      ["<svg><p>", false],
      ["<svg><img>", false],
      ["<svg><font color=red>", false],
      ["<svg><font>", true],
      ["<svg></p>", false],
      ["<svg></br>", false],
      ["<svg/>", false],
      ["<svg x=/>", true],
    ] as const) {
      const links = extract(`${open}<style><a href="/inside"></style>`).links;
      expect([open, links]).toEqual([open, inSvg ? ["http://site.test/inside"] : []]);
    }
  });

  test("CDATA sections are text in svg and math, bogus comments (to the first >) in HTML", () => {
    expect(extract(`<svg><![CDATA[ a > b <a href="/no"> ]]></svg><![CDATA[ a > b <a href="/yes"> ]]>`).links).toEqual([
      "http://site.test/yes",
    ]);
  });
});
