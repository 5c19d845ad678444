import { describe, expect, test } from "bun:test";
import { isHtml, isRedirect, lastModifiedOf, linkHeaderCanonical, mediaTypeOf } from "../../../src/crawler/net/headers.ts";

const h = (init: Record<string, string>) => new Headers(init);
const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

test("redirect statuses are 301, 302, 303, 307 and 308", () => {
  expect([300, 301, 302, 303, 304, 305, 307, 308].filter(isRedirect)).toEqual([301, 302, 303, 307, 308]);
});

describe("mediaTypeOf / isHtml", () => {
  test("reads the lower-cased type and the charset parameter", () => {
    expect(mediaTypeOf(h({ "content-type": 'Text/HTML; Charset="ISO-8859-1"' }))).toEqual({ type: "text/html", charset: "ISO-8859-1" });
    expect(mediaTypeOf(h({ "content-type": "application/xhtml+xml" }))).toEqual({ type: "application/xhtml+xml", charset: undefined });
    expect(mediaTypeOf(h({}))).toEqual({ type: null, charset: undefined });
  });

  test("only text/html and application/xhtml+xml are HTML", () => {
    expect(["text/html", "application/xhtml+xml", "text/plain", "image/png", "application/xml"].filter(isHtml)).toEqual([
      "text/html",
      "application/xhtml+xml",
    ]);
    expect(isHtml(null)).toBe(false);
  });
});

