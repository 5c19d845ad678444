// The rows of the link report's checks beyond the crawl's links (src/crawler/links/outside.ts): each URL checked
// once, at most the cap a kind, the distinct rest counted, referrers as for pages.
import { describe, expect, test } from "bun:test";
import { CheckLedger, MAX_CHECKED_URLS, MAX_COUNTED_UNCHECKED } from "../../../src/crawler/links/outside.ts";
import { defaultCrawlLimits } from "../../../src/crawler/index.ts";

const both = { external: true, resources: true };

describe("CheckLedger", () => {
  test("the cap is 10,000 URLs a kind by default, the crawl limits' maxCheckedUrls", () => {
    expect(MAX_CHECKED_URLS).toBe(10_000);
    expect(defaultCrawlLimits.maxCheckedUrls).toBe(10_000);
    const ledger = new CheckLedger(both);
    for (let i = 0; i < 10_000; i++) {
      expect(ledger.meet("external", `https://x.test/${i}`, "https://site.test/")).toBe(true);
      ledger.settle("external", `https://x.test/${i}`, { kind: "ok" });
    }
    expect(ledger.meet("external", "https://x.test/10000", "https://site.test/")).toBe(false);
    expect(ledger.report().external_unchecked).toBe(1);
  });

  test("a URL is to be checked once: on first meeting; later links only count as referrers", () => {
    const ledger = new CheckLedger(both, 10);
    expect(ledger.meet("external", "https://x.test/a", "https://site.test/p2")).toBe(true);
    expect(ledger.meet("external", "https://x.test/a", "https://site.test/p1")).toBe(false);
    // The same URL as a resource is another check (another kind of fault, other referrers).
    expect(ledger.meet("resource", "https://x.test/a", "https://site.test/p3")).toBe(true);
    for (let i = 0; i < 12; i++) ledger.meet("external", "https://x.test/a", `https://site.test/q${String(i).padStart(2, "0")}`);
    ledger.settle("external", "https://x.test/a", { kind: "broken", status: 404, error: "HTTP 404" });
    ledger.settle("resource", "https://x.test/a", { kind: "broken", status: null, error: "connection refused" });
    expect(ledger.report()).toEqual({
      broken: [
        {
          url: "https://x.test/a",
          kind: "external",
          status: 404,
          error: "HTTP 404",
          referrers: [
            "https://site.test/p1",
            "https://site.test/p2",
            "https://site.test/q00",
            "https://site.test/q01",
            "https://site.test/q02",
          ],
          referrer_count: 14,
        },
        {
          url: "https://x.test/a",
          kind: "resource",
          status: null,
          error: "connection refused",
          referrers: ["https://site.test/p3"],
          referrer_count: 1,
        },
      ],
      external_unchecked: 0,
      resources_unchecked: 0,
    });
  });

  test("fine URLs are not reported and keep no referrers; the list is sorted by url", () => {
    const ledger = new CheckLedger({ external: true, resources: false }, 10);
    for (const url of ["https://z.test/", "https://a.test/", "https://m.test/"]) ledger.meet("external", url, "https://site.test/");
    ledger.settle("external", "https://m.test/", { kind: "ok" });
    ledger.settle("external", "https://z.test/", { kind: "broken", status: 500, error: "HTTP 500" });
    ledger.settle("external", "https://a.test/", { kind: "broken", status: 410, error: "HTTP 410" });
    expect(ledger.meet("external", "https://m.test/", "https://site.test/x")).toBe(false);
    const report = ledger.report();
    expect(report.broken.map((b) => b.url)).toEqual(["https://a.test/", "https://z.test/"]);
    // Only the kinds checked carry a count.
    expect(report).toMatchObject({ external_unchecked: 0 });
    expect("resources_unchecked" in report).toBe(false);
  });

  test("past the cap: distinct URLs counted once each, however often they are met; never checked", () => {
    const ledger = new CheckLedger(both, 3);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 1_000; i++) {
        const wanted = ledger.meet("external", `https://x.test/${i}`, `https://site.test/p${round}`);
        expect(wanted).toBe(round === 0 && i < 3);
      }
    }
    for (let i = 0; i < 5; i++) ledger.meet("resource", `https://site.test/img/${i}.png`, "https://site.test/");
    for (let i = 0; i < 3; i++) {
      ledger.settle("external", `https://x.test/${i}`, { kind: "ok" });
      ledger.settle("resource", `https://site.test/img/${i}.png`, { kind: "ok" });
    }
    const report = ledger.report();
    expect(report.external_unchecked).toBe(997);
    expect(report.resources_unchecked).toBe(2);
  });

  test("a URL met and never checked (the crawl stopped first) counts as unchecked while its row waits", () => {
    const ledger = new CheckLedger(both, 2);
    ledger.meet("external", "https://x.test/a", "https://site.test/");
    expect(ledger.meet("external", "https://x.test/a", "https://site.test/b")).toBe(false);
    expect(ledger.report()).toEqual({ broken: [], external_unchecked: 1, resources_unchecked: 0 });
    expect(ledger.pending()).toEqual([{ kind: "external", url: "https://x.test/a" }]);
  });

  test("snapshot and restore: a crawl carried on keeps its rows, referrers, counts and filter, and checks what was pending", () => {
    const ledger = new CheckLedger(both, 3);
    for (let i = 0; i < 50; i++) ledger.meet("external", `https://x.test/${i}`, `https://site.test/p${i % 7}`);
    ledger.meet("external", "https://x.test/0", "https://site.test/q");
    ledger.meet("resource", "https://site.test/a.png", "https://site.test/");
    ledger.settle("external", "https://x.test/0", { kind: "broken", status: 404, error: "HTTP 404" });
    ledger.settle("external", "https://x.test/1", { kind: "ok" });
    const stored = JSON.parse(JSON.stringify(ledger.snapshot()));
    const carried = CheckLedger.restore(both, 3, stored);
    expect(carried.report()).toEqual(ledger.report());
    expect(carried.pending()).toEqual([
      { kind: "external", url: "https://x.test/2" },
      { kind: "resource", url: "https://site.test/a.png" },
    ]);
    // What was met before is known: neither checked again nor counted again past the cap.
    expect(carried.meet("external", "https://x.test/0", "https://site.test/r")).toBe(false);
    expect(carried.meet("external", "https://x.test/49", "https://site.test/r")).toBe(false);
    expect(carried.meet("external", "https://x.test/new", "https://site.test/r")).toBe(false);
    carried.settle("external", "https://x.test/2", { kind: "broken", status: 500, error: "HTTP 500" });
    const report = carried.report();
    expect(report.external_unchecked).toBe(48);
    expect(report.broken.find((b) => b.url === "https://x.test/0")).toMatchObject({
      referrer_count: 3,
      referrers: ["https://site.test/p0", "https://site.test/q", "https://site.test/r"],
    });
  });

  test(`the count past the cap stays within 0.3 % for ${(100_000).toLocaleString("en-US")} distinct URLs (a Bloom filter sized for ${MAX_COUNTED_UNCHECKED.toLocaleString("en-US")})`, () => {
    const ledger = new CheckLedger(both, 10);
    for (let i = 0; i < 100_010; i++) ledger.meet("external", `https://host${i % 97}.test/page/${i}`, "https://site.test/");
    for (let i = 0; i < 10; i++) ledger.settle("external", `https://host${i % 97}.test/page/${i}`, { kind: "ok" });
    const counted = ledger.report().external_unchecked!;
    expect(counted).toBeLessThanOrEqual(100_000);
    expect(counted).toBeGreaterThan(100_000 * 0.997);
  });
});
