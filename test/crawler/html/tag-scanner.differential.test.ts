// extractPage (the tag scanner, src/crawler/html/tag-scanner.ts) against extractPage as it was with Bun's
// HTMLRewriter (test/support/html-rewriter-links.ts): the same PageFacts on every page of a 300-page
// bench site, on the tricky documents of test/fixtures/html-scan, and on seeded random tag soup;
// the few inputs where they differ on purpose are listed at the end with what each one reads and why.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSite } from "../../../scripts/bench/fixtures/site.ts";
import { extractPage, type ExtractExtras } from "../../../src/crawler/html/links.ts";
import { extractPageWithHtmlRewriter } from "../../support/html-rewriter-links.ts";

const PAGE = "http://site.test/dir/page.html";
const ALL: ExtractExtras = { alternates: true, images: true };

function expectSamePageFacts(html: string, pageUrl = PAGE, label = html): void {
  for (const extras of [{}, ALL]) {
    const scanner = extractPage(html, pageUrl, "genapi", 1_000, extras);
    const rewriter = extractPageWithHtmlRewriter(html, pageUrl, "genapi", 1_000, extras);
    expect({ label, facts: scanner }).toEqual({ label, facts: rewriter });
  }
}

describe("the scanner reads what HTMLRewriter read", () => {
  test("every page of a 300-page bench site", () => {
    const dir = mkdtempSync(join(tmpdir(), "genapi-scan-site-"));
    try {
      const { paths } = generateSite(dir, 300);
      expect(paths).toHaveLength(300);
      let links = 0;
      for (const path of paths) {
        const html = readFileSync(join(dir, path.endsWith("/") ? `${path}index.html` : path), "utf8");
        expectSamePageFacts(html, `http://127.0.0.1:8080${path}`, path);
        links += extractPage(html, `http://127.0.0.1:8080${path}`, "genapi", 1_000).links.length;
      }
      expect(links).toBeGreaterThan(300 * 10); // the pages do hold links: the comparison is not of empty results
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Fixtures mark what a browser sees: hrefs with "/yes/" are links (or images) by the HTML
  // standard, hrefs with "/no/" are text. Both readers must read them alike, and as marked.
  const FIXTURES = join(import.meta.dir, "../../fixtures/html-scan");
  for (const file of readdirSync(FIXTURES).sort()) {
    test(`fixture ${file}`, () => {
      const html = readFileSync(join(FIXTURES, file), "utf8");
      expectSamePageFacts(html, PAGE, file);
      const facts = extractPage(html, PAGE, "genapi", 1_000, ALL);
      const read = [...facts.links, ...facts.images!, facts.canonical ?? "", ...facts.alternates!.map((a) => a.href)];
      const yes = [...html.matchAll(/\/yes\/[^"'\s>\r]*/g)].map((m) => m[0]);
      expect(read.length).toBeGreaterThan(0);
      for (const marked of yes)
        expect({ file, marked, read: read.some((url) => url.includes(marked)) }).toEqual({ file, marked, read: true });
      expect({ file, no: read.filter((url) => url.includes("/no/")) }).toEqual({ file, no: [] });
    });
  }

  test("each whole fragment alone and every pair of them", () => {
    for (const a of FRAGMENTS) {
      expectSamePageFacts(a);
      for (const b of FRAGMENTS) expectSamePageFacts(a + b);
    }
  });

  test("4,000 seeded random documents of tag soup", () => {
    let state = 20261123;
    const next = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return (state >>> 8) % n;
    };
    let withLinks = 0;
    for (let i = 0; i < 4_000; i++) {
      const parts: string[] = [];
      const length = 1 + next(50);
      for (let k = 0; k < length; k++) parts.push(next(10) < 3 ? FRAGMENTS[next(FRAGMENTS.length)]! : PIECES[next(PIECES.length)]!);
      const html = parts.join("");
      expectSamePageFacts(html);
      if (extractPage(html, PAGE, "genapi", 1_000).links.length > 0) withLinks++;
    }
    expect(withLinks).toBeGreaterThan(2_000);
  });
});

/** Whole constructs: random documents join them, some whole, some cut off by what follows. */
const FRAGMENTS = [
  `<a href="/a">a</a>`,
  `<A HREF='/b' REL="NoFollow">b</A>`,
  `<a rel="next nofollow" href=/c>`,
  `<a href="/d?x=1&amp;y=2&#x41;&eacute;&copy=3">`,
  `<area href="/f" shape=rect>`,
  `<base href="/dir/">`,
  `<link rel="canonical" href="/g">`,
  `<link rel="alternate" hreflang="de" href="/de/">`,
  `<meta name="robots" content="noarchive">`,
  `<meta name="genapi" content="noimageindex">`,
  `<img src="/i.png" alt="">`,
  `<IMG SRC=/j.png>`,
  `<!-- <a href="/in-comment"> -->`,
  `<!---->`,
  `<!-->`,
  `<!--->`,
  `<!-- x --!>`,
  `<!DOCTYPE html>`,
  `<?php echo 1 ?>`,
  `<script>var s = "<a href='/in-script'>";</script>`,
  `<script><!-- document.write("<script></script>") --></script>`,
  `<style>a[href="/in-style"] { color: red }</style>`,
  `<textarea><a href="/in-textarea"></textarea>`,
  `<title>t <a href="/in-title"></title>`,
  `<template><a href="/in-template"></a></template>`,
  `<svg><a href="/svg-a"><text>x</text></a></svg>`,
  `<math><mi>x</mi></math>`,
  `<p>text with < and > and &amp; in it</p>`,
  `<iframe src="/frame"><a href="/in-iframe"></iframe>`,
  `<xmp><a href="/in-xmp"></xmp>`,
  `<plaintext>`,
  `<svg><foreignObject><style><a href="/fo-style"></style></foreignObject></svg>`,
  `<svg><title><a href="/svg-title"></title></svg>`,
  `<![CDATA[<a href="/cdata">]]>`,
  `</a href="<a href=/end-attr>">`,
  `<div class="x" data-x='y'>`,
  `<br/>`,
  `<a href=/h/>`,
  `<a href="/i" href="/j">`,
];

/**
 * Pieces of markup that make tag soup: open and unterminated tags, quotes, comment and CDATA
 * delimiters, script escapes, svg and math with their integration points and breakouts. None of
 * them makes one of the listed exceptions (no self-closing svg or math, no NUL, no "noscript", no
 * raw-text start tag ending in `=>`).
 */
const PIECES = [
  `<a href="/r1">`,
  `<a href=/r2>`,
  `<a href='/r3'>`,
  `<link rel=canonical href=/rc>`,
  `<img src=/ri.png>`,
  `<base href=/rb/>`,
  `<a`,
  ` href="/p1"`,
  ` href=/p2`,
  ` href='/p3'`,
  `>`,
  `/>`,
  `"`,
  `'`,
  `=`,
  ` `,
  `\n`,
  `\r\n`,
  `\t`,
  `\f`,
  `x`,
  `&amp;`,
  `&`,
  `-`,
  `--`,
  `-->`,
  `--!>`,
  `<!--`,
  `<!`,
  `<?`,
  `</`,
  `<`,
  `<!--!>`,
  `<!-- -- -->`,
  `<script>`,
  `</script>`,
  `</script `,
  `<script src=x>`,
  `<SCRIPT>`,
  `</SCRIPT\t>`,
  `</ script>`,
  `<scriptx>`,
  `</scriptx>`,
  `<style>`,
  `</style>`,
  `<Style>`,
  `</STYLE/>`,
  `<title>`,
  `</title>`,
  `<TITLE>`,
  `<title/>`,
  `<textarea>`,
  `</textarea>`,
  `<textarea/>`,
  `<xmp>`,
  `</xmp>`,
  `<plaintext>`,
  `<template>`,
  `</template>`,
  `<svg>`,
  `</svg>`,
  `<SVG>`,
  `</SVG>`,
  `<svg width=1>`,
  `<math>`,
  `</math>`,
  `<MATH>`,
  `<math display=block>`,
  `<foreignObject>`,
  `</foreignObject>`,
  `<foreignobject>`,
  `</FOREIGNOBJECT>`,
  `<desc>`,
  `</desc>`,
  `<mi>`,
  `</mi>`,
  `<MI>`,
  `<mtext>`,
  `</mtext>`,
  `<annotation-xml encoding="text/html">`,
  `<ANNOTATION-XML encoding=TEXT/HTML>`,
  `<annotation-xml>`,
  `</annotation-xml>`,
  `<![CDATA[`,
  `]]>`,
  `]]`,
  `<p>`,
  `</p>`,
  `<br>`,
  `</br>`,
  `<div>`,
  `<b>`,
  `</b>`,
  `<span>`,
  `<table>`,
  `<h1>`,
  `<img>`,
  `<font color=red>`,
  `<FONT SIZE=3>`,
  `<font face=x>`,
  `<font>`,
  `<a\fhref=/ff>`,
  `<a href=/fx\f>`,
  `</a x="'>">`,
  `<a x='">' href=/sq>`,
  `<a href=/ent&#x2F;x>`,
  `<meta NAME=robots CONTENT=noarchive>`,
];

// -------------------------------------------------------------------------------------------------
// Deliberate differences. Each reads the standard's way (a browser's), HTMLRewriter's another.

interface Exception {
  html: string;
  why: string;
  /** The links each reader finds. */
  scanner: string[];
  htmlRewriter: string[];
}

const u = (path: string) => `http://site.test${path}`;

const EXCEPTIONS: Exception[] = [
  {
    html: `<svg/><script>var s = "<a href='/in-script'>";</script><a href="/after">`,
    why:
      "A self-closing <svg/> (or <math/>) opens nothing (HTML 13.2.6.4.7, a start tag svg or math: its self-closing flag pops it " +
      "at once). lol-html enters svg anyway and reads every script, style, title and textarea after it as markup.",
    scanner: [u("/after")],
    htmlRewriter: [u("/in-script"), u("/after")],
  },
  {
    html: `<svg viewBox="0 0 1 1"/><style>a[href="/x"] {}</style><textarea><a href="/in-textarea"></textarea><a href="/after">`,
    why: "The same for a self-closing svg with attributes.",
    scanner: [u("/after")],
    htmlRewriter: [u("/in-textarea"), u("/after")],
  },
  {
    html: `<a href="/a\0b">`,
    why:
      "NUL in an attribute value is U+FFFD for the tokenizer (13.2.5.36-38, unexpected-null-character), so a browser " +
      "follows /a%EF%BF%BDb; lol-html keeps the NUL, which the URL parser encodes as %00.",
    scanner: [u("/a%EF%BF%BDb")],
    htmlRewriter: [u("/a%00b")],
  },
  {
    html: `<a title="x<noscript " href="/y">`,
    why:
      "The old reader removed <noscript> and </noscript> text with a regular expression before lol-html saw the page, " +
      "also where it was no tag (here inside a quoted value, where it took the rest of the tag up to the next >). " +
      "The scanner reads noscript as an ordinary element, so only real tags are affected.",
    scanner: [u("/y")],
    htmlRewriter: [],
  },
  {
    html: `</<noscript><a href="/in-noscript"></a></noscript>`,
    why: "Likewise: `</<noscript>` is a bogus comment up to its > for the tokenizer; with the text removed, `</<a href=...>` was.",
    scanner: [u("/in-noscript")],
    htmlRewriter: [],
  },
  {
    html: `<style x=><a </style><a href="/after">`,
    why:
      "An attribute with = and no value before > (`x=>`) on a raw-text element: the tokenizer still switches to raw text " +
      "(13.2.6.4.4 style). lol-html's fast tag scanner (the mode it runs in for tags no selector matches) returns to the " +
      "data state there and loses the rest of the page once a tag it looks for starts inside.",
    scanner: [u("/after")],
    htmlRewriter: [],
  },
];

describe("deliberate differences from HTMLRewriter, each the standard's reading", () => {
  for (const exception of EXCEPTIONS) {
    test(exception.html, () => {
      expect(exception.why.length).toBeGreaterThan(0);
      expect(extractPage(exception.html, PAGE, "genapi", 100).links).toEqual(exception.scanner);
      // The difference is real: HTMLRewriter (this Bun's) does read it the other way.
      expect(extractPageWithHtmlRewriter(exception.html, PAGE, "genapi", 100).links).toEqual(exception.htmlRewriter);
    });
  }

  test("without the noscript text the old reader removed, the noscript exceptions read alike", () => {
    for (const { html } of EXCEPTIONS.filter((e) => e.html.includes("noscript"))) {
      const removed = html.replace(/<\/?noscript(?=[\s/>])[^>]*>/gi, "");
      expect(extractPage(removed, PAGE, "genapi", 100)).toEqual(extractPageWithHtmlRewriter(removed, PAGE, "genapi", 100));
    }
  });
});
