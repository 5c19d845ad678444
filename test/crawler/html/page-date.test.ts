import { describe, expect, test } from "bun:test";
import { extractPage } from "../../../src/crawler/html/links.ts";
import { jsonLdDateModified, pageLastmod, readW3cDate } from "../../../src/crawler/html/page-date.ts";

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

describe("readW3cDate", () => {
  test("each W3C datetime form becomes UTC to the second; a date stays a date", () => {
    expect(readW3cDate("2026-11-20", NOW)).toBe("2026-11-20");
    expect(readW3cDate("2026-11-20T10:15Z", NOW)).toBe("2026-11-20T10:15:00Z");
    expect(readW3cDate("2026-11-20T10:15:30Z", NOW)).toBe("2026-11-20T10:15:30Z");
    expect(readW3cDate("2026-11-20T10:15:30.987654Z", NOW)).toBe("2026-11-20T10:15:30Z");
    expect(readW3cDate(" 2026-11-20T10:15:30z ", NOW)).toBe("2026-11-20T10:15:30Z");
    expect(readW3cDate("2026-11-20 10:15:30Z", NOW)).toBe("2026-11-20T10:15:30Z");
  });

  test("offsets: ±hh:mm, ±hhmm and ±hh, crossing the day, month and year", () => {
    expect(readW3cDate("2026-11-20T10:15:00+01:00", NOW)).toBe("2026-11-20T09:15:00Z");
    expect(readW3cDate("2026-11-20T10:15:00-05:30", NOW)).toBe("2026-11-20T15:45:00Z");
    expect(readW3cDate("2026-11-20T10:15:00+0200", NOW)).toBe("2026-11-20T08:15:00Z");
    expect(readW3cDate("2026-11-20T10:15:00+09", NOW)).toBe("2026-11-20T01:15:00Z");
    expect(readW3cDate("2026-01-01T00:30:00+01:00", NOW)).toBe("2025-12-31T23:30:00Z");
    expect(readW3cDate("2025-12-31T23:30:00-01:00", NOW)).toBe("2026-01-01T00:30:00Z");
    expect(readW3cDate("2026-03-01T00:00:00+00:00", NOW)).toBe("2026-03-01T00:00:00Z");
  });

  test("malformed or impossible values are not dates", () => {
    for (const value of [
      "",
      "yesterday",
      "2026-11-20T10:15:00", // a time without a zone names no instant
      "2026-11-20T10:15",
      "2026-11-20T10Z",
      "2026-11-2",
      "26-11-20",
      "2026/11/20",
      "2026-13-01",
      "2026-02-29", // not a leap year
      "2026-04-31",
      "2026-11-00",
      "0000-01-01",
      "2026-11-20T24:00:00Z",
      "2026-11-20T10:60:00Z",
      "2026-11-20T10:15:60Z",
      "2026-11-20T10:15:00+24:00",
      "2026-11-20T10:15:00+01:60",
      "2026-11-20T10:15:00 +01:00",
      "Fri, 20 Nov 2026 10:15:00 GMT",
      "1763633700",
    ]) {
      expect([value, readW3cDate(value, NOW)]).toEqual([value, undefined]);
    }
    expect(readW3cDate("2028-02-29", Date.UTC(2030, 0))).toBe("2028-02-29");
    expect(readW3cDate("0099-05-01", NOW)).toBe("0099-05-01");
  });

  test("a date later than now is not plausible, with no allowance; now itself is", () => {
    expect(readW3cDate("2026-11-21T12:00:00Z", NOW)).toBe("2026-11-21T12:00:00Z");
    expect(readW3cDate("2026-11-21T12:00:01Z", NOW)).toBeUndefined();
    expect(readW3cDate("2026-11-21T13:00:01+01:00", NOW)).toBeUndefined();
    expect(readW3cDate("2026-11-21T12:59:59+01:00", NOW)).toBe("2026-11-21T11:59:59Z");
    expect(readW3cDate("2026-11-21", NOW)).toBe("2026-11-21");
    expect(readW3cDate("2026-11-22", NOW)).toBeUndefined();
  });
});

