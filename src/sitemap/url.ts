// One spelling per page: every URL the crawler compares, fetches or lists goes through normaliseUrl.

/** Characters RFC 3986 allows unescaped in a path (unreserved, sub-delims, ":", "@", "/"). */
const PATH_SAFE = /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/;
/** A path of safe characters only (no escapes, nothing to encode) is already in normal form. */
const ALL_PATH_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;
const utf8 = new TextEncoder();

/**
 * The normalised absolute form of `input` (resolved against `base`), or null when it is not an
 * http(s) URL, cannot be parsed, or carries a user name or password (never fetched).
 * Fragment dropped; scheme and host lower-cased; default port and dot segments removed (WHATWG URL);
 * path percent-encoded exactly once with upper-case hex and unreserved characters decoded;
 * query kept as written, including a bare "?".
 */
export function normaliseUrl(input: string, base?: string | URL): string | null {
  let url: URL;
  try {
    url = new URL(input, base);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username !== "" || url.password !== "") return null;
  url.hash = "";
  // url.search is "" for both "no query" and a bare "?"; the href tells them apart.
  const query = url.search !== "" ? url.search : url.href.endsWith("?") ? "?" : "";
  return `${url.protocol}//${url.host}${encodePathOnce(url.pathname) || "/"}${query}`;
}

/**
 * Percent-encodes a path once: keeps valid escapes (hex upper-cased, unreserved characters decoded),
 * encodes everything RFC 3986 does not allow in a path as UTF-8. Also used for robots.txt patterns.
 */
export function encodePathOnce(path: string): string {
  if (ALL_PATH_SAFE.test(path)) return path;
  let out = "";
  for (let i = 0; i < path.length; i++) {
    const ch = path[i]!;
    if (ch === "%" && isHex(path[i + 1]) && isHex(path[i + 2])) {
      const hex = path.slice(i + 1, i + 3).toUpperCase();
      const decoded = String.fromCharCode(parseInt(hex, 16));
      out += UNRESERVED.test(decoded) ? decoded : `%${hex}`;
      i += 2;
    } else if (PATH_SAFE.test(ch)) {
      out += ch;
    } else {
      const cp = path.codePointAt(i)!;
      const char = String.fromCodePoint(cp);
      for (const byte of utf8.encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
      i += char.length - 1;
    }
  }
  return out;
}

function isHex(ch: string | undefined): boolean {
  return ch !== undefined && /[0-9A-Fa-f]/.test(ch);
}

/** "scheme://host[:port]" of a normalised URL: the crawl's scope. */
export function originOf(normalised: string): string {
  return new URL(normalised).origin;
}
