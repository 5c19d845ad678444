import { describe, expect, test } from "bun:test";
import { CHARSETS, CLASS_NAMES } from "../../src/password/charset.ts";
import { countPasswords, createAlphabet, entropyBits, generatePassword, log2BigInt } from "../../src/password/generator.ts";
import { createRandom, type Random } from "../../src/password/random.ts";

/** A Random that returns scripted indices and records how many it handed out. */
function scriptedIndices(indices: number[]): Random & { used: () => number } {
  let at = 0;
  return {
    uniformIndex(n) {
      const index = indices[at++];
      if (index === undefined || index >= n) throw new Error(`bad scripted index ${index} for n=${n}`);
      return index;
    },
    used: () => at,
  };
}

/** Brute force: every string over the alphabet, counting those that use every class. */
function enumerateCovering(classSizes: number[], length: number): number {
  const classOf = classSizes.flatMap((size, index) => Array<number>(size).fill(index));
  const all = (1 << classSizes.length) - 1;
  let count = 0;
  const walk = (depth: number, seen: number) => {
    if (depth === length) {
      if (seen === all) count++;
      return;
    }
    for (const cls of classOf) walk(depth + 1, seen | (1 << cls));
  };
  walk(0, 0);
  return count;
}

/** A different method: DP over the set of classes covered so far; counts for every length up to maxLength. */
function coverCountsByDp(classSizes: number[], maxLength: number): bigint[] {
  const all = (1 << classSizes.length) - 1;
  let ways: bigint[] = Array(all + 1).fill(0n);
  ways[0] = 1n;
  const counts = [ways[all]!];
  for (let length = 1; length <= maxLength; length++) {
    const next: bigint[] = Array(all + 1).fill(0n);
    ways.forEach((count, covered) => {
      if (count === 0n) return;
      classSizes.forEach((size, cls) => {
        next[covered | (1 << cls)]! += count * BigInt(size);
      });
    });
    ways = next;
    counts.push(ways[all]!);
  }
  return counts;
}

/** log2 from the decimal digits: a method independent of log2BigInt's bit shifting. */
function log2FromDecimal(value: bigint): number {
  const digits = value.toString();
  const head = digits.slice(0, 17);
  return Math.log2(Number(head)) + (digits.length - head.length) * Math.log2(10);
}

const FULL_SIZES = CLASS_NAMES.map((name) => CHARSETS[name].length);
const subsetsOf = <T>(items: readonly T[]) =>
  Array.from({ length: (1 << items.length) - 1 }, (_, i) => items.filter((_, bit) => (i + 1) & (1 << bit)));

describe("createAlphabet", () => {
  test("concatenates the classes and records each character's class", () => {
    const alphabet = createAlphabet(["AB", "c", "12"]);
    expect(alphabet.chars).toBe("ABc12");
    expect([...alphabet.classOf]).toEqual([0, 0, 1, 2, 2]);
    expect(alphabet.classSizes).toEqual([2, 1, 2]);
  });
});

describe("generatePassword", () => {
  test("redraws the whole password when a class is missing, never patches it", () => {
    const alphabet = createAlphabet(["AB", "12"]);
    // First try: 8 letters, no digit -> discarded entirely. Second try covers both classes.
    const random = scriptedIndices([0, 1, 0, 1, 0, 1, 0, 1, 2, 0, 0, 0, 0, 0, 0, 3]);
    expect(generatePassword(alphabet, 8, random)).toBe("1AAAAAA2");
    expect(random.used()).toBe(16);
  });

  test("returns the first draw when it already covers every class", () => {
    const alphabet = createAlphabet(["AB", "12", "#"]);
    const random = scriptedIndices([4, 3, 1, 0, 2, 2, 2, 2]);
    expect(generatePassword(alphabet, 8, random)).toBe("#2BA1111");
    expect(random.used()).toBe(8);
  });

  test("draws every character from the whole alphabet", () => {
    const alphabet = createAlphabet(["ABC", "xy"]);
    const sizes: number[] = [];
    const random: Random = {
      uniformIndex(n) {
        sizes.push(n);
        return sizes.length % n;
      },
    };
    generatePassword(alphabet, 8, random);
    expect(new Set(sizes)).toEqual(new Set([5]));
  });

  test("refuses a length that cannot hold every class", () => {
    expect(() => generatePassword(createAlphabet(["A", "b", "1"]), 2, createRandom())).toThrow(RangeError);
  });

  test("with the real source, uses only the alphabet and every class", () => {
    const alphabet = createAlphabet(["ABC", "12", "#"]);
    const random = createRandom();
    for (let i = 0; i < 200; i++) {
      const password = generatePassword(alphabet, 8, random);
      expect(password).toMatch(/^[ABC12#]{8}$/);
      expect(password).toMatch(/[ABC]/);
      expect(password).toMatch(/[12]/);
      expect(password).toMatch(/#/);
    }
  });
});

describe("countPasswords", () => {
  test("matches brute-force enumeration on tiny alphabets", () => {
    const cases: number[][] = [[1], [3], [1, 1], [2, 1], [1, 2, 1], [2, 2, 1], [1, 1, 1, 1], [3, 1, 2], [2, 1, 1, 1]];
    for (const sizes of cases) {
      for (let length = 1; length <= 6; length++) {
        expect({ sizes, length, count: countPasswords(sizes, length) }).toEqual({
          sizes,
          length,
          count: BigInt(enumerateCovering(sizes, length)),
        });
      }
    }
  });

  test("is zero when the length is below the number of classes", () => {
    expect(countPasswords([5, 5, 5], 2)).toBe(0n);
  });

  test("matches a covered-set DP for every class subset and every length 1..128", () => {
    for (const sizes of subsetsOf(FULL_SIZES)) {
      const byDp = coverCountsByDp(sizes, 128);
      for (let length = 1; length <= 128; length++) expect(countPasswords(sizes, length)).toBe(byDp[length]!);
    }
  });
});

describe("entropyBits", () => {
  test("has the exact values of known cases", () => {
    expect(entropyBits(FULL_SIZES, 16)).toBe(103.61);
    expect(entropyBits([10], 8)).toBe(26.58); // log2(10^8) = 26.575...
    expect(entropyBits([26], 128)).toBe(601.66); // 128 * log2(26) = 601.6563...
    expect(entropyBits([2, 2], 8)).toBe(15.99); // log2(4^8 - 2 * 2^8) = log2(65024) = 15.9886...
  });

  test("agrees with log2 of the DP count, taken from decimal digits, for every subset and length 8..128", () => {
    for (const sizes of subsetsOf(FULL_SIZES)) {
      const byDp = coverCountsByDp(sizes, 128);
      for (let length = 8; length <= 128; length++) {
        const independent = log2FromDecimal(byDp[length]!);
        expect(Math.abs(entropyBits(sizes, length) - independent)).toBeLessThanOrEqual(0.005 + 1e-9);
      }
    }
  });

  test("log2BigInt is exact on powers of two and accurate far beyond double range", () => {
    expect(log2BigInt(1n)).toBe(0);
    expect(log2BigInt(2n ** 1000n)).toBe(1000);
    expect(log2BigInt(3n ** 500n)).toBeCloseTo(500 * Math.log2(3), 9);
    expect(log2BigInt(2n ** 53n + 1n)).toBeCloseTo(53, 12);
  });
});
