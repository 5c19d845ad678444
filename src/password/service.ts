// From request fields to the response: validate, pick the alphabet, generate, count entropy.

import { CHARSETS, CLASS_NAMES, SIMILAR, withoutCharacters, type ClassName } from "./charset.ts";
import { cachedClassCountTable, fillClassCounts, sampleClassCounts, type ClassCountTable } from "./class-counts.ts";
import {
  acceptance,
  countPasswords,
  createAlphabet,
  entropyBits,
  generatePassword,
  generateWithMinimums,
  type Alphabet,
} from "./generator.ts";
import {
  ERRORS,
  MAX_LENGTH,
  parseRequest,
  type Fields,
  type GenerationRequest,
  type PassphraseOptions,
  type PasswordOptions,
} from "./params.ts";
import { generatePassphrase, passphraseEntropyBits } from "./passphrase.ts";
import type { Random } from "./random.ts";
import { passwordErrorBody } from "../http/errors.ts";

export interface PasswordParameters {
  requested_length: number;
  uppercase: boolean;
  lowercase: boolean;
  numbers: boolean;
  symbols: boolean;
  exclude_similar?: boolean;
  exclude?: string;
  min_uppercase?: number;
  min_lowercase?: number;
  min_numbers?: number;
  min_symbols?: number;
  symbol_set?: string;
  count?: number;
  type?: "password";
}

export interface PassphraseParameters {
  type: "passphrase";
  words: number;
  separator: string;
  capitalize: boolean;
  include_number: boolean;
  count?: number;
}

/** One password (no `count`, or `count=1`). */
export interface PasswordSuccess {
  success: true;
  password: string;
  length: number;
  parameters: PasswordParameters;
  entropy_bits: number;
}

/** `count` above 1: `passwords` in place of `password`, all of `length` characters. */
export interface PasswordListSuccess {
  success: true;
  passwords: string[];
  length: number;
  parameters: PasswordParameters;
  entropy_bits: number;
}

export interface PassphraseSuccess {
  success: true;
  password: string;
  length: number;
  parameters: PassphraseParameters;
  entropy_bits: number;
}

/** Passphrases with `count` above 1 differ in length: `lengths`, one per phrase, in place of `length`. */
export interface PassphraseListSuccess {
  success: true;
  passwords: string[];
  lengths: number[];
  parameters: PassphraseParameters;
  entropy_bits: number;
}

export type GenerateSuccess = PasswordSuccess | PasswordListSuccess | PassphraseSuccess | PassphraseListSuccess;

export interface PasswordFailure {
  success: false;
  error: string;
}

export type PasswordResult = { status: 200; body: GenerateSuccess } | { status: 400; body: PasswordFailure };

/**
 * Below this share of valid strings, redrawing whole passwords would cost more than sampling the
 * class counts exactly (class-counts.ts): one exact draw cost about as much as 10 to 14 redraw
 * attempts (1.8 us against 0.18 us an attempt at length 16, 21 us against 1.5 us at 128), so the
 * break-even share is near 0.1; at 1/8 a redraw takes 8 attempts or fewer on average. The default
 * request's share is 0.84: it redraws, 8x cheaper than the exact way (notes/bench-profile.md, 9).
 */
export const REDRAW_MIN_ACCEPTANCE = 0.125;

/** An alphabet with its entropy and redraw acceptance by length (every class at least once), computed on first use. */
interface PreparedAlphabet {
  alphabet: Alphabet;
  /** 0 until computed. */
  entropyByLength: Float64Array;
  /** -1 until computed. */
  acceptanceByLength: Float64Array;
}

function prepare(classes: string[]): PreparedAlphabet {
  return {
    alphabet: createAlphabet(classes),
    entropyByLength: new Float64Array(MAX_LENGTH + 1),
    acceptanceByLength: new Float64Array(MAX_LENGTH + 1).fill(-1),
  };
}

function entropyOf(prepared: PreparedAlphabet, length: number): number {
  const table = prepared.entropyByLength;
  if (table[length] === 0) table[length] = entropyBits(prepared.alphabet.classSizes, length);
  return table[length]!;
}

function acceptanceOf(prepared: PreparedAlphabet, length: number): number {
  const table = prepared.acceptanceByLength;
  if (table[length] === -1) {
    const { classSizes, chars } = prepared.alphabet;
    table[length] = acceptance(countPasswords(classSizes, length), chars.length, length);
  }
  return table[length]!;
}

// Requests without `exclude` or `symbol_set` share one of 2 * 15 alphabets (class subset, with
// or without look-alikes), built once so the common case does no set or string work.
const sharedAlphabets: (PreparedAlphabet | undefined)[] = [];

function sharedAlphabet(classes: Record<ClassName, boolean>, excludeSimilar: boolean): PreparedAlphabet {
  let key = excludeSimilar ? 1 : 0;
  for (const name of CLASS_NAMES) key = key * 2 + (classes[name] ? 1 : 0);
  let prepared = sharedAlphabets[key];
  if (!prepared) {
    const similar = new Set(excludeSimilar ? SIMILAR : "");
    prepared = prepare(CLASS_NAMES.filter((name) => classes[name]).map((name) => withoutCharacters(CHARSETS[name], similar)));
    sharedAlphabets[key] = prepared;
  }
  return prepared;
}

