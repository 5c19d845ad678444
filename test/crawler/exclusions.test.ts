import { expect, test } from "bun:test";
import { emptyExclusionReport, recordExclusion } from "../../src/crawler/exclusions.ts";

test("examples are the first five URLs in sorted order, whatever order the pages finished in", () => {
  const urls = Array.from({ length: 12 }, (_, i) => `https://example.com/p${String(i).padStart(2, "0")}`);
  const shuffled = [...urls].reverse().concat(urls.slice(0, 3));
  const a = emptyExclusionReport();
  const b = emptyExclusionReport();
  for (const url of urls) recordExclusion(a, "http_error", url);
  for (const url of shuffled) recordExclusion(b, "http_error", url);
  expect(a.excluded_examples.http_error).toEqual(urls.slice(0, 5));
  expect(b.excluded_examples.http_error).toEqual(urls.slice(0, 5));
  expect(a.excluded.http_error).toBe(12);
  expect(b.excluded.http_error).toBe(15);
  expect(a.excluded_examples.robots).toEqual([]);
});

test("an invalid example is cut to 200 characters (never inside a surrogate pair), the count is not", () => {
  const report = emptyExclusionReport();
  const long = `https://example.com/${"a".repeat(3_000)}`;
  recordExclusion(report, "invalid", long);
  recordExclusion(report, "invalid", `${long}b`); // reads the same once cut: one example, two counted
  recordExclusion(report, "invalid", "http://exa mple.com/");
  const emoji = `https://example.com/${"é".repeat(179)}😀😀`; // the 200th character is the first half of 😀
  recordExclusion(report, "invalid", emoji);
  expect(report.excluded.invalid).toBe(4);
  expect(report.excluded_examples.invalid).toEqual(["http://exa mple.com/", long.slice(0, 200), emoji.slice(0, 199)]);
  // Other reasons keep the URL whole.
  recordExclusion(report, "failed", long);
  expect(report.excluded_examples.failed).toEqual([long]);
});
