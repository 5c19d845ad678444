import { describe, expect, test } from "bun:test";
import { acceptLimit, createRandom, type FillUint32 } from "../../src/password/random.ts";

const TWO_POW_32 = 2 ** 32;

/** A source that hands out `values` in order and fails when they run out. */
function scripted(values: number[]): { fill: FillUint32; used: () => number } {
  let at = 0;
  return {
    fill(target) {
      for (let i = 0; i < target.length; i++) {
        if (at >= values.length) throw new Error("scripted values exhausted");
        target[i] = values[at++]!;
      }
    },
    used: () => at,
  };
}

describe("acceptLimit", () => {
  test("is the largest multiple of n that fits in 2^32, so every residue has equally many values", () => {
    const sizes = [1, 2, 3, 7, 10, 26, 28, 62, 90, 94, 1000, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 3_000_000_000, TWO_POW_32];
    for (let n = 1; n <= 300; n++) sizes.push(n);
    for (const n of sizes) {
      const limit = acceptLimit(n);
      expect(limit % n).toBe(0);
      expect(limit).toBeLessThanOrEqual(TWO_POW_32);
      expect(TWO_POW_32 - limit).toBeLessThan(n);
    }
  });

  test("has the exact values of a few sizes", () => {
    expect(acceptLimit(10)).toBe(4_294_967_290);
    expect(acceptLimit(90)).toBe(4_294_967_220);
    expect(acceptLimit(2 ** 31 + 1)).toBe(2 ** 31 + 1);
    expect(acceptLimit(64)).toBe(TWO_POW_32);
  });
});

describe("uniformIndex", () => {
  test("discards values in the rejection zone and accepts the value just below it", () => {
    // For n = 10 the zone is 4294967290..4294967295; plain `% 10` would map them to 0..5.
    const source = scripted([4_294_967_295, 4_294_967_290, 4_294_967_289, 4_294_967_292, 5]);
    const random = createRandom(source.fill, 1);
    expect(random.uniformIndex(10)).toBe(9);
    expect(source.used()).toBe(3);
    expect(random.uniformIndex(10)).toBe(5);
    expect(source.used()).toBe(5);
  });

  test("rejects half the range when n is just above 2^31", () => {
    const n = 2 ** 31 + 1;
    const source = scripted([n, TWO_POW_32 - 1, 2 ** 31, 0]);
    const random = createRandom(source.fill, 1);
    expect(random.uniformIndex(n)).toBe(2 ** 31);
    expect(source.used()).toBe(3);
    expect(random.uniformIndex(n)).toBe(0);
  });

  test("takes every value when n divides 2^32", () => {
    const source = scripted([TWO_POW_32 - 1, TWO_POW_32 - 1, 63]);
    const random = createRandom(source.fill, 1);
    expect(random.uniformIndex(TWO_POW_32)).toBe(TWO_POW_32 - 1);
    expect(random.uniformIndex(64)).toBe(63);
    expect(random.uniformIndex(64)).toBe(63);
    expect(source.used()).toBe(3);
  });

  test("maps each accepted value to value mod n", () => {
    const values = [0, 1, 89, 90, 91, 4_294_967_219];
    const random = createRandom(scripted(values).fill, values.length);
    expect(values.map(() => random.uniformIndex(90))).toEqual([0, 1, 89, 0, 1, 89]);
  });

  test("fills a whole batch at a time", () => {
    const sizes: number[] = [];
    let counter = 0;
    const random = createRandom((target) => {
      sizes.push(target.length);
      for (let i = 0; i < target.length; i++) target[i] = counter++;
    }, 8);
    const drawn = Array.from({ length: 17 }, () => random.uniformIndex(1000));
    expect(drawn).toEqual(Array.from({ length: 17 }, (_, i) => i));
    expect(sizes).toEqual([8, 8, 8]);
  });

  test("the default source is crypto-backed and spreads over the range", () => {
    const random = createRandom();
    const drawn = Array.from({ length: 2000 }, () => random.uniformIndex(1_000_000_000));
    for (const value of drawn) {
      expect(Number.isInteger(value)).toBe(true);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1_000_000_000);
    }
    // 2000 draws from 10^9 values collide with probability about 0.002; more than 5 collisions
    // has probability below 1e-15.
    expect(new Set(drawn).size).toBeGreaterThan(1995);
  });
});
