// A page's links as the store keeps them (src/crawler/history.ts packLinks): relative to the origin, deflated
// only from a kilobyte on, and read back as they were given.
import { expect, test } from "bun:test";
import { packLinks, unpackLinks, w3cSeconds } from "../../src/crawler/index.ts";

const origin = "https://site.test";

test("a few links are kept as text, many deflated; both read back as given", () => {
  const few = [`${origin}/`, `${origin}/a?b=1`, "https://elsewhere.test/x", `${origin}/é`];
  const packedFew = packLinks(origin, few);
  expect(packedFew[0]).toBe(0);
  expect(new TextDecoder().decode(packedFew.subarray(1))).toBe(`/\n/a?b=1\nhttps://elsewhere.test/x\n/é`);
  expect(unpackLinks(origin, packedFew)).toEqual(few);

  const many = Array.from({ length: 200 }, (_, i) => `${origin}/page/${i}`);
  const packedMany = packLinks(origin, many);
  expect(packedMany[0]).toBe(1);
  expect(packedMany.byteLength).toBeLessThan(many.join("\n").length / 4);
  expect(unpackLinks(origin, packedMany)).toEqual(many);

  expect(unpackLinks(origin, packLinks(origin, []))).toEqual([]);
});

test("a time is dated to its second, UTC, whichever second was dated before it", () => {
  const at = Date.parse("2026-11-27T10:15:00.000Z");
  expect(w3cSeconds(at)).toBe("2026-11-27T10:15:00Z");
  expect(w3cSeconds(at + 999)).toBe("2026-11-27T10:15:00Z");
  expect(w3cSeconds(at + 1_000)).toBe("2026-11-27T10:15:01Z");
  expect(w3cSeconds(at - 1)).toBe("2026-11-27T10:14:59Z");
  expect(w3cSeconds(at + 86_400_000 + 500)).toBe("2026-11-28T10:15:00Z");
  expect(w3cSeconds(at + 999)).toBe("2026-11-27T10:15:00Z");
  expect(w3cSeconds(0)).toBe("1970-01-01T00:00:00Z");
  expect(w3cSeconds(-1)).toBe("1969-12-31T23:59:59Z");
  // Whatever came before: what a Date of the time says to the second, or its RangeError.
  const asDate = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
  for (const ms of [-0.5, -999.5, -1000, 999.9, 8.64e15, -8.64e15, 8.64e15 - 1, at + 0.25, at + 999.75]) {
    expect(w3cSeconds(ms)).toBe(asDate(ms));
    expect(w3cSeconds(ms)).toBe(asDate(ms));
  }
  expect(w3cSeconds(-0.5)).toBe("1970-01-01T00:00:00Z");
  for (const ms of [8.64e15 + 500, 8.64e15 + 1_000, Number.POSITIVE_INFINITY, Number.NaN]) {
    w3cSeconds(8.64e15);
    expect(() => w3cSeconds(ms)).toThrow(RangeError);
  }
  expect(w3cSeconds(at)).toBe("2026-11-27T10:15:00Z");
});
