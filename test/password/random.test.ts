import { describe, expect, test } from "bun:test";
import { acceptLimit, bitLength, createRandom, uniformBigInt, type FillUint32 } from "../../src/password/random.ts";

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

describe("bitLength", () => {
  test("counts the bits of powers of two, their neighbours and large values", () => {
    expect(bitLength(1n)).toBe(1);
    expect(bitLength(0n)).toBe(0);
    for (let e = 1; e <= 900; e++) {
      expect(bitLength(2n ** BigInt(e))).toBe(e + 1);
      expect(bitLength(2n ** BigInt(e) - 1n)).toBe(e);
    }
    expect(bitLength(90n ** 128n)).toBe((90n ** 128n).toString(2).length);
  });
});

describe("uniformBigInt", () => {
  test("below 2^32 it is one uniformIndex draw", () => {
    const source = scripted([4_294_967_295, 41]);
    const random = createRandom(source.fill, 1);
    expect(uniformBigInt(random, 100n)).toBe(41n); // 4294967295 is in the rejection zone for 100
    expect(source.used()).toBe(2);
  });

  test("takes the top word short and the others whole, most significant first", () => {
    // limit 2^40: limit - 1 has 40 bits, so an 8-bit top word and one 32-bit word.
    const source = scripted([0xab, 0x12345678]);
    const random = createRandom(source.fill, 1);
    expect(uniformBigInt(random, 2n ** 40n)).toBe(0xab12345678n);
    expect(source.used()).toBe(2);
  });

  test("redraws every word of a value at or above the limit, never reduces it", () => {
    // limit = 2^32 + 5: 33 bits, a 1-bit top word. 2^32 + 5 itself and 2^32 + 7 are refused;
    // 2^32 + 4 is the largest value taken.
    const limit = 2n ** 32n + 5n;
    const source = scripted([1, 5, 1, 7, 1, 4]);
    const random = createRandom(source.fill, 1);
    expect(uniformBigInt(random, limit)).toBe(2n ** 32n + 4n);
    expect(source.used()).toBe(6);
  });

  test("is uniform where a reduction modulo the limit would not be (seeded source)", () => {
    // limit = 3 * 2^31 takes 33 bits. Uniform: P(value < 2^32) = 2/3. Reducing the 33-bit value
    // modulo the limit instead of redrawing would fold [3 * 2^31, 2^33) onto [0, 2^31): 3/4.
    // 20,000 draws: standard deviation 0.0033, so the bound 0.02 is 6 of them (false failure
    // below 1e-8) and the biased 3/4 lies 25 away.
    const limit = 3n * 2n ** 31n;
    let state = 0x9e3779b9;
    const random = createRandom((target) => {
      for (let i = 0; i < target.length; i++) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        target[i] = state >>> 0;
      }
    });
    const n = 20_000;
    let low = 0;
    for (let i = 0; i < n; i++) {
      const value = uniformBigInt(random, limit);
      if (value < 0n || value >= limit) throw new Error(`out of range: ${value}`);
      if (value < 2n ** 32n) low++;
    }
    expect(Math.abs(low / n - 2 / 3)).toBeLessThan(0.02);
  });

  test("spreads over a large range with the real source", () => {
    const random = createRandom();
    const limit = 10n ** 40n;
    const drawn = Array.from({ length: 1000 }, () => uniformBigInt(random, limit));
    expect(drawn.every((v) => v >= 0n && v < limit)).toBe(true);
    expect(new Set(drawn).size).toBe(1000);
    // Each draw is below limit / 10 with probability 1/10; fewer than 50 or more than 160 of 1000
    // has probability below 1e-8.
    const low = drawn.filter((v) => v < limit / 10n).length;
    expect(low).toBeGreaterThan(50);
    expect(low).toBeLessThan(160);
  });

  test("refuses a limit of 0 or below", () => {
    expect(() => uniformBigInt(createRandom(), 0n)).toThrow(RangeError);
    expect(() => uniformBigInt(createRandom(), -5n)).toThrow(RangeError);
  });
});