/** The alphabet for the options, or the first selected class that the exclusions empty. */
function alphabetFor(options: PasswordOptions): PreparedAlphabet | ClassName {
  const excludeSimilar = options.excludeSimilar === true;
  if (!options.exclude && options.symbolSet === undefined) return sharedAlphabet(options.classes, excludeSimilar);
  const excluded = new Set(options.exclude);
  if (excludeSimilar) for (const ch of SIMILAR) excluded.add(ch);
  const classes: string[] = [];
  for (const name of CLASS_NAMES) {
    if (!options.classes[name]) continue;
    const members = name === "symbols" && options.symbolSet !== undefined ? options.symbolSet : CHARSETS[name];
    const kept = withoutCharacters(members, excluded);
    if (kept === "") return name;
    classes.push(kept);
  }
  return prepare(classes);
}

/** How to draw one password: by redrawing (default rule or minimums), or from exact class counts. */
type Method = { kind: "cover" } | { kind: "redraw"; minimums: number[] } | { kind: "exact"; table: ClassCountTable };

/** The default request's method, shared: its path allocates nothing it did not before. */
const COVER: Method = { kind: "cover" };

function generateOne(alphabet: Alphabet, length: number, method: Method, random: Random): string {
  switch (method.kind) {
    case "cover":
      return generatePassword(alphabet, length, random);
    case "redraw":
      return generateWithMinimums(alphabet, length, method.minimums, random);
    case "exact":
      return fillClassCounts(alphabet.classes, sampleClassCounts(method.table, random), random);
  }
}

const failure = (error: string): PasswordResult => ({ status: 400, body: passwordErrorBody(error) });

function passwordResult(request: Extract<GenerationRequest, { type: "password" }>, random: Random): PasswordResult {
  const { options, count } = request;
  const prepared = alphabetFor(options);
  if (typeof prepared === "string") return failure(ERRORS.emptied(prepared));

  const { length, classes, minimums } = options;
  const { alphabet } = prepared;
  let method: Method;
  let entropy: number;
  if (minimums === undefined) {
    // Every selected class at least once (the default without minimums), with its cached figures.
    entropy = entropyOf(prepared, length);
    method =
      acceptanceOf(prepared, length) >= REDRAW_MIN_ACCEPTANCE
        ? COVER
        : {
            kind: "exact",
            table: cachedClassCountTable(
              alphabet.classSizes,
              alphabet.classSizes.map(() => 1),
              length,
            ),
          };
  } else {
    const perClass = CLASS_NAMES.filter((name) => classes[name]).map((name) => minimums[name] ?? 1);
    const table = cachedClassCountTable(alphabet.classSizes, perClass, length);
    entropy = table.entropyBits;
    method = table.acceptance >= REDRAW_MIN_ACCEPTANCE ? { kind: "redraw", minimums: perClass } : { kind: "exact", table };
  }

  const parameters: PasswordParameters = {
    requested_length: length,
    uppercase: classes.uppercase,
    lowercase: classes.lowercase,
    numbers: classes.numbers,
    symbols: classes.symbols,
  };
  if (options.excludeSimilar !== undefined) parameters.exclude_similar = options.excludeSimilar;
  if (options.exclude !== undefined) parameters.exclude = options.exclude;
  if (minimums !== undefined) {
    for (const name of CLASS_NAMES) if (minimums[name] !== undefined) parameters[`min_${name}`] = minimums[name];
  }
  if (options.symbolSet !== undefined) parameters.symbol_set = options.symbolSet;
  if (count !== undefined) parameters.count = count;
  if (request.typeSent) parameters.type = "password";

  if (count === undefined || count === 1) {
    return {
      status: 200,
      body: { success: true, password: generateOne(alphabet, length, method, random), length, parameters, entropy_bits: entropy },
    };
  }
  const passwords: string[] = [];
  for (let i = 0; i < count; i++) passwords.push(generateOne(alphabet, length, method, random));
  return { status: 200, body: { success: true, passwords, length, parameters, entropy_bits: entropy } };
}

function passphraseResult(options: PassphraseOptions, count: number | undefined, random: Random): PasswordResult {
  const parameters: PassphraseParameters = {
    type: "passphrase",
    words: options.words,
    separator: options.separator,
    capitalize: options.capitalize,
    include_number: options.includeNumber,
  };
  if (count !== undefined) parameters.count = count;
  const entropy = passphraseEntropyBits(options);
  if (count === undefined || count === 1) {
    const password = generatePassphrase(options, random);
    return { status: 200, body: { success: true, password, length: password.length, parameters, entropy_bits: entropy } };
  }
  const passwords: string[] = [];
  for (let i = 0; i < count; i++) passwords.push(generatePassphrase(options, random));
  const lengths = passwords.map((phrase) => phrase.length);
  return { status: 200, body: { success: true, passwords, lengths, parameters, entropy_bits: entropy } };
}

export function generateFromFields(fields: Fields, random: Random): PasswordResult {
  const parsed = parseRequest(fields);
  if (!parsed.ok) return failure(parsed.error);
  const { request } = parsed;
  return request.type === "passphrase" ? passphraseResult(request.options, request.count, random) : passwordResult(request, random);
}
