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
