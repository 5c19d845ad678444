// The tag scanner against the HTML tokenizer's rules, case by case. Against what the crawler read
// before it (Bun's HTMLRewriter): tag-scanner.differential.test.ts.
import { describe, expect, test } from "bun:test";
import { readStartTags, scanTags, type ScannedTag } from "../../../src/crawler/html/tag-scanner.ts";

function scanned(html: string): [string, Record<string, string>][] {
  const out: [string, Record<string, string>][] = [];
  scanTags(html, (tag: ScannedTag) => out.push([tag.name, Object.fromEntries(tag.attributes)]));
  return out;
}

const hrefs = (html: string) => scanned(html).map(([, attributes]) => attributes.href);

describe("scanTags: the tokenizer's rules", () => {
  test("reported tags, attribute names lower-cased, values as written, the first of a repeated attribute", () => {
    expect(
      scanned(
        `<A HREF="/x" Rel=next>a</A><p><img src='i.png' SRC=j><link rel=canonical href=/c><meta name=robots content="noindex, nofollow"><base href="/b/"><area href=/r>`,
      ),
    ).toEqual([
      ["a", { href: "/x", rel: "next" }],
      ["img", { src: "i.png" }],
      ["link", { rel: "canonical", href: "/c" }],
      ["meta", { name: "robots", content: "noindex, nofollow" }],
      ["base", { href: "/b/" }],
      ["area", { href: "/r" }],
    ]);
  });

  test("quoted values may hold > and the other quote; unquoted values end at a space or >; a bare attribute is empty", () => {
    expect(scanned(`<a title="a > b" href='/it"s'>x</a><a href=/u?a=1&b=2 download>y</a><a href=/v>z</a>`)).toEqual([
      ["a", { title: "a > b", href: `/it"s` }],
      ["a", { href: "/u?a=1&b=2", download: "" }],
      ["a", { href: "/v" }],
    ]);
    expect(scanned(`<a href = "/spaced" ><a href="/q"title="t"><a/href=/s/><a href=>`)).toEqual([
      ["a", { href: "/spaced" }],
      ["a", { href: "/q", title: "t" }],
      ["a", { href: "/s/" }],
      ["a", { href: "" }],
    ]);
    // An attribute name may start with "=", and holds quotes and "<".
    expect(scanned(`<a =x href=/y a"b=1 c<d=2>`)).toEqual([["a", { "=x": "", href: "/y", 'a"b': "1", "c<d": "2" }]]);
  });

  test("tag names: a name that merely starts like a reported one is another element; end tags report nothing", () => {
    expect(hrefs(`<abbr href=/no><article href=/no><a2 href=/no></a href=/no><a\thref=/tab><a\nhref=/lf>`)).toEqual(["/tab", "/lf"]);
  });

  test("comments: <!-->, <!--->, --> and --!> end them; links inside are text", () => {
    expect(
      hrefs(`<!--><a href=/1><!---><a href=/2><!-- <a href=/no> --><a href=/3><!-- x --!><a href=/4><!-- a -- b ---><a href=/5>`),
    ).toEqual(["/1", "/2", "/3", "/4", "/5"]);
    expect(hrefs(`<!-- never closed <a href=/no>`)).toEqual([]);
  });

  test("doctype, processing instructions, CDATA in HTML and </ followed by a non-letter are bogus comments up to >", () => {
    expect(
      hrefs(`<!DOCTYPE html><?xml version="1.0"?><a href=/1><![CDATA[ x ]]><a href=/2></ 3 <a href=/no><a href=/4></><a href=/5>`),
    ).toEqual(["/1", "/2", "/4", "/5"]);
  });

  test("< not followed by a letter, / or ! is text", () => {
    expect(hrefs(`1 < 2 <3 <= <a href=/1> <- <. <a href=/2>`)).toEqual(["/1", "/2"]);
  });

  test("raw text and RCDATA elements hold text up to their end tag, whatever its case", () => {
    for (const name of ["style", "xmp", "iframe", "noembed", "noframes", "textarea", "title", "script"]) {
      const html = `<${name}><a href=/no></${name}x><a href=/no2></${name.toUpperCase()} ><a href=/yes>`;
      expect([name, hrefs(html)]).toEqual([name, ["/yes"]]);
    }
    expect(hrefs(`<title>never closed <a href=/no>`)).toEqual([]);
  });

  test("script data escaped and double escaped states decide where a script ends", () => {
    // </script> ends an escaped script...
    expect(hrefs(`<script><!-- x </script><a href=/1>`)).toEqual(["/1"]);
    // ...but not inside a <script> within the escape: that one ends at --> and the next </script>.
    expect(hrefs(`<script><!-- <script> </script> <a href=/no> --> </script><a href=/2>`)).toEqual(["/2"]);
    expect(hrefs(`<script><!--<script></script><a href=/no></script>--></script><a href=/3>`)).toEqual(["/3"]);
    // "<!-->" enters and leaves the escape at once.
    expect(hrefs(`<script><!--><script></script><a href=/4>`)).toEqual(["/4"]);
    expect(hrefs(`<script>if (a <!--b) x = "</scripts>"; </script><a href=/5>`)).toEqual(["/5"]);
  });

  test("plaintext: everything after it is text", () => {
    expect(hrefs(`<a href=/1><plaintext><a href=/no></plaintext><a href=/no2>`)).toEqual(["/1"]);
  });

  test("svg and math: their elements' content is markup, CDATA sections are text, an HTML breakout tag ends them", () => {
    expect(
      hrefs(`<svg><style><a href=/1></style><![CDATA[<a href=/no>]]><a href=/2></svg><style><a href=/no2></style><a href=/3>`),
    ).toEqual(["/1", "/2", "/3"]);
    expect(hrefs(`<svg><p><title><a href=/no></title><a href=/4>`)).toEqual(["/4"]);
    expect(hrefs(`<math><title><a href=/5></title></math>`)).toEqual(["/5"]);
  });

  test("a tag cut off by the end of the page is no tag", () => {
    for (const html of [`<a href="/x"`, `<a href="/x`, `<a href=/x`, `<a href=`, `<a href`, `<a `, `<a`])
      expect([html, hrefs(html)]).toEqual([html, []]);
  });

  test("values: CR LF and CR read as LF, NUL as U+FFFD (the input stream's preprocessing)", () => {
    expect(scanned(`<a href="/a\r\nb\rc\0d">`)).toEqual([["a", { href: "/a\nb\nc\uFFFDd" }]]);
  });

  test("hostile pages stay linear: 5 MB of one construct each, none reported beyond what is there", () => {
    const size = 5 * 1024 * 1024;
    const cases: [string, number][] = [
      ["<a".repeat(size / 2), 0],
      ["<".repeat(size), 0],
      [`<a href=/x>`.repeat(size / 11), size / 11],
      [`<a ${"x ".repeat(size / 2)}`, 0],
      [`<a href="${"x".repeat(size)}`, 0],
      [`<!--${"-".repeat(size)}`, 0],
      [`<script><!--${"<script>".repeat(size / 8)}`, 0],
      [`${"<b>".repeat(size / 3)}<a href=/deep>`, 1],
      [`<title>${"</titl".repeat(size / 6)}`, 0],
    ];
    for (const [html, count] of cases) {
      let seen = 0;
      scanTags(html, () => seen++);
      expect(seen).toBe(Math.floor(count));
    }
  });
});

