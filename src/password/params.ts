// Turns raw request fields (query-string text, form text or JSON values) into validated
// password options, or the contract's exact error text for the first field that is wrong.

import { CLASS_NAMES, type ClassName } from "./charset.ts";

export const MIN_LENGTH = 8;
export const MAX_LENGTH = 128;
export const DEFAULT_LENGTH = 16;
export const MAX_EXCLUDE = 128;

export const ERRORS = {
  length: `length must be an integer from ${MIN_LENGTH} to ${MAX_LENGTH}.`,
  boolean: (name: string) => `${name} must be one of: true, false, 1, 0.`,
  excludeType: "exclude must be a string.",
  excludeLength: `exclude must be at most ${MAX_EXCLUDE} characters.`,
  noClass: "At least one character type (uppercase, lowercase, numbers, symbols) must be selected.",
  emptied: (name: ClassName) => `exclude leaves no characters for ${name}.`,
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
}

export type ParsedOptions = { ok: true; options: PasswordOptions } | { ok: false; error: string };

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

/** An integer from decimal digits only (no sign, space, point or exponent), or a JSON integer. */
function parseLength(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) ? value : undefined;
  if (typeof value !== "string" || value.length === 0) return undefined;
  let parsed = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    // Anything past the maximum is refused anyway; stopping keeps the number exact.
    parsed = Math.min(parsed * 10 + digit, MAX_LENGTH + 1);
  }
  return parsed;
}

function codePointCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

export function parsePasswordOptions(fields: Fields): ParsedOptions {
  let length = DEFAULT_LENGTH;
  if (fields.length !== undefined) {
    const parsed = parseLength(fields.length);
    if (parsed === undefined || parsed < MIN_LENGTH || parsed > MAX_LENGTH) return { ok: false, error: ERRORS.length };
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

  if (!classes.uppercase && !classes.lowercase && !classes.numbers && !classes.symbols) {
    return { ok: false, error: ERRORS.noClass };
  }
  return { ok: true, options };
}
