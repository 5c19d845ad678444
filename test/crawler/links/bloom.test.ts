// The Bloom filter of job crawls' seen sets and of the link checks' count past their cap: never a false "not seen", and about 1% false "maybe".
import { expect, test } from "bun:test";
import { BloomFilter } from "../../../src/crawler/links/bloom.ts";

test("no false negatives; false positives near 1% at capacity", () => {
  const filter = new BloomFilter(20_000);
  for (let i = 0; i < 20_000; i++) filter.add(`https://example.com/page/${i}?q=${i * 7}`);
  for (let i = 0; i < 20_000; i++) expect(filter.mayHave(`https://example.com/page/${i}?q=${i * 7}`)).toBe(true);
  let falsePositives = 0;
  for (let i = 0; i < 100_000; i++) if (filter.mayHave(`https://example.com/other/${i}`)) falsePositives++;
  expect(falsePositives / 100_000).toBeLessThan(0.02);
});

test("addIfNew: true for an item not added before, false once it is (add and mayHave in one hash)", () => {
  const filter = new BloomFilter(1_000);
  expect(filter.addIfNew("https://example.com/a")).toBe(true);
  expect(filter.addIfNew("https://example.com/a")).toBe(false);
  expect(filter.mayHave("https://example.com/a")).toBe(true);
  let fresh = 0;
  for (let i = 0; i < 1_000; i++) if (filter.addIfNew(`https://example.com/p/${i}`)) fresh++;
  expect(fresh).toBeGreaterThan(990);
  for (let i = 0; i < 1_000; i++) expect(filter.addIfNew(`https://example.com/p/${i}`)).toBe(false);
});
