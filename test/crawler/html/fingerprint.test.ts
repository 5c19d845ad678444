// The page fingerprint: the same for pages whose title and main text read alike, whatever changes
// around them; another for any change to either.
import { describe, expect, test } from "bun:test";
import { canonical, fingerprintOf } from "../../../src/crawler/html/fingerprint.ts";
import { extractPage } from "../../../src/crawler/html/links.ts";
import { readStartTags, textNodes } from "../../../src/crawler/html/tag-scanner.ts";

const fingerprint = (html: string) => extractPage(html, "https://example.com/", "genapi", 100, { fingerprint: true }).fingerprint!;
const text = (html: string) => {
  const found = readStartTags(html, () => {}, true).text!;
  return { title: found.title, nodes: textNodes(found) };
};
const nodes = (...texts: string[]) => {
  const html = texts.join("<br>");
  const bounds: number[] = [];
  for (let at = 0, k = 0; k < texts.length; at += texts[k]!.length + 4, k++) bounds.push(at, at + texts[k]!.length);
  return { html, nodes: Int32Array.from(bounds) };
};

const page = (parts: { title?: string; head?: string; header?: string; main?: string; aside?: string; footer?: string; script?: string }) =>
  `<!DOCTYPE html><html><head><title>${parts.title ?? "Release notes"}</title>${parts.head ?? ""}` +
  `<script nonce="${parts.script ?? "r4nd0m"}">window.token = "${parts.script ?? "r4nd0m"}";</script></head>` +
  `<body><header>${parts.header ?? `<a href="/">Home</a>`}</header>` +
  `<main><h1>Version 2</h1>\n  <p>${parts.main ?? "It is faster."}</p></main>` +
  `<aside>${parts.aside ?? `<div class="ad" id="slot-1">Buy now</div>`}</aside>` +
  `<footer>${parts.footer ?? "© 2025 Example"}</footer></body></html>`;
const BASE = fingerprint(page({}));

describe("fingerprint stability", () => {
  test("16 hex digits; the same page twice gives the same", () => {
    expect(BASE).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprint(page({}))).toBe(BASE);
  });

  test("a footer's year, a script's nonce, an ad slot, the header and the head outside <main> change nothing", () => {
    expect(fingerprint(page({ footer: "© 2026 Example" }))).toBe(BASE);
    expect(fingerprint(page({ script: "n3wt0k3n" }))).toBe(BASE);
    expect(fingerprint(page({ aside: `<div class="ad" id="slot-2">Sell now</div><iframe src="/ad">x</iframe>` }))).toBe(BASE);
    expect(fingerprint(page({ header: `<a href="/">Home</a> <a href="/new">New!</a>` }))).toBe(BASE);
    expect(fingerprint(page({ head: `<meta name="csrf" content="abc"><style>p{color:red}</style>` }))).toBe(BASE);
  });

  test("whitespace, markup inside a text-free place, comments and attributes inside <main> change nothing", () => {
    expect(fingerprint(page({ main: "It   is\n\tfaster. " }))).toBe(BASE);
    expect(fingerprint(page({ main: "\r\nIt is faster.\f" }))).toBe(BASE);
    expect(fingerprint(page({ main: `It is faster.<!-- build 1234 --><span class="x"></span><script>var t = 5</script>` }))).toBe(BASE);
    expect(fingerprint(page({ main: "It is&#32;faster.&#10;" }))).toBe(BASE);
    expect(fingerprint(page({ title: "  Release\n notes " }))).toBe(BASE);
  });

  test("a change to the main text or to the title is a change", () => {
    const changed = [
      page({ main: "It is slower." }),
      page({ main: "It is faster!" }),
      page({ main: "It is faster. Much." }),
      page({ main: "It is fast er." }),
      page({ main: "It is faster.<noscript>x</noscript><b>And safer.</b>" }),
      page({ title: "Release notes 2" }),
      page({ title: "" }),
    ];
    const seen = new Set([BASE, ...changed.map(fingerprint)]);
    expect(seen.size).toBe(changed.length + 1);
  });

  test("character references are decoded: the same text written two ways reads alike; a non-breaking space is not a space", () => {
    expect(fingerprint(page({ main: "It&nbsp;is &lt;fast&gt; &amp; &#x73;afe" }))).toBe(
      fingerprint(page({ main: "It\u00a0is &lt;fast> & safe" })),
    );
    expect(fingerprint(page({ main: "It&nbsp;is faster." }))).not.toBe(BASE);
  });

  test("the title and the main text are told apart: moving text from one to the other is a change", () => {
    expect(fingerprint(`<title>A</title><main>B</main>`)).not.toBe(fingerprint(`<title></title><main>A B</main>`));
    expect(fingerprint(`<title>A</title><main>B</main>`)).not.toBe(fingerprint(`<title>A B</title><main></main>`));
  });
});