describe("lastModifiedOf", () => {
  test("a date read before is judged against each call's now (the reading is remembered, not the verdict)", () => {
    const date = h({ "last-modified": "Sun, 22 Nov 2026 10:15:00 GMT" });
    expect(lastModifiedOf(date, Date.UTC(2026, 10, 23))).toBe("2026-11-22T10:15:00Z");
    expect(lastModifiedOf(date, NOW)).toBeUndefined(); // later than now
    expect(lastModifiedOf(date, Date.UTC(2026, 10, 23))).toBe("2026-11-22T10:15:00Z");
    expect(lastModifiedOf(h({}), NOW)).toBeUndefined();
    expect(lastModifiedOf(h({ "last-modified": "Sun, 22 Nov 2026 10:15:00 GMT " }), Date.UTC(2026, 10, 23))).toBe("2026-11-22T10:15:00Z");
  });
  test("a valid IMF-fixdate becomes a W3C datetime in UTC", () => {
    expect(lastModifiedOf(h({ "last-modified": "Sat, 21 Nov 2026 10:15:00 GMT" }), NOW)).toBe("2026-11-21T10:15:00Z");
    expect(lastModifiedOf(h({ "last-modified": "Tue, 29 Feb 2028 23:59:59 GMT" }), Date.UTC(2030, 0))).toBe("2028-02-29T23:59:59Z");
  });

  test("the obsolete RFC 850 and asctime forms are read too (RFC 9110 5.6.7)", () => {
    expect(lastModifiedOf(h({ "last-modified": "Saturday, 21-Nov-26 10:15:00 GMT" }), NOW)).toBe("2026-11-21T10:15:00Z");
    expect(lastModifiedOf(h({ "last-modified": "Sunday, 06-Nov-94 08:49:37 GMT" }), NOW)).toBe("1994-11-06T08:49:37Z");
    // A two-digit year more than 50 years ahead is the last such year in the past.
    expect(lastModifiedOf(h({ "last-modified": "Monday, 01-Jan-77 00:00:00 GMT" }), NOW)).toBe("1977-01-01T00:00:00Z");
    expect(lastModifiedOf(h({ "last-modified": "Wednesday, 01-Jan-76 00:00:00 GMT" }), NOW)).toBeUndefined(); // 2076: future
    expect(lastModifiedOf(h({ "last-modified": "Sat Nov 21 10:15:00 2026" }), NOW)).toBe("2026-11-21T10:15:00Z");
    expect(lastModifiedOf(h({ "last-modified": "Sun Nov  6 08:49:37 1994" }), NOW)).toBe("1994-11-06T08:49:37Z");
    for (const value of [
      "Sunday, 31-Feb-26 08:49:37 GMT",
      "Sun, 06-Nov-94 08:49:37 GMT",
      "Sun Nov 6 08:49:37 1994",
      "Sun Nov  6 08:49:37 1994 GMT",
    ]) {
      expect(lastModifiedOf(h({ "last-modified": value }), NOW)).toBeUndefined();
    }
  });

  test("absent, malformed, impossible or future dates give no lastmod", () => {
    for (const value of [
      "yesterday",
      "2026-11-21",
      "Sat, 21 Nov 2026 10:15:00 PST",
      "Sat, 31 Feb 2026 10:15:00 GMT",
      "Sat, 21 Nov 2026 25:00:00 GMT",
      "Sat, 21 Foo 2026 10:15:00 GMT",
      "Sat, 21 Nov 0099 10:15:00 GMT",
      "Sun, 22 Nov 2026 10:15:00 GMT",
    ]) {
      expect(lastModifiedOf(h({ "last-modified": value }), NOW)).toBeUndefined();
    }
    expect(lastModifiedOf(h({}), NOW)).toBeUndefined();
  });

  test("a Last-Modified within 60 s of the answer's own Date (a server stamping every answer 'now') is not used", () => {
    const at = (lastModified: string, date: string) => lastModifiedOf(h({ "last-modified": lastModified, date }), NOW);
    expect(at("Sat, 21 Nov 2026 11:00:00 GMT", "Sat, 21 Nov 2026 11:00:00 GMT")).toBeUndefined();
    expect(at("Sat, 21 Nov 2026 11:00:00 GMT", "Sat, 21 Nov 2026 11:01:00 GMT")).toBeUndefined(); // 60 s: within
    expect(at("Sat, 21 Nov 2026 11:00:00 GMT", "Sat, 21 Nov 2026 11:01:01 GMT")).toBe("2026-11-21T11:00:00Z");
    // Either side of Date, and whatever form each is written in.
    expect(at("Sat, 21 Nov 2026 11:00:30 GMT", "Sat, 21 Nov 2026 11:00:00 GMT")).toBeUndefined();
    expect(at("Saturday, 21-Nov-26 11:00:00 GMT", "Sat Nov 21 11:00:59 2026")).toBeUndefined();
    // The rule looks at the answer's Date, not at the crawl's clock: an old Date and the same Last-Modified still match.
    expect(at("Fri, 20 Nov 2020 08:00:00 GMT", "Fri, 20 Nov 2020 08:00:00 GMT")).toBeUndefined();
    // A Last-Modified close to the crawl's now but far from Date is used; an absent or unreadable Date rules out nothing.
    expect(at("Sat, 21 Nov 2026 11:59:59 GMT", "Sat, 21 Nov 2026 10:00:00 GMT")).toBe("2026-11-21T11:59:59Z");
    expect(lastModifiedOf(h({ "last-modified": "Sat, 21 Nov 2026 11:59:59 GMT" }), NOW)).toBe("2026-11-21T11:59:59Z");
    expect(at("Sat, 21 Nov 2026 11:59:59 GMT", "now")).toBe("2026-11-21T11:59:59Z");
    // The remembered reading of a repeated Last-Modified is judged against each answer's Date.
    expect(at("Sat, 21 Nov 2026 09:00:00 GMT", "Sat, 21 Nov 2026 09:00:10 GMT")).toBeUndefined();
    expect(at("Sat, 21 Nov 2026 09:00:00 GMT", "Sat, 21 Nov 2026 10:00:00 GMT")).toBe("2026-11-21T09:00:00Z");
  });
});

describe("linkHeaderCanonical", () => {
  test('finds the rel="canonical" entry among others', () => {
    expect(linkHeaderCanonical(h({ link: '</style.css>; rel=preload; as=style, <https://site.test/a,b>; rel="canonical"' }))).toBe(
      "https://site.test/a,b",
    );
    expect(linkHeaderCanonical(h({ link: "</c>; REL=canonical" }))).toBe("/c");
    expect(linkHeaderCanonical(h({ link: '</x>; rel="alternate canonical"' }))).toBe("/x");
  });

  test("no canonical entry, no canonical", () => {
    expect(linkHeaderCanonical(h({ link: '</fr>; rel="alternate"; hreflang=fr' }))).toBeUndefined();
    expect(linkHeaderCanonical(h({}))).toBeUndefined();
  });
});
