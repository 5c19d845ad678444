// The exact sampler under per-class minimums: its counts against brute force and an independent
// sum over count vectors, its entropy, and chi-square tests (seeded sources, so the figures are
// repeatable) that the count vectors, the positions and whole strings come out uniformly; each
// check is also run on a plausible wrong sampler, which it must reject.
import { describe, expect, test } from "bun:test";
import { classCountTable, fillClassCounts, sampleClassCounts, cachedClassCountTable } from "../../src/password/class-counts.ts";
import { countPasswords, createAlphabet, generateWithMinimums, log2BigInt } from "../../src/password/generator.ts";
import type { Random } from "../../src/password/random.ts";
import { chiSquareTest, seededRandom } from "./chi-square.ts";

/** Brute force: every string over classes of `sizes`, counting those with at least `minimums[j]` of class j. */
function enumerate(sizes: number[], minimums: number[], length: number): number {
  const classOf = sizes.flatMap((size, cls) => Array<number>(size).fill(cls));
  const counts = sizes.map(() => 0);
  let valid = 0;
  const walk = (depth: number) => {
    if (depth === length) {
      if (counts.every((c, j) => c >= minimums[j]!)) valid++;
      return;
    }
    for (const cls of classOf) {
      counts[cls]!++;
      walk(depth + 1);
      counts[cls]!--;
    }
  };
  walk(0);
  return valid;
}

const factorial = (n: number): bigint => (n <= 1 ? 1n : BigInt(n) * factorial(n - 1));

/** Every count vector with c_j >= m_j summing to `length`, with its number of strings (multinomial * prod s^c). */
function vectors(sizes: number[], minimums: number[], length: number): { counts: number[]; strings: bigint }[] {
  const out: { counts: number[]; strings: bigint }[] = [];
  const walk = (j: number, left: number, counts: number[]) => {
    if (j === sizes.length - 1) {
      if (left < minimums[j]!) return;
      const all = [...counts, left];
      let strings = factorial(length);
      all.forEach((c, i) => {
        strings = (strings / factorial(c)) * BigInt(sizes[i]!) ** BigInt(c);
      });
      out.push({ counts: all, strings });
      return;
    }
    for (let c = minimums[j]!; c <= left; c++) walk(j + 1, left - c, [...counts, c]);
  };
  walk(0, length, []);
  return out;
}

const sumOf = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);
const rounded = (count: bigint) => Math.round(log2BigInt(count) * 100) / 100;

