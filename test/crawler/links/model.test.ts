// addReferrer keeps a URL's referrers as the report gives them: the MAX_REFERRERS smallest, sorted,
// each once, whatever order the pages come in; and so do the memory ledger's gatherReferrer and keepSmallest.
import { expect, test } from "bun:test";
import { addReferrer, gatherReferrer, keepSmallest, MAX_REFERRERS, mergeReferrers } from "../../../src/crawler/links/model.ts";

function expected(all: string[]): string[] {
  return [...new Set(all)].sort().slice(0, MAX_REFERRERS);
}

test("the smallest referrers, sorted and unique, for pages met in order, in reverse, and shuffled with repeats", () => {
  const pages = Array.from({ length: 40 }, (_, i) => `https://example.com/p${String(i).padStart(2, "0")}`);
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const orders = [pages, [...pages].reverse()];
  for (let n = 0; n < 200; n++) {
    const count = 1 + Math.floor(random() * 30);
    orders.push(Array.from({ length: count }, () => pages[Math.floor(random() * pages.length)]!));
  }
  for (const order of orders) {
    const kept: string[] = [];
    for (const url of order) addReferrer(kept, url);
    expect(kept).toEqual(expected(order));
    // The memory ledger's way: gathered unsorted, cut whenever the buffer fills, read through keepSmallest.
    const buffer: string[] = [];
    for (const url of order) {
      gatherReferrer(buffer, url);
      expect(buffer.length).toBeLessThan(2 * MAX_REFERRERS);
    }
    expect(keepSmallest(buffer)).toEqual(expected(order));
  }
  expect(mergeReferrers(expected(pages.slice(10)), expected(pages.slice(0, 12)))).toEqual(expected(pages));
});
