// Shared by the password tests: Pearson's chi-square statistic, a critical value for any degrees
// of freedom, and a seeded random source for tests whose figures must not vary from run to run.
import { createRandom, type Random } from "../../src/password/random.ts";

/** The upper 1e-8 quantile of the standard normal distribution. */
const Z_1E8 = 5.612;

/** chi2.isf(1e-8, df) from scipy for df 1..20, where the approximation below is least accurate. */
const EXACT: readonly number[] = [
  0, 32.841, 36.841, 40.13, 43.072, 45.795, 48.363, 50.813, 53.169, 55.449, 57.664, 59.823, 61.934, 64.003, 66.033, 68.029, 69.995, 71.932,
  73.844, 75.732, 77.598,
];

/**
 * The chi-square value exceeded with probability about 1e-8 at `df` degrees of freedom: scipy's
 * figure up to df 20, beyond that the Wilson–Hilferty cube approximation, which errs slightly
 * high (lenient) in this far tail: 87.83 for df 25 where scipy says 86.65, 201.15 for df 100
 * (200.63), 8495.31 for df 7775 (8495.26).
 */
export function chiSquareCritical(df: number): number {
  if (df < EXACT.length) return EXACT[df]!;
  const a = 2 / (9 * df);
  return df * (1 - a + Z_1E8 * Math.sqrt(a)) ** 3;
}

export function chiSquare(observed: readonly number[], expected: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < observed.length; i++) sum += (observed[i]! - expected[i]!) ** 2 / expected[i]!;
  return sum;
}

/** The statistic, its critical value and whether it passes, for observed counts against probabilities. */
export function chiSquareTest(observed: readonly number[], probabilities: readonly number[]) {
  const total = observed.reduce((a, b) => a + b, 0);
  const expected = probabilities.map((p) => p * total);
  const statistic = chiSquare(observed, expected);
  const critical = chiSquareCritical(observed.length - 1);
  return { statistic, critical, ok: statistic < critical, minExpected: Math.min(...expected) };
}

/**
 * A Random from a xorshift32 stream: not secure, only repeatable. Its uint32 values go through
 * the same rejection (createRandom) as the crypto source's.
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0 || 1;
  return createRandom((target) => {
    for (let i = 0; i < target.length; i++) {
      state ^= state << 13;
      state >>>= 0;
      state ^= state >>> 17;
      state ^= state << 5;
      state >>>= 0;
      target[i] = state;
    }
  });
}
