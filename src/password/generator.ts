// Draws a password uniformly from all strings over the selected classes that meet the class
// rule (every class at least once, or at least its minimum): draw the whole string uniformly,
// redraw until it meets the rule. Exact whatever the rule; the expected number of draws is
// 1 / acceptance, so the service takes this way only while acceptance is high and otherwise
// samples the class counts exactly (class-counts.ts). (Seeding one character per class and
// shuffling is not uniform over that set.)

import type { Random } from "./random.ts";

export interface Alphabet {
  /** The class strings, in order. */
  readonly classes: readonly string[];
  /** Every usable character, class after class. */
  readonly chars: string;
  /** The class index (0-based, in the order given) of each character of `chars`. */
  readonly classOf: Uint8Array;
  readonly classSizes: readonly number[];
}

/** An alphabet from non-empty class strings of ASCII characters. */
export function createAlphabet(classes: readonly string[]): Alphabet {
  const chars = classes.join("");
  const classOf = new Uint8Array(chars.length);
  let at = 0;
  classes.forEach((members, index) => {
    classOf.fill(index, at, at + members.length);
    at += members.length;
  });
  return { classes: [...classes], chars, classOf, classSizes: classes.map((members) => members.length) };
}

/** A uniformly random string of `length` characters that contains every class of the alphabet. */
export function generatePassword(alphabet: Alphabet, length: number, random: Random): string {
  const { chars, classOf, classSizes } = alphabet;
  // Fewer characters than classes could never cover them all: the loop below would not end.
  if (length < classSizes.length) throw new RangeError("length is smaller than the number of classes");
  const size = chars.length;
  const allClasses = (1 << classSizes.length) - 1;
  for (;;) {
    let password = "";
    let seen = 0;
    for (let i = 0; i < length; i++) {
      const index = random.uniformIndex(size);
      password += chars[index];
      seen |= 1 << classOf[index]!;
    }
    if (seen === allClasses) return password;
  }
}

/**
 * A uniformly random string of `length` characters with at least `minimums[j]` characters of
 * class j (one minimum per class of the alphabet).
 */
export function generateWithMinimums(alphabet: Alphabet, length: number, minimums: readonly number[], random: Random): string {
  const { chars, classOf } = alphabet;
  let needed = 0;
  for (const minimum of minimums) needed += minimum;
  // Minimums that add up past the length could never be met: the loop below would not end.
  if (minimums.length !== alphabet.classSizes.length || needed > length) throw new RangeError("the minimums cannot be met");
  const size = chars.length;
  const counts = new Uint8Array(minimums.length);
  for (;;) {
    counts.fill(0);
    let password = "";
    for (let i = 0; i < length; i++) {
      const index = random.uniformIndex(size);
      password += chars[index];
      counts[classOf[index]!]!++;
    }
    let met = true;
    for (let j = 0; j < counts.length; j++) if (counts[j]! < minimums[j]!) met = false;
    if (met) return password;
  }
}

/**
 * The probability that a uniformly random string of `length` characters over `alphabetSize`
 * characters is one of `valid` strings: a redraw loop's chance of success per attempt.
 */
export function acceptance(valid: bigint, alphabetSize: number, length: number): number {
  return Number((valid << 32n) / BigInt(alphabetSize) ** BigInt(length)) / 2 ** 32;
}

/**
 * The number of strings of `length` characters that contain at least one character of every
 * class, by inclusion–exclusion over the classes left out:
 * sum over subsets T of (-1)^(k-|T|) * (sum of the sizes in T)^length.
 */
export function countPasswords(classSizes: readonly number[], length: number): bigint {
  const k = classSizes.length;
  const exponent = BigInt(length);
  let total = 0n;
  for (let subset = 0; subset < 1 << k; subset++) {
    let size = 0;
    let members = 0;
    for (let i = 0; i < k; i++) {
      if (subset & (1 << i)) {
        size += classSizes[i]!;
        members++;
      }
    }
    const term = BigInt(size) ** exponent;
    total += (k - members) % 2 === 0 ? term : -term;
  }
  return total;
}

/** log2 of a positive BigInt, accurate to double precision however large it is. */
export function log2BigInt(value: bigint): number {
  const bits = value.toString(2).length;
  if (bits <= 53) return Math.log2(Number(value));
  const shift = bits - 53;
  return Math.log2(Number(value >> BigInt(shift))) + shift;
}

/** log2 of a positive count, rounded to 2 decimals: the answer's `entropy_bits`. */
export function roundedLog2(count: bigint): number {
  return Math.round(log2BigInt(count) * 100) / 100;
}

/** log2 of the number of possible passwords (every class at least once), rounded to 2 decimals. */
export function entropyBits(classSizes: readonly number[], length: number): number {
  return roundedLog2(countPasswords(classSizes, length));
}
