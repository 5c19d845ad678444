import { describe, expect, test } from "bun:test";
import { decodeHtml, extractPage } from "../../src/sitemap/links.ts";

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

  test("skips non-http(s) schemes and unparsable hrefs", () => {
    const html = `<a href="mailto:a@site.test">m</a><a href="javascript:void(0)">j</a><a href="tel:+1">t</a>
      <a href="data:text/html,hi">d</a><a href="ftp://site.test/f">f</a><a href="http://[bad/">b</a><a href="/ok">ok</a>`;
    expect(extract(html).links).toEqual(["http://site.test/ok"]);
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
    expect(extract(html, 3)).toMatchObject({ links: ["http://site.test/1", "http://site.test/2", "http://site.test/3"], linksDropped: true });
    expect(extract(html, 4).linksDropped).toBe(false);
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
    expect(extract(`<link rel="canonical" href="/Dir/Page#top"><link rel="canonical" href="/second">`).canonical).toBe("http://site.test/Dir/Page");
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

  test("an unknown charset or binary junk never throws", () => {
    expect(decodeHtml(new TextEncoder().encode("<p>é"), "no-such-charset")).toBe("<p>é");
    const junk = Uint8Array.from({ length: 50_000 }, (_, i) => (i * 7919 + (i >> 3)) & 255);
    for (const charset of [undefined, "utf-16le", "shift_jis", "bogus"]) {
      expect(extractPage(decodeHtml(junk, charset) + '<a href="/after">', PAGE, "genapi", 10).links).toContain("http://site.test/after");
    }
  });
});
