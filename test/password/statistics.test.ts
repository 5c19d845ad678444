// Statistical checks of the generator's output distribution, each run on the real generator
// (must pass) and on plausible wrong generators (must fail), so the checks have power.
//
// Setup: the default request (length L = 16, classes of 26, 26, 10, 28 characters) and
// n = 20,000 passwords per generator.
// False-failure budget (probability that the correct generator fails), about 3e-7 in all:
// - character frequencies within each class: Pearson chi-square at the 1e-8 upper tail
//   (critical values from scipy.stats.chi2.isf(1e-8, df)), 4 tests -> 4e-8;
// - class frequencies at each position: chi-square, df 3, 1e-8 tail, 16 positions -> 1.6e-7;
// - mean count per class: Bernstein's inequality with the exact variance, 2.5e-8 per class
//   -> 1e-7. Bernstein needs no normal approximation: the bound holds for any n.
// The chi-square tests rely on the chi-square approximation, which is good here (every expected
// cell count is above 2,500).

import { describe, expect, test } from "bun:test";
import { CHARSETS, CLASS_NAMES } from "../../src/password/charset.ts";
import { createAlphabet, generatePassword } from "../../src/password/generator.ts";
import { createRandom } from "../../src/password/random.ts";

const L = 16;
const N = 20_000;
const CLASSES = CLASS_NAMES.map((name) => CHARSETS[name]);
const SIZES = CLASSES.map((chars) => chars.length); // 26, 26, 10, 28
const K = SIZES.length;
const TOTAL = SIZES.reduce((a, b) => a + b, 0); // 90
const ALL = (1 << K) - 1;

const alphabet = createAlphabet(CLASSES);
const random = createRandom();
const classOf = new Map([...alphabet.chars].map((ch, i) => [ch, alphabet.classOf[i]!]));
const pick = (chars: string) => chars[random.uniformIndex(chars.length)]!;
const covers = (password: string) => [...password].reduce((seen, ch) => seen | (1 << classOf.get(ch)!), 0) === ALL;

type Generator = () => string;

const real: Generator = () => generatePassword(alphabet, L, random);

/** Wrong: one character per class, the rest from the whole alphabet, then a Fisher–Yates shuffle. */
const seedAndShuffle: Generator = () => {
  const chars = [...CLASSES.map(pick), ...Array.from({ length: L - K }, () => pick(alphabet.chars))];
  for (let i = chars.length - 1; i > 0; i--) {
    const j = random.uniformIndex(i + 1);
    [chars[i], chars[j]] = [chars[j]!, chars[i]!];
  }
  return chars.join("");
};

/** Wrong: one character per class at the first positions, not shuffled. */
const seedNoShuffle: Generator = () => [...CLASSES.map(pick), ...Array.from({ length: L - K }, () => pick(alphabet.chars))].join("");

/** Wrong: each position picks a class uniformly, then a character of it; redraws until all classes appear. */
const classFirst: Generator = () => {
  for (;;) {
    const password = Array.from({ length: L }, () => pick(CLASSES[random.uniformIndex(K)]!)).join("");
    if (covers(password)) return password;
  }
};

/** Wrong: whole-password redraw, but characters from a random byte modulo 90 (modulo bias). */
const byteModulo: Generator = () => {
  for (;;) {
    const bytes = crypto.getRandomValues(new Uint8Array(L));
    const password = Array.from(bytes, (b) => alphabet.chars[b % TOTAL]!).join("");
    if (covers(password)) return password;
  }
};

const samples = new Map<Generator, string[]>();
function sample(generator: Generator): string[] {
  let drawn = samples.get(generator);
  if (!drawn) {
    drawn = Array.from({ length: N }, generator);
    samples.set(generator, drawn);
  }
  return drawn;
}

// ---- exact expectations -------------------------------------------------------------------

/** Strings of `length` characters over all classes that, together with `covered`, cover every class (DP). */
function coverCount(length: number, covered: number): bigint {
  let ways: bigint[] = Array(ALL + 1).fill(0n);
  ways[covered] = 1n;
  for (let step = 0; step < length; step++) {
    const next: bigint[] = Array(ALL + 1).fill(0n);
    ways.forEach((count, set) => {
      SIZES.forEach((size, cls) => {
        next[set | (1 << cls)]! += count * BigInt(size);
      });
    });
    ways = next;
  }
  return ways[ALL]!;
}