describe("the main content", () => {
  test("the first <main>; else the first <article>; else the body without nav, header, footer and aside", () => {
    expect(text(`<title>T</title><nav>n</nav><article>a</article><main>m1<p>m2</p></main><main>m3</main>`)).toEqual({
      title: "T",
      nodes: ["m1", "m2"],
    });
    expect(text(`<nav>n</nav><article>a1<header>h</header>a2</article><article>a3</article>`)).toEqual({
      title: "",
      nodes: ["a1", "h", "a2"],
    });
    expect(text(`x<nav>n</nav><header>h<div>d</div></header>y<aside>s</aside><footer>f</footer>z`)).toEqual({
      title: "",
      nodes: ["x", "y", "z"],
    });
  });

  test("script, style, noscript, template and the other raw text elements are never text, inside <main> too", () => {
    expect(
      text(
        `<main>a<script>s</script>b<style>c{}</style>c<noscript><p>n</p></noscript>d<template><p>t</p></template>e<textarea>ta</textarea><iframe>i</iframe>f</main>`,
      ).nodes,
    ).toEqual(["a", "b", "c", "d", "e", "f"]);
  });

  test("nested and unclosed elements: an end tag closes the latest open one of its name and those opened inside it", () => {
    // A main inside the first main: the first ends at the end tag that closes it.
    expect(text(`<main>a<main>b</main>c</main>d`).nodes).toEqual(["a", "b", "c"]);
    // A nav left open inside main is closed by </main>: the body text after it counts again (no main: body).
    expect(text(`<article>a<nav>n</article>b`).nodes).toEqual(["a", "n"]);
    expect(text(`<div><nav>n</div>b</nav>c`).nodes).toEqual(["c"]);
    expect(text(`<nav>n<nav>m</nav>o</nav>p`).nodes).toEqual(["p"]);
    // An end tag with nothing of its name open closes nothing; an unclosed main runs to the end of the page.
    expect(text(`</main></nav>a<main>b<p>c`).nodes).toEqual(["b", "c"]);
    // main in svg is svg's, not HTML's.
    expect(text(`<svg><main>s</main></svg>b`).nodes).toEqual(["s", "b"]);
  });

  test("text between tokens is one node; a < that starts no tag is text; a tag cut off by the end of the page is nothing", () => {
    expect(text(`<main>1 < 2 <= 3</main>`).nodes).toEqual(["1 < 2 <= 3"]);
    expect(text(`<main>a<!-- c -->b<?pi?>c</>d<!doctype x>e</main>`).nodes).toEqual(["a", "b", "c", "d", "e"]);
    expect(text(`<main>a<p class="unterminated`).nodes).toEqual(["a"]);
    expect(text(`<main>a</`).nodes).toEqual(["a", "</"]);
    expect(text(`<main>a<plaintext><p>b</main>`).nodes).toEqual(["a", "<p>b</main>"]);
  });

  test("the first title only, svg's title is not it (its text is the body's), and the title is not main text", () => {
    expect(text(`<svg><title>s</title></svg><title>T1</title><title>T2</title>b`)).toEqual({ title: "T1", nodes: ["s", "b"] });
  });

  test("the text of a page scanned without it is not gathered, and the scan stays what it was", () => {
    const html = `<title>T</title><main><a href=/x>x</a></main>`;
    const tags: string[] = [];
    expect(readStartTags(html, (name) => tags.push(name))).toEqual({ jsonLd: [] });
    expect(tags).toEqual(["a"]);
  });
});

describe("canonical and fingerprintOf", () => {
  test("ASCII whitespace trimmed and collapsed, references decoded, U+00A0 kept", () => {
    expect(canonical(" \t a \n\r\f b  c ")).toBe("a b c");
    expect(canonical("a&nbsp;b&#9;&#9;c")).toBe("a\u00a0b c");
    expect(canonical(" \n ")).toBe("");
  });

  test("empty nodes do not count; the nodes' boundaries do", () => {
    expect(fingerprintOf({ title: "t", ...nodes("a", " ", "b") })).toBe(fingerprintOf({ title: "t", ...nodes(" a", "b\n") }));
    expect(fingerprintOf({ title: "t", ...nodes("a", "b") })).not.toBe(fingerprintOf({ title: "t", ...nodes("a b") }));
  });

  test("XXH3 64 chained through the seed, as 16 hex digits (a fixed algorithm: stored values keep their meaning)", () => {
    // XXH3_64bits("") is 0x2d06800538d394c2 (the reference implementation's value).
    expect(fingerprintOf({ title: "", ...nodes() })).toBe("2d06800538d394c2");
    expect(fingerprintOf({ title: "abc", ...nodes() })).toBe("78af5f94892f3950");
  });
});