describe("jsonLdDateModified", () => {
  const block = (data: unknown) => JSON.stringify(data);

  test("the first dateModified of a top-level object, an array's members, a @graph's members or their mainEntity", () => {
    expect(jsonLdDateModified([block({ "@type": "Article", dateModified: "2026-01-02" })])).toBe("2026-01-02");
    expect(jsonLdDateModified([block([{ "@type": "Organization" }, { "@type": "BlogPosting", dateModified: "2026-01-03" }])])).toBe(
      "2026-01-03",
    );
    expect(
      jsonLdDateModified([
        block({ "@graph": [{ "@type": "WebSite" }, { "@type": "WebPage", dateModified: "2026-01-04" }, { dateModified: "2026-01-05" }] }),
      ]),
    ).toBe("2026-01-04");
    expect(jsonLdDateModified([block({ "@type": "WebPage", mainEntity: { "@type": "Article", dateModified: "2026-01-06" } })])).toBe(
      "2026-01-06",
    );
    // Blocks in document order; one without a date, or not JSON, is passed over.
    expect(
      jsonLdDateModified([
        block({ "@type": "BreadcrumbList" }),
        "{ not json, dateModified",
        block({ dateModified: "2026-01-07" }),
        block({ dateModified: "2026-01-08" }),
      ]),
    ).toBe("2026-01-07");
  });

  test("dates of nested things are not the page's; a dateModified that is no string is none", () => {
    expect(jsonLdDateModified([block({ "@type": "Product", review: { dateModified: "2026-01-02" } })])).toBeUndefined();
    expect(jsonLdDateModified([block({ "@type": "Article", comment: [{ dateModified: "2026-01-02" }] })])).toBeUndefined();
    expect(jsonLdDateModified([block({ "@graph": [{ "@graph": [{ dateModified: "2026-01-02" }] }] })])).toBeUndefined();
    expect(jsonLdDateModified([block({ dateModified: 20260102 }), block({ dateModified: ["2026-01-02"] })])).toBeUndefined();
    expect(jsonLdDateModified([block("dateModified"), block(null), "dateModified"])).toBeUndefined();
    expect(jsonLdDateModified([])).toBeUndefined();
  });
});

describe("pageLastmod: the page's own date, in order", () => {
  const headers = (init: Record<string, string> = {}) => new Headers(init);
  const LM = { "last-modified": "Fri, 20 Nov 2026 08:00:00 GMT" };

  test("article:modified_time, then JSON-LD dateModified, then Last-Modified", () => {
    expect(pageLastmod({ modifiedTime: "2026-11-19T10:00:00Z", dateModified: "2026-11-18T10:00:00Z" }, headers(LM), NOW)).toBe(
      "2026-11-19T10:00:00Z",
    );
    expect(pageLastmod({ dateModified: "2026-11-18T10:00:00Z" }, headers(LM), NOW)).toBe("2026-11-18T10:00:00Z");
    expect(pageLastmod({}, headers(LM), NOW)).toBe("2026-11-20T08:00:00Z");
    expect(pageLastmod({}, headers(), NOW)).toBeUndefined();
  });

  test("a malformed or future date is passed over for the next source", () => {
    expect(pageLastmod({ modifiedTime: "soon", dateModified: "2026-11-18" }, headers(LM), NOW)).toBe("2026-11-18");
    expect(pageLastmod({ modifiedTime: "2027-01-01T00:00:00Z", dateModified: "2026-11-18" }, headers(LM), NOW)).toBe("2026-11-18");
    expect(pageLastmod({ modifiedTime: "2027-01-01T00:00:00Z", dateModified: "2027-01-01" }, headers(LM), NOW)).toBe(
      "2026-11-20T08:00:00Z",
    );
    expect(
      pageLastmod({ modifiedTime: "2027-01-01T00:00:00Z" }, headers({ "last-modified": "Fri, 01 Jan 2027 00:00:00 GMT" }), NOW),
    ).toBeUndefined();
  });

  test("the 60 s rule is Last-Modified's only: a page's own date equal to its answer's Date is used", () => {
    const stamped = headers({ date: "Sat, 21 Nov 2026 11:59:30 GMT", "last-modified": "Sat, 21 Nov 2026 11:59:30 GMT" });
    expect(pageLastmod({}, stamped, NOW)).toBeUndefined();
    expect(pageLastmod({ modifiedTime: "2026-11-21T11:59:30Z" }, stamped, NOW)).toBe("2026-11-21T11:59:30Z");
  });
});

describe("extractPage: the dates a page gives itself", () => {
  const own = (html: string) => extractPage(html, "https://example.com/", "genapi", 100).ownDates;

  test("the first <meta property=article:modified_time> (any case, references decoded) and the first JSON-LD dateModified", () => {
    expect(
      own(
        `<meta property="og:updated_time" content="2026-01-01"><meta PROPERTY=" Article:Modified_Time " content="2026-01-02T10:00:00&#43;01:00">` +
          `<meta property="article:modified_time" content="2026-01-03"><script type="application/ld+json">{"dateModified": "2026-01-04"}</script>`,
      ),
    ).toEqual({ modifiedTime: "2026-01-02T10:00:00+01:00", dateModified: "2026-01-04" });
  });

  test("not the name= spelling, not article:published_time, not a script of another type, not JSON-LD inside svg", () => {
    expect(
      own(
        `<meta name="article:modified_time" content="2026-01-01"><meta property="article:published_time" content="2026-01-02">` +
          `<script type="application/json">{"dateModified": "2026-01-03"}</script><script>var x = {"dateModified": "2026-01-04"}</script>` +
          `<svg><script type="application/ld+json">{"dateModified": "2026-01-05"}</script></svg>`,
      ),
    ).toEqual({});
  });

  test("JSON-LD's type in any case with spaces around it; its text read as the script's raw text", () => {
    expect(own(`<script type=" Application/LD+JSON ">{"dateModified": "2026-01-06", "x": "</p><a href=/no>"}</script>`)).toEqual({
      dateModified: "2026-01-06",
    });
  });
});
