// One spelling per page: every URL the crawler compares, fetches or lists goes through normaliseUrl.

/** sitemaps.org: a <loc> has fewer than 2,048 characters; the contract allows exactly 2,048. */
export const MAX_URL_LENGTH = 2_048;

/** Characters RFC 3986 allows unescaped in a path (unreserved, sub-delims, ":", "@", "/"). */
const PATH_SAFE = /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/;
/** A path of safe characters only (no escapes, nothing to encode) is already in normal form. */
const ALL_PATH_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** Characters RFC 3986 allows in a query (pchar, "/", "?"), "%" left to the escape check. */
const QUERY_SAFE = /[A-Za-z0-9\-._~!$&'()*+,;=:@/?]/;
/** A query with nothing to encode: only allowed characters, and every "%" starts an escape. */
const ALL_QUERY_SAFE = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*$/;
const utf8 = new TextEncoder();

/**
 * The normalised absolute form of `input` (resolved against `base`), or null when it is not an
 * http(s) URL, cannot be parsed, or carries a user name or password (never fetched).
 * Fragment dropped; scheme and host lower-cased; default port and dot segments removed (WHATWG URL);
 * path percent-encoded exactly once with upper-case hex and unreserved characters decoded;
 * query kept as written (a bare "?" too) except what RFC 3986 does not allow there, encoded once.
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
  let query = url.search !== "" ? url.search : url.href.endsWith("?") ? "?" : "";
  // The URL parser encodes some query characters (', space, non-ASCII) and leaves others ([, ], |,
  // a stray %): take the query as written in `input` instead, or, for a reference with none of its
  // own ("", "#x"), as written in the base whose query it keeps.
  if (query !== "") {
    const written = writtenQuery(input) ?? (typeof base === "string" ? writtenQuery(base) : null);
    query = `?${encodeQueryOnce(written ?? query.slice(1))}`;
  }
  return `${url.protocol}//${url.host}${encodePathOnce(url.pathname) || "/"}${query}`;
}

/** A reference that resolves by string concatenation: path characters only, no dot segment, no escape. */
const SIMPLE_REFERENCE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/**
 * normaliseUrl(href, base) for a `base` that normaliseUrl produced: a page's links. Most links are
 * plain root-relative or relative paths, with or without a query that needs no encoding, which
 * resolve by joining strings; the rest (schemes, "//", escapes in the path, anything to encode)
 * go through the URL parser as before.
 */
export function normaliseLink(href: string, base: string): string | null {
  return new LinkBase(base).resolve(href);
}

/**
 * normaliseLink for the links of one page: its base's origin and directory are found once, not once
 * a link; a link spelled with the base's origin as normaliseUrl writes it ("http://host:port/...")
 * joins as a root-relative one, and a query with nothing to encode is kept as written after the
 * joined path; what still goes through the URL parser is parsed once however often the page repeats
 * it (an absolute href once for the process). Reading the bench site's pages
 * (scripts/bench/probes/extract-cost.ts, with the scanner's one-comparison space test and the
 * `&amp;` path of src/crawler/html/links.ts, against the code before, where every such link went
 * through the parser): as written 0.88x, links absolute on the page's origin (as WordPress writes
 * them) 0.65x, on another origin 0.67x, with a two-parameter query 0.58x.
 */
export class LinkBase {
  private readonly pathStart: number;
  private readonly origin: string;
  /** The base's path up to its last "/", found when a relative link first needs it. */
  private directory: string | undefined;
  /** What the URL parser made of the hrefs that needed it (PAGE_PARSED at most: a hostile page's million hrefs keep no million results). */
  private parsed: Map<string, string | null> | undefined;

  constructor(readonly base: string) {
    this.pathStart = base.indexOf("/", base.indexOf("//") + 2);
    this.origin = base.slice(0, this.pathStart);
  }

  resolve(href: string): string | null {
    const base = this.base;
    const hash = href.indexOf("#");
    let reference = hash < 0 ? href : href.slice(0, hash);
    // "#top" is the page itself; "./x" is "x".
    if (reference === "") return base;
    // A query with nothing to encode is kept as written, as normaliseUrl keeps it; the path before it
    // resolves as a link without one.
    let query = "";
    const mark = reference.indexOf("?");
    if (mark >= 0) {
      query = reference.slice(mark);
      if (mark === 0 || !ALL_QUERY_SAFE.test(query.slice(1))) return this.parse(href);
      reference = reference.slice(0, mark);
    }
    const written = reference;
    while (reference.startsWith("./")) reference = reference.slice(2);
    // ".//x" is the relative "/x" below the base's directory, not the root-relative "/x".
    if (reference !== written && reference.startsWith("/")) return this.parse(href);
    if (!SIMPLE_REFERENCE.test(reference)) return this.parse(href);
    // The base's own origin, exactly as normaliseUrl writes it, then a path: the path is the link.
    const origin = this.origin;
    if (reference === written && reference.startsWith(origin) && reference.charCodeAt(origin.length) === 47)
      reference = reference.slice(origin.length);
    if (reference.startsWith("/")) {
      if (reference.startsWith("//")) return this.parse(href);
      return origin + (DOT_SEGMENT.test(reference) ? removeDotSegments(reference) : reference) + query;
    }
    // A relative path whose first segment holds a ":" would read as a scheme ("mailto:x").
    const colon = reference.indexOf(":");
    if (colon >= 0 && (reference.indexOf("/") < 0 || colon < reference.indexOf("/"))) return this.parse(href);
    let directory = this.directory;
    if (directory === undefined) {
      const baseQuery = base.indexOf("?", this.pathStart);
      const path = baseQuery < 0 ? base : base.slice(0, baseQuery);
      directory = this.directory = path.slice(this.pathStart, path.lastIndexOf("/") + 1);
    }
    // "../x", the common case of a dot segment: one directory up per "../", no further dot segment.
    while (reference.startsWith("../")) {
      reference = reference.slice(3);
      directory = directory.slice(0, directory.lastIndexOf("/", directory.length - 2) + 1) || "/";
    }
    const merged = directory + reference;
    return origin + (DOT_SEGMENT.test(reference) ? removeDotSegments(merged) : merged) + query;
  }

  private parse(href: string): string | null {
    // An absolute http(s) href resolves alike on every page: remembered for the process.
    const absolute = ABSOLUTE.test(href);
    let parsed = absoluteLinks;
    if (!absolute) {
      this.parsed ??= new Map();
      parsed = this.parsed;
    }
    let link = parsed.get(href);
    if (link === undefined) {
      link = normaliseUrl(href, this.base);
      if (parsed.size === (absolute ? ABSOLUTE_LINKS : PAGE_PARSED)) parsed.clear();
      parsed.set(href, link);
    }
    return link;
  }
}

/** "http://" or "https://" in any case: a URL that no base changes. */
const ABSOLUTE = /^https?:\/\//i;
/**
 * What the URL parser made of absolute hrefs the base's origin does not start (another host, or
 * its origin spelled otherwise): a site's header and footer link to the same other hosts on every
 * page. Bounded (emptied when full) as the image cache is.
 */
const absoluteLinks = new Map<string, string | null>();
const ABSOLUTE_LINKS = 4_096;
/** Hrefs a page's LinkBase remembers the parser's result for (emptied when full). */
const PAGE_PARSED = 4_096;

/**
 * RFC 3986 5.2.4 on an absolute path of plain characters ("../x" links are common): what the URL
 * parser does with "." and ".." segments, without parsing the URL.
 */
function removeDotSegments(path: string): string {
  const segments = path.split("/");
  const out: string[] = [];
  const last = segments.length - 1;
  for (let i = 1; i <= last; i++) {
    const segment = segments[i]!;
    if (segment === "..") out.pop();
    if (segment !== ".." && segment !== ".") out.push(segment);
    // A path ending in a dot segment names a directory: "/a/b/.." is "/a/".
    else if (i === last) out.push("");
  }
  return `/${out.join("/")}`;
}

/** The query of `input` as written (without "?"), or null when it has none of its own. */
function writtenQuery(input: string): string | null {
  const mark = input.indexOf("?");
  if (mark < 0) return null;
  const hash = input.indexOf("#");
  if (hash >= 0 && hash < mark) return null;
  // The URL parser drops tabs and newlines anywhere and C0 controls and spaces at the ends.
  const query = input.slice(mark + 1, hash < 0 ? undefined : hash).replace(/[\t\n\r]/g, "");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the URL parser strips trailing C0 controls and spaces, so this must match them
  return hash < 0 ? query.replace(/[\u0000-\u0020]+$/, "") : query;
}

/**
 * Percent-encodes a query once: escapes and allowed characters kept as written, everything else
 * (space, `"`, `<`, `>`, `[`, `]`, `\`, `^`, `` ` ``, `{`, `|`, `}`, controls, non-ASCII as UTF-8,
 * and a "%" not followed by two hex digits) encoded with upper-case hex.
 */
export function encodeQueryOnce(query: string): string {
  if (ALL_QUERY_SAFE.test(query)) return query;
  let out = "";
  for (let i = 0; i < query.length; i++) {
    const ch = query[i]!;
    if (ch === "%" && isHex(query[i + 1]) && isHex(query[i + 2])) {
      out += query.slice(i, i + 3);
      i += 2;
    } else if (QUERY_SAFE.test(ch)) {
      out += ch;
    } else {
      const char = String.fromCodePoint(query.codePointAt(i)!);
      out += encodeUtf8(char);
      i += char.length - 1;
    }
  }
  return out;
}

/**
 * The form in which robots.txt rules and URLs are compared (RFC 9309 2.2.2-2.2.3): escapes in
 * upper-case hex, unreserved characters decoded, and `%2A` / `%24` read as the literal `*` / `$`
 * (a rule's wildcards are split off before this). Applied to encoded path-and-query text.
 */
export function matchForm(text: string): string {
  if (!text.includes("%")) return text;
  return text.replace(/%([0-9A-Fa-f]{2})/g, (sequence, hex: string) => {
    const decoded = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(decoded) || decoded === "*" || decoded === "$" ? decoded : sequence.toUpperCase();
  });
}

function encodeUtf8(char: string): string {
  let out = "";
  // A lone surrogate has no UTF-8 form: the URL parser writes U+FFFD for it, so do we.
  for (const byte of utf8.encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  return out;
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
      const char = String.fromCodePoint(path.codePointAt(i)!);
      out += encodeUtf8(char);
      i += char.length - 1;
    }
  }
  return out;
}

function isHex(ch: string | undefined): boolean {
  return ch !== undefined && /[0-9A-Fa-f]/.test(ch);
}

/**
 * "scheme://host[:port]" of a normalised URL: the crawl's scope. A normalised URL's scheme and host
 * are lower-cased, its default port dropped and it has no user name: its origin is the text before
 * the path's "/" (a URL parsed for it was 1.3 µs a page of a re-crawl's history).
 */
export function originOf(normalised: string): string {
  const authority = normalised.startsWith("https://") ? 8 : normalised.startsWith("http://") ? 7 : -1;
  const slash = authority < 0 ? -1 : normalised.indexOf("/", authority);
  if (slash < 0 || normalised.lastIndexOf("@", slash) >= 0) return new URL(normalised).origin;
  return normalised.slice(0, slash);
}
