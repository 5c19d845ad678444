// Exact counting and uniform sampling of passwords with per-class minimums.
//
// A password of length n over classes of sizes s_0..s_{k-1} has c_j characters of class j. The
// strings with a given count vector c number multinomial(n; c) * prod s_j^c_j, so the strings
// that meet every minimum (c_j >= m_j) number the sum of that over the allowed vectors. To draw
// one uniformly: draw the vector with probability proportional to its count, then a uniformly
// random arrangement of the class labels, then each character uniformly within its class. Every
// string then has probability [multinomial * prod s^c / N] * [1 / multinomial] * prod s^-c = 1/N.
//
// The vector is drawn class by class. With G_j(x) the number of strings of x characters over the
// classes j..k-1 that meet their minimums,
//   G_{k-1}(x) = s_{k-1}^x when x >= m_{k-1}, else 0;
//   G_j(x) = sum over c >= m_j of C(x, c) * s_j^c * G_{j+1}(x - c),
// class j gets c characters of the r still unassigned with probability C(r, c) s_j^c G_{j+1}(r-c)
// / G_j(r): a uniform BigInt below G_j(r) (exact, random.ts) walked down those weights (one draw
// serves all the steps, see sampleClassCounts). Building
// the tables costs O(k n^2) BigInt products (2.2 ms for n = 128 and four classes, 0.08 ms for
// n = 16), so they are cached by shape; a draw costs O(k n) products and one BigInt draw.

import { acceptance, roundedLog2 } from "./generator.ts";
import { MAX_LENGTH } from "./params.ts";
import { uniformBigInt, type Random } from "./random.ts";

/** Pascal's triangle up to MAX_LENGTH, built on first use. */
let binomials: bigint[][] | undefined;

function binomialRows(): bigint[][] {
  if (!binomials) {
    binomials = [[1n]];
    for (let n = 1; n <= MAX_LENGTH; n++) {
      const above = binomials[n - 1]!;
      const row = [1n];
      for (let k = 1; k < n; k++) row.push(above[k - 1]! + above[k]!);
      row.push(1n);
      binomials.push(row);
    }
  }
  return binomials;
}

/** s^0..s^MAX_LENGTH by class size, built on first use. */
const powerTables = new Map<number, bigint[]>();

function powersOf(size: number): bigint[] {
  let powers = powerTables.get(size);
  if (!powers) {
    const base = BigInt(size);
    powers = [1n];
    for (let e = 1; e <= MAX_LENGTH; e++) powers.push(powers[e - 1]! * base);
    powerTables.set(size, powers);
  }
  return powers;
}

export interface ClassCountTable {
  readonly sizes: readonly number[];
  readonly minimums: readonly number[];
  readonly length: number;
  /** The number of strings of `length` characters that meet every minimum. */
  readonly total: bigint;
  /** log2(total) rounded to 2 decimals (0 when total is 0). */
  readonly entropyBits: number;
  /** The share of all strings of `length` over the classes that meet every minimum. */
  readonly acceptance: number;
  /** suffix[j][x] = G_j(x) for j >= 1 and x = 0..length (suffix[0] is unused). */
  readonly suffix: readonly (readonly bigint[])[];
}

/**
 * The counts for classes of `sizes` (each at least 1) with `minimums` (each at least 0) at
 * `length` (1..MAX_LENGTH). A minimum sum above `length` gives a total of 0.
 */
export function classCountTable(sizes: readonly number[], minimums: readonly number[], length: number): ClassCountTable {
  const k = sizes.length;
  if (k === 0 || minimums.length !== k) throw new RangeError("one minimum per class, at least one class");
  if (!Number.isInteger(length) || length < 1 || length > MAX_LENGTH) throw new RangeError("length out of range");
  const binomial = binomialRows();
  const suffix: bigint[][] = Array.from({ length: k }, () => []);
  const last = k - 1;
  const lastPowers = powersOf(sizes[last]!);
  for (let x = 0; x <= length; x++) suffix[last]![x] = x >= minimums[last]! ? lastPowers[x]! : 0n;
  // The minimums of the classes after j: fewer characters left than that count nothing.
  let later = minimums[last]!;
  for (let j = last - 1; j >= 1; j--) {
    suffix[j] = levelCounts(powersOf(sizes[j]!), minimums[j]!, later, suffix[j + 1]!, length, binomial);
    later += minimums[j]!;
  }
  const total = k === 1 ? suffix[0]![length]! : levelTotal(powersOf(sizes[0]!), minimums[0]!, later, suffix[1]!, length, binomial);
  const alphabetSize = sizes.reduce((sum, size) => sum + size, 0);
  return {
    sizes: [...sizes],
    minimums: [...minimums],
    length,
    total,
    entropyBits: total === 0n ? 0 : roundedLog2(total),
    acceptance: acceptance(total, alphabetSize, length),
    suffix,
  };
}

