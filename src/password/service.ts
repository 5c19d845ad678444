// From request fields to the response: validate, pick the alphabet, generate, count entropy.

import { CHARSETS, CLASS_NAMES, SIMILAR, withoutCharacters, type ClassName } from "./charset.ts";
import { createAlphabet, entropyBits, generatePassword, type Alphabet } from "./generator.ts";
import { ERRORS, MAX_LENGTH, parsePasswordOptions, type Fields, type PasswordOptions } from "./params.ts";
import type { Random } from "./random.ts";

export interface PasswordParameters {
  requested_length: number;
  uppercase: boolean;
  lowercase: boolean;
  numbers: boolean;
  symbols: boolean;
  exclude_similar?: boolean;
  exclude?: string;
}

export interface PasswordSuccess {
  success: true;
  password: string;
  length: number;
  parameters: PasswordParameters;
  entropy_bits: number;
}

export interface PasswordFailure {
  success: false;
  error: string;
}

export type PasswordResult = { status: 200; body: PasswordSuccess } | { status: 400; body: PasswordFailure };

/** An alphabet with its entropy by length, computed on first use (0 until then). */
interface PreparedAlphabet {
  alphabet: Alphabet;
  entropyByLength: Float64Array;
}

function prepare(classes: string[]): PreparedAlphabet {
  return { alphabet: createAlphabet(classes), entropyByLength: new Float64Array(MAX_LENGTH + 1) };
}

function entropyOf(prepared: PreparedAlphabet, length: number): number {
  const table = prepared.entropyByLength;
  if (table[length] === 0) table[length] = entropyBits(prepared.alphabet.classSizes, length);
  return table[length]!;
}

// Requests without `exclude` share one of 2 * 15 alphabets (class subset, with or without
// look-alikes), built once so the common case does no set or string work.
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
  if (!options.exclude) return sharedAlphabet(options.classes, excludeSimilar);
  const excluded = new Set(options.exclude);
  if (excludeSimilar) for (const ch of SIMILAR) excluded.add(ch);
  const classes: string[] = [];
  for (const name of CLASS_NAMES) {
    if (!options.classes[name]) continue;
    const kept = withoutCharacters(CHARSETS[name], excluded);
    if (kept === "") return name;
    classes.push(kept);
  }
  return prepare(classes);
}

export function generateFromFields(fields: Fields, random: Random): PasswordResult {
  const parsed = parsePasswordOptions(fields);
  if (!parsed.ok) return { status: 400, body: { success: false, error: parsed.error } };
  const { options } = parsed;
  const prepared = alphabetFor(options);
  if (typeof prepared === "string") return { status: 400, body: { success: false, error: ERRORS.emptied(prepared) } };

  const { length, classes } = options;
  const parameters: PasswordParameters = {
    requested_length: length,
    uppercase: classes.uppercase,
    lowercase: classes.lowercase,
    numbers: classes.numbers,
    symbols: classes.symbols,
  };
  if (options.excludeSimilar !== undefined) parameters.exclude_similar = options.excludeSimilar;
  if (options.exclude !== undefined) parameters.exclude = options.exclude;
  return {
    status: 200,
    body: {
      success: true,
      password: generatePassword(prepared.alphabet, length, random),
      length,
      parameters,
      entropy_bits: entropyOf(prepared, length),
    },
  };
}