/** The same count by inclusion–exclusion over the classes still missing. */
function coverCountIE(length: number, covered: number): bigint {
  let total = 0n;
  for (let kept = 0; kept <= ALL; kept++) {
    if ((kept & covered) !== covered) continue; // covered classes are always allowed
    const size = SIZES.reduce((sum, s, cls) => (kept & (1 << cls) ? sum + s : sum), 0);
    const missing = K - SIZES.filter((_, cls) => kept & (1 << cls)).length;
    total += (missing % 2 === 0 ? 1n : -1n) * BigInt(size) ** BigInt(length);
  }
  return total;
}

const ratio = (a: bigint, b: bigint) => Number((a * 10n ** 18n) / b) / 1e18;
const VALID = coverCount(L, 0);

/** E[count_i] = L * s_i * N_i / N, N_i counting the other L-1 positions with class i already covered. */
const EXPECTED_MEAN = SIZES.map((s, i) => L * ratio(BigInt(s) * coverCount(L - 1, 1 << i), VALID));
/** E[count_i^2] = L * P(a position is i) + L(L-1) * P(two given positions are both i). */
const EXPECTED_VARIANCE = SIZES.map((s, i) => {
  const second = L * (L - 1) * ratio(BigInt(s * s) * coverCount(L - 2, 1 << i), VALID);
  return EXPECTED_MEAN[i]! + second - EXPECTED_MEAN[i]! ** 2;
});
/** Seeding one per class then shuffling gives 1 + (L - k) * s_i / S instead. */
const SEEDED_MEAN = SIZES.map((s) => 1 + ((L - K) * s) / TOTAL);
const POSITION_P = EXPECTED_MEAN.map((mean) => mean / L);

// ---- the checks ---------------------------------------------------------------------------

/** chi-square critical values at the 1e-8 upper tail, by degrees of freedom (scipy). */
const CHI2_CRITICAL: Record<number, number> = { 3: 40.13, 9: 55.449, 25: 86.649, 27: 90.16 };

const chiSquare = (observed: number[], expected: number[]) =>
  observed.reduce((sum, o, i) => sum + (o - expected[i]!) ** 2 / expected[i]!, 0);

/** Within each class, every character equally often. */
function characterCheck(passwords: string[]) {
  const counts = new Map<string, number>();
  for (const password of passwords) for (const ch of password) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  return CLASSES.map((chars, cls) => {
    const observed = [...chars].map((ch) => counts.get(ch) ?? 0);
    const total = observed.reduce((a, b) => a + b, 0);
    const statistic = chiSquare(
      observed,
      observed.map(() => total / chars.length),
    );
    const critical = CHI2_CRITICAL[chars.length - 1]!;
    return { class: CLASS_NAMES[cls], statistic, critical, ok: statistic < critical };
  });
}

/** At each position, the classes with their exact probabilities. */
function positionCheck(passwords: string[]) {
  return Array.from({ length: L }, (_, position) => {
    const observed = Array<number>(K).fill(0);
    for (const password of passwords) observed[classOf.get(password[position]!)!]!++;
    const statistic = chiSquare(
      observed,
      POSITION_P.map((p) => p * passwords.length),
    );
    return { position, statistic, ok: statistic < CHI2_CRITICAL[3]! };
  });
}

/**
 * The mean count of each class against its exact expectation. Bernstein: for |X - mu| <= b,
 * P(|mean - mu| >= t) <= 2 exp(-n t^2 / (2 sigma^2 + 2 b t / 3)); t solves that = delta.
 */
