// Turns raw request fields (query-string text, form text or JSON values) into validated
// password or passphrase options, or the contract's exact error text for the first field that
// is wrong.
//
// Check order: `type`; then, for a password, length, the four classes, exclude_similar, exclude,
// symbol_set, the four minimums' ranges, no class selected, a minimum for a class that is off,
// the minimums' sum; for a passphrase, words, separator, capitalize, include_number; then
// `count`. (The service then refuses exclusions that empty a selected class.) Parameters of the
// other type are ignored, as unknown parameters are.

import { ASCII_PUNCTUATION, CLASS_NAMES, type ClassName } from "./charset.ts";

export const MIN_LENGTH = 8;
export const MAX_LENGTH = 128;
export const DEFAULT_LENGTH = 16;
export const MAX_EXCLUDE = 128;
export const MAX_SYMBOL_SET = 32;
export const MAX_COUNT = 100;
export const MIN_WORDS = 3;
export const MAX_WORDS = 20;
export const DEFAULT_WORDS = 6;
export const MAX_SEPARATOR = 3;
export const DEFAULT_SEPARATOR = "-";

export const ERRORS = {
  length: `length must be an integer from ${MIN_LENGTH} to ${MAX_LENGTH}.`,
  boolean: (name: string) => `${name} must be one of: true, false, 1, 0.`,
  excludeType: "exclude must be a string.",
  excludeLength: `exclude must be at most ${MAX_EXCLUDE} characters.`,
  noClass: "At least one character type (uppercase, lowercase, numbers, symbols) must be selected.",
  emptied: (name: ClassName) => `exclude leaves no characters for ${name}.`,
  minimum: (name: ClassName, length: number) => `min_${name} must be an integer from 1 to ${length}.`,
  minimumNeedsClass: (name: ClassName) => `min_${name} needs ${name}=true.`,
  minimumsTooLarge: "The minimums add up to more than length.",
  symbolSet: `symbol_set must be 1 to ${MAX_SYMBOL_SET} distinct ASCII punctuation characters.`,
  count: `count must be an integer from 1 to ${MAX_COUNT}.`,
  type: "type must be one of: password, passphrase.",
  words: `words must be an integer from ${MIN_WORDS} to ${MAX_WORDS}.`,
  separator: `separator must be at most ${MAX_SEPARATOR} printable ASCII characters.`,
} as const;

/** Field values by name; `undefined` means the field was not sent. */
export type Fields = Readonly<Record<string, unknown>>;

export interface PasswordOptions {
  length: number;
  classes: Record<ClassName, boolean>;
  /** Present only when the request sent it. */
  excludeSimilar?: boolean;
  /** Present only when the request sent it. */
  exclude?: string;
  /** The minimums the request sent, by class; a selected class without one has minimum 1. */
  minimums?: Partial<Record<ClassName, number>>;
  /** Present only when the request sent it: replaces the 28 default symbols. */
  symbolSet?: string;
}

export interface PassphraseOptions {
  words: number;
  separator: string;
  capitalize: boolean;
  includeNumber: boolean;
}

/** What to generate, and how many; `count` and `typeSent` say what the request sent. */
export type GenerationRequest =
  | { type: "password"; options: PasswordOptions; count?: number; typeSent: boolean }
  | { type: "passphrase"; options: PassphraseOptions; count?: number };

export type ParsedOptions = { ok: true; options: PasswordOptions } | { ok: false; error: string };
export type ParsedPassphrase = { ok: true; options: PassphraseOptions } | { ok: false; error: string };
export type ParsedRequest = { ok: true; request: GenerationRequest } | { ok: false; error: string };

const BOOLEAN_TEXT: ReadonlyMap<string, boolean> = new Map([
  ["true", true],
  ["false", false],
  ["1", true],
  ["0", false],
]);

function parseBoolean(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (value === 1 || value === 0) return value === 1;
  // The length check keeps a huge value from being lower-cased only to be refused.
  if (typeof value === "string" && value.length <= 5) return BOOLEAN_TEXT.get(value.toLowerCase());
  return undefined;
}

/**
 * An integer from decimal digits only (no sign, space, point or exponent), or a JSON integer.
 * Text past `max` comes back as `max + 1` (refused by the caller's range check either way).
 */
function parseInteger(value: unknown, max: number): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) ? value : undefined;
  if (typeof value !== "string" || value.length === 0) return undefined;
  let parsed = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    // Anything past the maximum is refused anyway; stopping keeps the number exact.
    parsed = Math.min(parsed * 10 + digit, max + 1);
  }
  return parsed;
}

/** The integer in [min, max], or undefined for anything else. */
function integerIn(value: unknown, min: number, max: number): number | undefined {
  const parsed = parseInteger(value, max);
  return parsed !== undefined && parsed >= min && parsed <= max ? parsed : undefined;
}

function codePointCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function isSymbolSet(value: unknown): value is string {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_SYMBOL_SET) return false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (!ASCII_PUNCTUATION.includes(ch) || value.indexOf(ch) !== i) return false;
  }
  return true;
}

