// The tag scanner on hostile pages: linear work whatever the page holds. Each case is a page of up to
// 5 MiB made of one construct. The scanner counts the characters it examines (lastScanWork): its
// steps through the page, each from where the last one ended, plus what a script's "-->" search
// looks at beyond the point where the scan resumes (the one search that looks ahead). That count
// must stay within twice the page. The quadratic mistakes these constructs invite (searching for
// "-->" again from every "<" of an escaped script) would count about n² / 2 here and take minutes,
// not the 0.01-0.3 s each of these takes; a step that went backwards would never end.
import { describe, expect, test } from "bun:test";
import { extractPage } from "../../../src/crawler/html/links.ts";
import { lastScanWork, readStartTags } from "../../../src/crawler/html/tag-scanner.ts";

const MiB = 1024 * 1024;
const SIZE = 5 * MiB;

/** The tags reported, and the work against the page's length. */
function scan(html: string): { reported: number; hrefs: string[]; workPerChar: number } {
  let reported = 0;
  const hrefs: string[] = [];
  readStartTags(html, (_name, attributes) => {
    reported++;
    const href = attributes.get("href");
    if (href !== undefined && hrefs.length < 3) hrefs.push(href);
  });
  return { reported, hrefs, workPerChar: lastScanWork() / html.length };
}

const repeat = (unit: string, bytes: number) => unit.repeat(Math.floor(bytes / unit.length));

const CASES: { name: string; html: string; reported: number; hrefs?: string[] }[] = [
  { name: "`<a` repeated over 1 MiB (one tag name that never ends)", html: repeat("<a", MiB), reported: 0 },
  { name: "5 MiB of `<`", html: "<".repeat(SIZE), reported: 0 },
  { name: "5 MiB of `</`", html: repeat("</", SIZE), reported: 0 },
  { name: "5 MiB of links", html: repeat("<a href=/x>", SIZE), reported: Math.floor(SIZE / 11) },
  { name: "100,000 attributes in one tag, the href last", html: `<a ${"x ".repeat(100_000)}href=/found>`, reported: 1, hrefs: ["/found"] },
  { name: "100,000 attributes named href: the first wins", html: `<a ${"href=/1 ".repeat(100_000)}>`, reported: 1, hrefs: ["/1"] },
  { name: "attributes to the end of the page (no >)", html: `<a ${repeat("x ", SIZE)}`, reported: 0 },
  { name: "an unterminated double-quoted value", html: `<a href="${"x".repeat(SIZE)}`, reported: 0 },
  {
    name: "a quote opened in every tag, closed by the next one's",
    html: repeat(`<a href='x>`, SIZE),
    reported: Math.floor(Math.floor(SIZE / 11) / 2),
    hrefs: ["x><a href=", "x><a href=", "x><a href="],
  },
  { name: "an unterminated comment of dashes", html: `<!--${"-".repeat(SIZE)}`, reported: 0 },
  { name: "a comment of near-ends (--x)", html: `<!--${repeat("--x", SIZE)}`, reported: 0 },
  { name: "a bogus comment with no >", html: `<!${"x".repeat(SIZE)}`, reported: 0 },
  { name: "an escaped script of `<-` with no -->", html: `<script><!--${repeat("<-", SIZE)}`, reported: 0 },
  { name: "a double-escaped script of `<script>`", html: `<script><!--${repeat("<script>", SIZE)}`, reported: 0 },
  { name: "a double-escaped script of `</scrip`", html: `<script><!--<script>${repeat("</scrip-", SIZE)}`, reported: 0 },
  { name: "scripts entering and leaving their escapes", html: repeat(`<script><!--<script>--></script -->`, SIZE), reported: 0 },
  { name: "a title of near-end tags", html: `<title>${repeat("</titl", SIZE)}`, reported: 0 },
  { name: "a million nested bold tags, then a link", html: `${repeat("<b>", SIZE)}<a href=/deep>`, reported: 1, hrefs: ["/deep"] },
  { name: "a million nested svg, then a link", html: `${repeat("<svg>", SIZE)}<a href=/deep>`, reported: 1, hrefs: ["/deep"] },
  {
    name: "svg and foreignObject nested in turn, then a link",
    html: `${repeat("<svg><foreignObject>", SIZE)}<a href=/deep>`,
    reported: 1,
    hrefs: ["/deep"],
  },
  { name: "an unterminated CDATA section in svg", html: `<svg><![CDATA[${repeat("]]", SIZE)}`, reported: 0 },
  { name: "5 MiB of end tags with attributes", html: repeat(`</a x="y">`, SIZE), reported: 0 },
  { name: "5 MiB of images", html: repeat(`<img src=/i.png>`, SIZE), reported: Math.floor(SIZE / 16) },
];

describe("hostile pages: the scanner's work stays within twice the page", () => {
  for (const { name, html, reported, hrefs } of CASES) {
    test(name, () => {
      const result = scan(html);
      expect(result.reported).toBe(reported);
      if (hrefs) expect(result.hrefs).toEqual(hrefs);
      expect(result.workPerChar).toBeLessThanOrEqual(2 + 16 / html.length);
    });
  }

  test("the text mode on the same pages: the same work, the same tags", () => {
    for (const { name, html, reported } of CASES) {
      let seen = 0;
      readStartTags(html, () => seen++, true);
      expect([name, seen, lastScanWork() / html.length <= 2 + 16 / html.length]).toEqual([name, reported, true]);
    }
  });

  test("fingerprints of pages made of what the text mode tracks: a million text nodes, nested and unclosed regions", () => {
    const fingerprint = (html: string) => extractPage(html, "http://site.test/", "genapi", 10, { fingerprint: true }).fingerprint;
    const pages = [
      repeat("a<b>", SIZE),
      repeat("<nav>", SIZE),
      repeat("a</nav>", SIZE),
      repeat("<main>a", SIZE),
      `<main>${repeat("<nav>a", SIZE)}`,
      repeat("a&amp;<i>", SIZE),
      `${repeat("<template>", SIZE)}a`,
    ];
    const found = pages.map(fingerprint);
    for (const value of found) expect(value).toMatch(/^[0-9a-f]{16}$/);
    // Nested navs and templates hide everything; the first of a million nested mains holds all their
    // text, as many "a" nodes as the same number of "a</nav>" in the body.
    expect(found[1]).toBe(fingerprint(""));
    expect(found[6]).toBe(fingerprint(""));
    expect(found[3]).toBe(found[2]);
    expect(new Set(found).size).toBe(5);
  });

  test("extractPage on the same kind of page: the link after 100,000 attributes, none from an unterminated script", () => {
    expect(extractPage(`<a ${"x ".repeat(100_000)}href=/found>`, "http://site.test/", "genapi", 10).links).toEqual([
      "http://site.test/found",
    ]);
    expect(extractPage(`<a href=/before><script><!--${repeat("<a href=/no>", SIZE)}`, "http://site.test/", "genapi", 10).links).toEqual([
      "http://site.test/before",
    ]);
  });
});