describe("classCountTable: the number of strings that meet the minimums", () => {
  test("matches brute-force enumeration on small alphabets", () => {
    const cases: [number[], number[]][] = [
      [[3], [0]],
      [[3], [2]],
      [
        [2, 1],
        [1, 1],
      ],
      [
        [2, 1],
        [0, 3],
      ],
      [
        [1, 2, 1],
        [1, 1, 1],
      ],
      [
        [2, 2, 1],
        [2, 0, 2],
      ],
      [
        [1, 1, 1, 1],
        [1, 1, 1, 1],
      ],
      [
        [3, 1, 2],
        [1, 3, 1],
      ],
      [
        [2, 1, 1, 1],
        [1, 2, 0, 2],
      ],
    ];
    for (const [sizes, minimums] of cases) {
      for (let length = 1; length <= 7; length++) {
        const expected = BigInt(enumerate(sizes, minimums, length));
        expect({ sizes, minimums, length, total: classCountTable(sizes, minimums, length).total }).toEqual({
          sizes,
          minimums,
          length,
          total: expected,
        });
      }
    }
  });

  test("equals the sum over count vectors (multinomial x powers) for the real class sizes", () => {
    const sizes = [26, 26, 10, 28];
    for (const [minimums, length] of [
      [[1, 1, 1, 12], 16],
      [[1, 1, 1, 1], 16],
      [[3, 5, 2, 7], 20],
      [[1, 1, 1, 1], 64],
      [[10, 20, 30, 40], 128],
      [[1, 1, 1, 125], 128],
    ] as const) {
      const expected = sumOf(vectors(sizes, [...minimums], length).map((v) => v.strings));
      expect(classCountTable(sizes, minimums, length).total).toBe(expected);
    }
  });

  test("with every minimum 1 it is the inclusion–exclusion count of seed 000's rule, for every class subset and length", () => {
    const all = [26, 26, 10, 28];
    for (let mask = 1; mask < 16; mask++) {
      const sizes = all.filter((_, bit) => mask & (1 << bit));
      for (let length = 1; length <= 128; length++) {
        expect(
          classCountTable(
            sizes,
            sizes.map(() => 1),
            length,
          ).total,
        ).toBe(countPasswords(sizes, length));
      }
    }
  });

  test("with no minimum it is every string, and minimums past the length leave none", () => {
    expect(classCountTable([26, 10], [0, 0], 9).total).toBe(36n ** 9n);
    expect(classCountTable([26, 10], [5, 5], 9).total).toBe(0n);
    expect(classCountTable([5], [9], 9).total).toBe(5n ** 9n);
    expect(classCountTable([5], [10], 9).total).toBe(0n);
  });

  test("entropyBits is log2 of the brute-force count, rounded to 2 decimals; acceptance is the valid share", () => {
    for (const [sizes, minimums, length] of [
      [[2, 3, 1], [2, 1, 1], 7],
      [[1, 1, 1, 1], [1, 1, 1, 1], 6],
      [[4, 2], [1, 4], 8],
    ] as const) {
      const valid = enumerate([...sizes], [...minimums], length);
      const table = classCountTable(sizes, minimums, length);
      expect(table.total).toBe(BigInt(valid));
      expect(table.entropyBits).toBe(Math.round(Math.log2(valid) * 100) / 100);
      const all = sizes.reduce((a, b) => a + b, 0) ** length;
      expect(table.acceptance).toBeCloseTo(valid / all, 9);
    }
    // The bench's request: 16 characters, at least 12 of the 28 symbols and one of each other class.
    // Its count from the four count vectors: log2 = 90.88.
    const bench = classCountTable([26, 26, 10, 28], [1, 1, 1, 12], 16);
    expect(bench.entropyBits).toBe(rounded(sumOf(vectors([26, 26, 10, 28], [1, 1, 1, 12], 16).map((v) => v.strings))));
    expect(bench.entropyBits).toBe(90.88);
    // A redraw would succeed 1.23e-4 of the time: some 8,150 attempts a password.
    const share = Number((sumOf(vectors([26, 26, 10, 28], [1, 1, 1, 12], 16).map((v) => v.strings)) * 10n ** 18n) / 90n ** 16n) / 1e18;
    expect(bench.acceptance).toBeCloseTo(share, 8);
    expect(Math.round(1 / share)).toBe(8151);
  });

  test("refuses shapes it cannot count", () => {
    expect(() => classCountTable([], [], 8)).toThrow(RangeError);
    expect(() => classCountTable([3, 4], [1], 8)).toThrow(RangeError);
    expect(() => classCountTable([3], [1], 0)).toThrow(RangeError);
    expect(() => classCountTable([3], [1], 129)).toThrow(RangeError);
    expect(() => sampleClassCounts(classCountTable([3, 3], [5, 5], 9), seededRandom(1))).toThrow(RangeError);
  });

  test("the cache hands back the same table for the same shape", () => {
    const a = cachedClassCountTable([26, 10], [3, 2], 12);
    expect(cachedClassCountTable([26, 10], [3, 2], 12)).toBe(a);
    expect(cachedClassCountTable([26, 10], [3, 2], 13)).not.toBe(a);
    expect(cachedClassCountTable([26, 10], [3, 2], 12).total).toBe(classCountTable([26, 10], [3, 2], 12).total);
  });
});