function isSeparator(value: unknown): value is string {
  if (typeof value !== "string" || value.length > MAX_SEPARATOR) return false;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code > 0x7e) return false;
  }
  return true;
}

const MINIMUM_FIELDS: Readonly<Record<ClassName, string>> = {
  uppercase: "min_uppercase",
  lowercase: "min_lowercase",
  numbers: "min_numbers",
  symbols: "min_symbols",
};

/** The password fields (every field but `type` and `count`). */
export function parsePasswordOptions(fields: Fields): ParsedOptions {
  let length = DEFAULT_LENGTH;
  if (fields.length !== undefined) {
    const parsed = integerIn(fields.length, MIN_LENGTH, MAX_LENGTH);
    if (parsed === undefined) return { ok: false, error: ERRORS.length };
    length = parsed;
  }

  const classes = { uppercase: true, lowercase: true, numbers: true, symbols: true };
  for (const name of CLASS_NAMES) {
    if (fields[name] === undefined) continue;
    const parsed = parseBoolean(fields[name]);
    if (parsed === undefined) return { ok: false, error: ERRORS.boolean(name) };
    classes[name] = parsed;
  }

  const options: PasswordOptions = { length, classes };
  if (fields.exclude_similar !== undefined) {
    const parsed = parseBoolean(fields.exclude_similar);
    if (parsed === undefined) return { ok: false, error: ERRORS.boolean("exclude_similar") };
    options.excludeSimilar = parsed;
  }

  const exclude = fields.exclude;
  if (exclude !== undefined) {
    if (typeof exclude !== "string") return { ok: false, error: ERRORS.excludeType };
    // The limit counts code points; each is one or two UTF-16 units, so only a string between
    // the limit and twice it needs counting.
    if (exclude.length > MAX_EXCLUDE && (exclude.length > 2 * MAX_EXCLUDE || codePointCount(exclude) > MAX_EXCLUDE)) {
      return { ok: false, error: ERRORS.excludeLength };
    }
    options.exclude = exclude;
  }

  if (fields.symbol_set !== undefined) {
    if (!isSymbolSet(fields.symbol_set)) return { ok: false, error: ERRORS.symbolSet };
    options.symbolSet = fields.symbol_set;
  }

  let minimums: Partial<Record<ClassName, number>> | undefined;
  for (const name of CLASS_NAMES) {
    const value = fields[MINIMUM_FIELDS[name]];
    if (value === undefined) continue;
    const parsed = integerIn(value, 1, length);
    if (parsed === undefined) return { ok: false, error: ERRORS.minimum(name, length) };
    minimums ??= {};
    minimums[name] = parsed;
  }

  if (!classes.uppercase && !classes.lowercase && !classes.numbers && !classes.symbols) {
    return { ok: false, error: ERRORS.noClass };
  }

  if (minimums) {
    let sum = 0;
    for (const name of CLASS_NAMES) {
      if (!classes[name]) {
        if (minimums[name] !== undefined) return { ok: false, error: ERRORS.minimumNeedsClass(name) };
        continue;
      }
      sum += minimums[name] ?? 1;
    }
    if (sum > length) return { ok: false, error: ERRORS.minimumsTooLarge };
    options.minimums = minimums;
  }
  return { ok: true, options };
}

/** The passphrase fields: words, separator, capitalize, include_number. */
export function parsePassphraseOptions(fields: Fields): ParsedPassphrase {
  const options: PassphraseOptions = { words: DEFAULT_WORDS, separator: DEFAULT_SEPARATOR, capitalize: false, includeNumber: false };
  if (fields.words !== undefined) {
    const parsed = integerIn(fields.words, MIN_WORDS, MAX_WORDS);
    if (parsed === undefined) return { ok: false, error: ERRORS.words };
    options.words = parsed;
  }
  if (fields.separator !== undefined) {
    if (!isSeparator(fields.separator)) return { ok: false, error: ERRORS.separator };
    options.separator = fields.separator;
  }
  for (const [name, key] of [
    ["capitalize", "capitalize"],
    ["include_number", "includeNumber"],
  ] as const) {
    if (fields[name] === undefined) continue;
    const parsed = parseBoolean(fields[name]);
    if (parsed === undefined) return { ok: false, error: ERRORS.boolean(name) };
    options[key] = parsed;
  }
  return { ok: true, options };
}

/** Every field of a request: its type, that type's options, and `count`. */
export function parseRequest(fields: Fields): ParsedRequest {
  const type = fields.type;
  if (type !== undefined && type !== "password" && type !== "passphrase") return { ok: false, error: ERRORS.type };

  let request: GenerationRequest;
  if (type === "passphrase") {
    const parsed = parsePassphraseOptions(fields);
    if (!parsed.ok) return parsed;
    request = { type, options: parsed.options };
  } else {
    const parsed = parsePasswordOptions(fields);
    if (!parsed.ok) return parsed;
    request = { type: "password", options: parsed.options, typeSent: type !== undefined };
  }

  if (fields.count !== undefined) {
    const count = integerIn(fields.count, 1, MAX_COUNT);
    if (count === undefined) return { ok: false, error: ERRORS.count };
    request.count = count;
  }
  return { ok: true, request };
}
