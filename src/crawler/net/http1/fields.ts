// A response's header fields as the client read them: a list of (lower-cased name, value) pairs,
// looked up in JS. A WHATWG Headers took an append a field (a call into the engine and its own
// copy) and a `get` a lookup, for every field of every page: `Headers`, `append` and `get` were
// 4-5 % of a crawl's JS-thread samples (notes/bench-profile.md section 16). A crawl reads a few
// fields of a head of about ten, so a scan of the list is all a lookup needs. A field name is
// checked and lower-cased once and remembered: 8 names 0.63 µs a head with the lookup, 1.15-1.23
// µs with the token regex and toLowerCase each time (Bun 1.4.4, 200,000 heads, load ~3).
//
// It checks and reads fields as Bun's Headers does, so that the head parser refuses what it
// refused and a Response made of it (http1/answer.ts) shows the same fields: a name must be a
// token; a value is stripped of HTTP whitespace (tab, LF, CR, space) at both ends and must then hold
// no NUL, CR or LF (or a character past Latin-1); `get` joins a name's values with ", ";
// iteration gives lower-cased names in code-unit order, repeated fields joined, and the Set-Cookie
// fields apart, in the order received, after all the others.
/** RFC 9110 5.6.2's token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What a value may not hold once its ends are stripped. */
const INVALID_VALUE = /[\0\n\r\u0100-\uffff]/;

/**
 * Field names as sent, checked, and lower-cased: a site sends the same ten names on every answer,
 * and the lookup costs less than the token check and the lower-casing.
 */
const lowerNames = new Map<string, string>();
const MAX_NAMES = 512;

export class FieldList implements Iterable<[string, string]> {
  /** Lower-cased name, value, name, value, ... in the order received. */
  private readonly list: string[] = [];

  /** Adds a field; a TypeError for a name that is no token or a value Headers would refuse. */
  append(name: string, value: string): void {
    let lower = lowerNames.get(name);
    if (lower === undefined) {
      if (!TOKEN.test(name)) throw new TypeError(`Invalid header name: '${name}'`);
      lower = name.toLowerCase();
      if (lowerNames.size >= MAX_NAMES) lowerNames.clear();
      lowerNames.set(name, lower);
    }
    const stripped = stripHttpWhitespace(value);
    if (INVALID_VALUE.test(stripped)) throw new TypeError(`Header '${name}' has invalid value`);
    this.list.push(lower, stripped);
  }

  get(name: string): string | null {
    const key = name.toLowerCase();
    const list = this.list;
    let found: string | null = null;
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] === key) found = found === null ? list[i + 1]! : `${found}, ${list[i + 1]}`;
    }
    return found;
  }

  has(name: string): boolean {
    const key = name.toLowerCase();
    for (let i = 0; i < this.list.length; i += 2) if (this.list[i] === key) return true;
    return false;
  }

  getSetCookie(): string[] {
    const cookies: string[] = [];
    for (let i = 0; i < this.list.length; i += 2) if (this.list[i] === "set-cookie") cookies.push(this.list[i + 1]!);
    return cookies;
  }

  /** Removes every field of the name. */
  delete(name: string): void {
    const key = name.toLowerCase();
    const list = this.list;
    let kept = 0;
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] === key) continue;
      list[kept++] = list[i]!;
      list[kept++] = list[i + 1]!;
    }
    list.length = kept;
  }

  forEach(callback: (value: string, name: string) => void): void {
    for (const [name, value] of this.entries()) callback(value, name);
  }

  /** The fields as Headers iterates them (the file's header). */
  entries(): [string, string][] {
    const joined = new Map<string, string>();
    const cookies: [string, string][] = [];
    const list = this.list;
    for (let i = 0; i < list.length; i += 2) {
      const name = list[i]!;
      const value = list[i + 1]!;
      if (name === "set-cookie") cookies.push([name, value]);
      else {
        const before = joined.get(name);
        joined.set(name, before === undefined ? value : `${before}, ${value}`);
      }
    }
    const sorted = [...joined].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return cookies.length === 0 ? sorted : sorted.concat(cookies);
  }

  [Symbol.iterator](): Iterator<[string, string]> {
    return this.entries()[Symbol.iterator]();
  }

  /** A Headers of the same fields, appended in the order received. */
  toHeaders(): Headers {
    const headers = new Headers();
    for (let i = 0; i < this.list.length; i += 2) headers.append(this.list[i]!, this.list[i + 1]!);
    return headers;
  }
}

/** Strips tab, LF, CR and space from both ends (the Fetch standard's "normalize" of a value). */
function stripHttpWhitespace(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isHttpWhitespace(value.charCodeAt(start))) start++;
  while (end > start && isHttpWhitespace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function isHttpWhitespace(c: number): boolean {
  return c === 32 || c === 9 || c === 13 || c === 10;
}