/** Draws `n` samples and counts each distinct key. */
function tally<T>(n: number, draw: () => T, key: (value: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const k = key(draw());
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

/** Chi-square of observed vector counts against their exact probabilities; an unexpected vector fails outright. */
function vectorCheck(sizes: number[], minimums: number[], length: number, n: number, draw: () => number[]) {
  const all = vectors(sizes, minimums, length);
  const total = sumOf(all.map((v) => v.strings));
  const observed = tally(n, draw, (counts) => counts.join(","));
  const keys = all.map((v) => v.counts.join(","));
  const unexpected = [...observed.keys()].filter((k) => !keys.includes(k));
  const probabilities = all.map((v) => Number((v.strings * 10n ** 15n) / total) / 1e15);
  // Vectors expected fewer than 5 times share one cell, so that the chi-square approximation holds.
  const cells: number[] = [];
  const cellProbabilities: number[] = [];
  let rare = 0;
  let rareProbability = 0;
  keys.forEach((k, i) => {
    if (probabilities[i]! * n < 5) {
      rare += observed.get(k) ?? 0;
      rareProbability += probabilities[i]!;
    } else {
      cells.push(observed.get(k) ?? 0);
      cellProbabilities.push(probabilities[i]!);
    }
  });
  if (rareProbability * n >= 5 || cells.length === 0) {
    cells.push(rare);
    cellProbabilities.push(rareProbability);
  } else if (rareProbability > 0) {
    // Still too rare on their own: they join the least likely of the other cells.
    const smallest = cellProbabilities.indexOf(Math.min(...cellProbabilities));
    cells[smallest]! += rare;
    cellProbabilities[smallest]! += rareProbability;
  }
  return { unexpected, cells: cells.length, ...chiSquareTest(cells, cellProbabilities) };
}

/** A wrong sampler: each class's minimum first, the rest uniformly from the whole alphabet (seed and shuffle's counts). */
function seededCounts(sizes: number[], minimums: number[], length: number, random: Random): number[] {
  const counts = [...minimums];
  const alphabet = sizes.reduce((a, b) => a + b, 0);
  for (let i = minimums.reduce((a, b) => a + b, 0); i < length; i++) {
    let pick = random.uniformIndex(alphabet);
    let cls = 0;
    while (pick >= sizes[cls]!) pick -= sizes[cls++]!;
    counts[cls]!++;
  }
  return counts;
}

describe("sampleClassCounts: count vectors in proportion to their strings (chi-square, 1e-8 tail)", () => {
  const cases: [string, number[], number[], number][] = [
    ["the bench's length 16 with min_symbols=12", [26, 26, 10, 28], [1, 1, 1, 12], 16],
    ["length 10, minimums 2, 1, 3, 1", [26, 26, 10, 28], [2, 1, 3, 1], 10],
    ["length 12 over digits and 3 symbols, at least 6 symbols", [10, 3], [1, 6], 12],
  ];
  for (const [name, sizes, minimums, length] of cases) {
    test(name, () => {
      const table = classCountTable(sizes, minimums, length);
      const random = seededRandom(2027);
      const result = vectorCheck(sizes, minimums, length, 60_000, () => sampleClassCounts(table, random));
      expect(result.unexpected).toEqual([]);
      expect(result.ok).toBe(true);
    });

    test(`${name}: the check rejects seeding the minimums and filling the rest uniformly`, () => {
      const random = seededRandom(7);
      const result = vectorCheck(sizes, minimums, length, 60_000, () => seededCounts(sizes, minimums, length, random));
      expect(result.ok).toBe(false);
    });
  }

  test("one BigInt draw per vector: its remainder at each step is the next step's draw", () => {
    // A source that always answers 0: u = 0 picks each class's smallest count, and the whole
    // vector costs exactly the words of one draw below the total (104 bits: 4 words).
    const table = classCountTable([26, 26, 10, 28], [1, 2, 1, 3], 16);
    const calls: number[] = [];
    const zero: Random = {
      uniformIndex(n) {
        calls.push(n);
        return 0;
      },
    };
    expect(sampleClassCounts(table, zero)).toEqual([1, 2, 1, 12]);
    expect(calls).toHaveLength(Math.ceil((table.total - 1n).toString(2).length / 32));
  });

  test("every case has several cells, none expected fewer than 5 times", () => {
    for (const [, sizes, minimums, length] of cases) {
      const table = classCountTable(sizes, minimums, length);
      const random = seededRandom(3);
      const result = vectorCheck(sizes, minimums, length, 60_000, () => sampleClassCounts(table, random));
      expect(result.cells).toBeGreaterThanOrEqual(4);
      expect(result.minExpected).toBeGreaterThanOrEqual(5);
    }
  });
});

describe("fillClassCounts: positions and characters uniform for given counts", () => {
  const classes = ["ABCD", "xy", "0123456789"];
  const counts = [2, 1, 5];
  const length = 8;
  const classIndex = (ch: string) => classes.findIndex((chars) => chars.includes(ch));

  test("has exactly the counts, only the classes' characters", () => {
    const random = seededRandom(11);
    for (let i = 0; i < 500; i++) {
      const password = fillClassCounts(classes, counts, random);
      expect(password).toHaveLength(length);
      const found = [0, 0, 0];
      for (const ch of password) found[classIndex(ch)]!++;
      expect(found).toEqual(counts);
    }
  });

  test("every position takes each class in proportion to its count (chi-square per position)", () => {
    const random = seededRandom(12);
    const n = 30_000;
    const observed = Array.from({ length }, () => [0, 0, 0]);
    for (let i = 0; i < n; i++) {
      const password = fillClassCounts(classes, counts, random);
      for (let p = 0; p < length; p++) observed[p]![classIndex(password[p]!)]!++;
    }
    const failing = observed
      .map((row) =>
        chiSquareTest(
          row,
          counts.map((c) => c / length),
        ),
      )
      .filter((r) => !r.ok);
    expect(failing).toEqual([]);
  });

  test("the position check rejects labels placed in order and a biased shuffle", () => {
    const random = seededRandom(13);
    const n = 30_000;
    const inOrder = () => classes.map((chars, cls) => Array.from({ length: counts[cls]! }, () => chars[0]!).join("")).join("");
    // The classic wrong shuffle: swap each position with any position (n^n outcomes, not n!).
    const naive = () => {
      const labels = counts.flatMap((c, cls) => Array<number>(c).fill(cls));
      for (let i = 0; i < labels.length; i++) {
        const j = random.uniformIndex(labels.length);
        [labels[i], labels[j]] = [labels[j]!, labels[i]!];
      }
      return labels.map((cls) => classes[cls]![0]!).join("");
    };
    for (const generator of [inOrder, naive]) {
      const observed = Array.from({ length }, () => [0, 0, 0]);
      for (let i = 0; i < n; i++) {
        const password = generator();
        for (let p = 0; p < length; p++) observed[p]![classIndex(password[p]!)]!++;
      }
      const failing = observed
        .map((row) =>
          chiSquareTest(
            row,
            counts.map((c) => c / length),
          ),
        )
        .filter((r) => !r.ok);
      expect(failing.length).toBeGreaterThan(0);
    }
  });

  test("characters are uniform within each class (chi-square)", () => {
    const random = seededRandom(14);
    const seen = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) for (const ch of fillClassCounts(classes, counts, random)) seen.set(ch, (seen.get(ch) ?? 0) + 1);
    for (const chars of classes) {
      const result = chiSquareTest(
        [...chars].map((ch) => seen.get(ch) ?? 0),
        [...chars].map(() => 1 / chars.length),
      );
      expect({ chars, ok: result.ok }).toEqual({ chars, ok: true });
    }
  });
});

describe("whole strings: every string that meets the minimums equally likely", () => {
  // Classes "ab", "c", "de" with at least 1, 2 and 1 characters in 5: few enough strings to
  // count each. Both ways of drawing (exact counts, and redrawing whole strings) must pass.
  const classes = ["ab", "c", "de"];
  const sizes = [2, 1, 2];
  const minimums = [1, 2, 1];
  const length = 5;
  const valid = enumerate(sizes, minimums, length);
  const alphabet = createAlphabet(classes);
  const table = classCountTable(sizes, minimums, length);

  const check = (draw: () => string) => {
    const n = valid * 60;
    const observed = tally(n, draw, (s) => s);
    const meets = (s: string) => [...s].filter((ch) => "c".includes(ch)).length >= 2 && /[ab]/.test(s) && /[de]/.test(s);
    const invalid = [...observed.keys()].filter((s) => !meets(s));
    const cells = [...observed.values()];
    while (cells.length < valid) cells.push(0);
    return {
      invalid,
      distinct: observed.size,
      ...chiSquareTest(
        cells,
        cells.map(() => 1 / valid),
      ),
    };
  };

  test(`the exact sampler (${valid} strings)`, () => {
    expect(table.total).toBe(BigInt(valid));
    const random = seededRandom(21);
    const result = check(() => fillClassCounts(classes, sampleClassCounts(table, random), random));
    expect(result.invalid).toEqual([]);
    expect(result.distinct).toBe(valid);
    expect(result.ok).toBe(true);
  });

  test("redrawing whole strings until they meet the minimums", () => {
    const random = seededRandom(22);
    const result = check(() => generateWithMinimums(alphabet, length, minimums, random));
    expect(result.invalid).toEqual([]);
    expect(result.ok).toBe(true);
  });

  test("the check rejects seeding the minimums, filling the rest and shuffling", () => {
    const random = seededRandom(23);
    const seedAndShuffle = () => {
      const chars = [
        ...classes.flatMap((members, cls) => Array.from({ length: minimums[cls]! }, () => members[random.uniformIndex(members.length)]!)),
      ];
      while (chars.length < length) chars.push(alphabet.chars[random.uniformIndex(alphabet.chars.length)]!);
      for (let i = chars.length - 1; i > 0; i--) {
        const j = random.uniformIndex(i + 1);
        [chars[i], chars[j]] = [chars[j]!, chars[i]!];
      }
      return chars.join("");
    };
    const result = check(seedAndShuffle);
    expect(result.invalid).toEqual([]);
    expect(result.ok).toBe(false);
  });

  test("generateWithMinimums refuses minimums it could never meet", () => {
    expect(() => generateWithMinimums(alphabet, 3, minimums, seededRandom(1))).toThrow(RangeError);
    expect(() => generateWithMinimums(alphabet, 5, [1, 1], seededRandom(1))).toThrow(RangeError);
  });
});