/** G_j(x) for x = 0..length from G_{j+1}. */
function levelCounts(powers: bigint[], minimum: number, later: number, next: bigint[], length: number, binomial: bigint[][]): bigint[] {
  const level: bigint[] = [];
  for (let x = 0; x <= length; x++) level.push(levelTotal(powers, minimum, later, next, x, binomial));
  return level;
}

/** G_j(x): the sum over c of C(x, c) s_j^c G_{j+1}(x - c). */
function levelTotal(powers: bigint[], minimum: number, later: number, next: bigint[], x: number, binomial: bigint[][]): bigint {
  const row = binomial[x]!;
  let sum = 0n;
  for (let c = minimum; c <= x - later; c++) sum += row[c]! * powers[c]! * next[x - c]!;
  return sum;
}

/** A class-count vector with probability proportional to the number of strings that have it. */
export function sampleClassCounts(table: ClassCountTable, random: Random): number[] {
  const { sizes, minimums, suffix, length } = table;
  if (table.total === 0n) throw new RangeError("no string meets the minimums");
  const k = sizes.length;
  const binomial = binomialRows();
  const counts: number[] = [];
  let remaining = length;
  // One uniform draw below the total serves every step: once c is chosen, u is uniform below
  // its weight C(r, c) s^c G_{j+1}(r - c), an exact multiple of G_{j+1}(r - c), so u modulo
  // that is uniform below it: the next step's draw, with no bias.
  let u = uniformBigInt(random, table.total);
  for (let j = 0; j < k - 1; j++) {
    const next = suffix[j + 1]!;
    const powers = powersOf(sizes[j]!);
    const row = binomial[remaining]!;
    let c = minimums[j]!;
    for (; ; c++) {
      if (c > remaining) throw new Error("class-count weights do not add up to their total");
      const rest = next[remaining - c]!;
      const weight = row[c]! * powers[c]! * rest;
      if (u < weight) {
        u %= rest;
        break;
      }
      u -= weight;
    }
    counts.push(c);
    remaining -= c;
  }
  counts.push(remaining);
  return counts;
}

/**
 * A password with exactly `counts[j]` characters of class j, uniformly among all such strings:
 * the class labels in a uniformly random order (Fisher–Yates), then each character uniformly
 * from its class. `classes` are the class strings in the order of `counts`.
 */
export function fillClassCounts(classes: readonly string[], counts: readonly number[], random: Random): string {
  let length = 0;
  for (const count of counts) length += count;
  const labels = new Uint8Array(length);
  let at = 0;
  counts.forEach((count, cls) => {
    labels.fill(cls, at, at + count);
    at += count;
  });
  for (let i = length - 1; i > 0; i--) {
    const j = random.uniformIndex(i + 1);
    const swap = labels[i]!;
    labels[i] = labels[j]!;
    labels[j] = swap;
  }
  let password = "";
  for (let i = 0; i < length; i++) {
    const chars = classes[labels[i]!]!;
    password += chars[random.uniformIndex(chars.length)];
  }
  return password;
}

// Tables by shape (class sizes, minimums, length). Bounded: a table for n = 128 holds about 400
// BigInts (about 40 KB), so 128 of them stay under about 5 MB; the oldest goes first.
const CACHE_LIMIT = 128;
const tables = new Map<string, ClassCountTable>();

/** classCountTable, cached by shape. */
export function cachedClassCountTable(sizes: readonly number[], minimums: readonly number[], length: number): ClassCountTable {
  const key = `${sizes.join(",")}/${minimums.join(",")}/${length}`;
  let table = tables.get(key);
  if (!table) {
    table = classCountTable(sizes, minimums, length);
    if (tables.size >= CACHE_LIMIT) tables.delete(tables.keys().next().value!);
    tables.set(key, table);
  }
  return table;
}