function meanCheck(passwords: string[], delta = 2.5e-8) {
  const n = passwords.length;
  const c = Math.log(2 / delta);
  return EXPECTED_MEAN.map((mu, cls) => {
    let sum = 0;
    for (const password of passwords) for (const ch of password) if (classOf.get(ch) === cls) sum++;
    const mean = sum / n;
    const b = Math.max(mu, L - mu);
    const linear = (2 * b * c) / 3;
    const bound = (linear + Math.sqrt(linear ** 2 + 8 * n * c * EXPECTED_VARIANCE[cls]!)) / (2 * n);
    return { class: CLASS_NAMES[cls], mean, expected: mu, bound, ok: Math.abs(mean - mu) < bound };
  });
}

const allOk = (results: { ok: boolean }[]) => results.every((r) => r.ok);

// ---- tests --------------------------------------------------------------------------------

describe("exact expectations", () => {
  test("the DP and inclusion–exclusion agree on every count used", () => {
    for (const length of [L - 2, L - 1, L]) {
      for (let covered = 0; covered <= ALL; covered++) expect(coverCount(length, covered)).toBe(coverCountIE(length, covered));
    }
  });

  test("mean counts under whole-password redraw differ from seed-and-shuffle", () => {
    // Redraw: 4.5251, 4.5251, 2.0888, 4.8609. Seed and shuffle: 4.4667, 4.4667, 2.3333, 4.7333.
    expect(EXPECTED_MEAN.map((m) => m.toFixed(4))).toEqual(["4.5251", "4.5251", "2.0888", "4.8609"]);
    expect(SEEDED_MEAN.map((m) => m.toFixed(4))).toEqual(["4.4667", "4.4667", "2.3333", "4.7333"]);
    expect(EXPECTED_MEAN.reduce((a, b) => a + b, 0)).toBeCloseTo(L, 12);
    // Standard deviations of the counts: 1.7492, 1.7492, 1.0880, 1.7906.
    expect(EXPECTED_VARIANCE.map((v) => Math.sqrt(v).toFixed(4))).toEqual(["1.7492", "1.7492", "1.0880", "1.7906"]);
  });
});

describe("the real generator", () => {
  test("draws characters uniformly within each class (chi-square)", () => {
    const results = characterCheck(sample(real));
    expect(results.filter((r) => !r.ok)).toEqual([]);
  });

  test("has the exact class distribution at every position (chi-square)", () => {
    expect(positionCheck(sample(real)).filter((r) => !r.ok)).toEqual([]);
  });

  test("has the exact mean count per class (Bernstein)", () => {
    const results = meanCheck(sample(real));
    expect(results.filter((r) => !r.ok)).toEqual([]);
    // With n = 20,000 the bounds are 0.078 (letters), 0.051 (digits), 0.080 (symbols). The
    // digits' gap between redraw and seed-and-shuffle, 0.245, exceeds twice the bound, so a
    // seed-and-shuffle sample (whose own mean is as concentrated) is rejected just as surely.
    const digits = results.find((r) => r.class === "numbers")!;
    expect(digits.bound).toBeLessThan(0.06);
    expect(Math.abs(SEEDED_MEAN[2]! - EXPECTED_MEAN[2]!)).toBeGreaterThan(2 * digits.bound);
  });
});

describe("the checks reject wrong generators", () => {
  test("seed-and-shuffle fails the mean check (digits: 2.333 instead of 2.089)", () => {
    const results = meanCheck(sample(seedAndShuffle));
    expect(allOk(results)).toBe(false);
    expect(results.find((r) => r.class === "numbers")!.ok).toBe(false);
  });

  test("pick-a-class-first fails the mean check (each class 4 instead of its share)", () => {
    const results = meanCheck(sample(classFirst));
    expect(results.filter((r) => !r.ok).map((r) => r.class)).toEqual(["uppercase", "lowercase", "numbers", "symbols"]);
  });

  test("modulo bias fails the character check", () => {
    // 256 = 2 * 90 + 76: the last 14 symbols come up 2/3 as often as the others.
    const results = characterCheck(sample(byteModulo));
    expect(results.find((r) => r.class === "symbols")!.ok).toBe(false);
  });

  test("seeding without a shuffle fails the position check", () => {
    const failing = positionCheck(sample(seedNoShuffle))
      .filter((r) => !r.ok)
      .map((r) => r.position);
    expect(failing).toEqual(expect.arrayContaining([0, 1, 2, 3]));
  });
});