describe("readStartTags: JSON-LD", () => {
  const jsonLd = (html: string) => readStartTags(html, () => {}).jsonLd;

  test("the raw text of each application/ld+json script (type in any case, spaces around it), in document order", () => {
    expect(
      jsonLd(
        `<script type="application/ld+json">{"a": "<b>"}</script><script TYPE=' APPLICATION/LD+JSON\n'>[1]</SCRIPT>` +
          `<script type="application/json">{}</script><script>{}</script><script type="application/ld+json;x">{}</script>` +
          `<script type=application/ld+json>{"b": "</scrip"}</script >`,
      ),
    ).toEqual(['{"a": "<b>"}', "[1]", '{"b": "</scrip"}']);
  });

  test("the script's end by the tokenizer's rules; none in svg, comments or other raw text; a cut-off one to the page's end", () => {
    expect(jsonLd(`<script type="application/ld+json"><!--<script></script>--></script>`)).toEqual(["<!--<script></script>-->"]);
    expect(
      jsonLd(`<svg><script type="application/ld+json">{}</script></svg><!-- <script type="application/ld+json">{}</script> -->`),
    ).toEqual([]);
    expect(jsonLd(`<textarea><script type="application/ld+json">{}</script></textarea>`)).toEqual([]);
    expect(jsonLd(`<script type="application/ld+json">{"open": `)).toEqual(['{"open": ']);
  });

  test("a page with none gives none; a scan does not carry one page's over to the next", () => {
    expect(jsonLd(`<script type="application/ld+json">1</script>`)).toEqual(["1"]);
    expect(jsonLd(`<p>`)).toEqual([]);
  });
});

describe("readStartTags: resources (the link report's resource checks)", () => {
  const html = `<img src="/a.png" srcset="/b.png 2x"><script src="/s.js"></script><script>document.write('<audio src="/no.mp3">')</script>
    <picture><source srcset="/c.webp" src="/d.webm"></picture><video src="/v.mp4" poster="/p.jpg"></video><audio src="/m.mp3"></audio>
    <svg><script src="/svg.js"></script></svg><textarea><script src="/text.js"></script></textarea>`;
  const read = (resources: boolean) => {
    const seen: string[] = [];
    readStartTags(
      html,
      (name, attributes) => {
        const values = (["src", "srcset", "poster"] as const).map((key) => attributes.get(key)).filter((v) => v !== undefined);
        seen.push(`${name} ${values.join(" ")}`);
      },
      false,
      resources,
    );
    return seen;
  };

  test("off: script, source, video and audio are not reported (the scan is as before)", () => {
    expect(read(false)).toEqual(["img /a.png /b.png 2x"]);
  });

  test("on: they are, with src, srcset and poster; a script's text and a textarea's are not markup", () => {
    expect(read(true)).toEqual([
      "img /a.png /b.png 2x",
      "script /s.js",
      "script ",
      "source /d.webm /c.webp",
      "video /v.mp4 /p.jpg",
      "audio /m.mp3",
      "script /svg.js",
    ]);
  });
});
