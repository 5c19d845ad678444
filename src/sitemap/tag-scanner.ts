// The start tags of an HTML page that a crawler reads (a, area, base, link, meta, img) with their
// attributes, found by the HTML Living Standard's tokenizer rules (13.2.5) as far as they decide
// which tags and attribute values exist: comments, bogus comments, raw text and RCDATA elements
// (script with its escape states, style, textarea, title, ...), plaintext, CDATA in svg and math,
// quoted and unquoted values, duplicate attributes (the first wins), a tag cut off by the end of
// the page (not a tag). It builds no tree and keeps no element stack: one pass, linear in the page
// whatever its nesting, one object per tag it reports and none for the others.
//
// Why not Bun's HTMLRewriter (lol-html), which did this before: its tokenizer is fast, but every
// matched element calls into JavaScript and every attribute read calls back into native code. On
// the bench site's 23 KB pages: HTMLRewriter with the four selectors the crawler needs and no-op
// handlers 52 µs a page, the whole extraction 63-65 µs; this scanner plus the same extraction
// about 20 µs (notes/bench-profile.md).

/** A reported start tag: its lower-case name and its attributes (lower-case names, raw values). */
export interface ScannedTag {
  name: string;
  attributes: Map<string, string>;
}

/** Elements whose content is text until their end tag (13.2.6.4: RAWTEXT and RCDATA switches). */
const TEXT_ELEMENTS = ["style", "xmp", "iframe", "noembed", "noframes", "textarea", "title"];
/** Elements whose start tags are reported. */
const REPORTED = ["a", "area", "base", "link", "meta", "img"];
/** Elements that open foreign content, where `<![CDATA[` starts a CDATA section. */
const FOREIGN = ["svg", "math"];
/** HTML start tags that end foreign content (13.2.6.5, "any other start tag" breakouts). */
const BREAKOUTS = new Set(
  ("b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing menu meta nobr ol p pre " +
    "ruby s small span strong strike sub sup table tt u ul var").split(" "),
);

const enum Kind {
  Other,
  Reported,
  Text,
  Script,
  Plaintext,
  Foreign,
}

const KINDS = new Map<string, Kind>([
  ...REPORTED.map((name) => [name, Kind.Reported] as const),
  ...TEXT_ELEMENTS.map((name) => [name, Kind.Text] as const),
  ["script", Kind.Script],
  ["plaintext", Kind.Plaintext],
  ...FOREIGN.map((name) => [name, Kind.Foreign] as const),
]);
/** No name above is longer: a longer tag name is Kind.Other without a lookup. */
const LONGEST_KNOWN = 9;

const TAB = 9, LF = 10, FF = 12, CR = 13, SPACE = 32, BANG = 33, DQUOTE = 34, SQUOTE = 39, DASH = 45, SLASH = 47, EQUALS = 61, GT = 62, QMARK = 63;

/** Tab, LF, FF, CR (LF after the input stream's newline normalisation) and space. */
function isSpace(c: number): boolean {
  return c === SPACE || c === LF || c === TAB || c === FF || c === CR;
}

function isAsciiAlpha(c: number): boolean {
  return (c | 0x20) >= 97 && (c | 0x20) <= 122;
}

/** Ends a tag name (or the name after `</` in raw text): space, "/" or ">". */
function endsName(c: number): boolean {
  return isSpace(c) || c === SLASH || c === GT;
}

/** Calls `report` for every reported start tag of `html`, in document order. */
export function scanTags(html: string, report: (tag: ScannedTag) => void): void {
  const n = html.length;
  let foreignDepth = 0;
  let i = 0;
  while (i < n) {
    const lt = html.indexOf("<", i);
    if (lt < 0) return;
    const c = html.charCodeAt(lt + 1);
    if (c === BANG) {
      i = afterMarkupDeclaration(html, lt, foreignDepth > 0);
      continue;
    }
    if (c === QMARK) {
      i = afterBogusComment(html, lt + 2);
      continue;
    }
    const end = c === SLASH;
    const nameStart = end ? lt + 2 : lt + 1;
    const first = html.charCodeAt(nameStart);
    if (!isAsciiAlpha(first)) {
      // "</>" is dropped, "</" and something else is a bogus comment, "<" and anything else is text.
      if (!end) i = lt + 1;
      else if (first === GT) i = lt + 3;
      else i = nameStart >= n ? n : afterBogusComment(html, nameStart);
      continue;
    }
    let p = nameStart + 1;
    while (p < n && !endsName(html.charCodeAt(p))) p++;
    const kind = p - nameStart > LONGEST_KNOWN ? Kind.Other : (KINDS.get(html.slice(nameStart, p).toLowerCase()) ?? Kind.Other);
    const attributes = kind === Kind.Reported && !end ? new Map<string, string>() : undefined;
    const tagEnd = readAttributes(html, p, attributes);
    if (tagEnd < 0) return; // cut off by the end of the page: no tag
    i = tagEnd;
    if (end) {
      if (kind === Kind.Foreign && foreignDepth > 0) foreignDepth--;
      continue;
    }
    if (kind === Kind.Other && foreignDepth === 0) continue;
    const name = html.slice(nameStart, p).toLowerCase();
    if (foreignDepth > 0 && BREAKOUTS.has(name)) foreignDepth = 0;
    if (attributes) report({ name, attributes });
    else if (kind === Kind.Foreign) {
      if (html.charCodeAt(tagEnd - 2) !== SLASH) foreignDepth++;
    } else if (foreignDepth === 0) {
      // In svg and math these names are foreign elements, whose content is markup.
      if (kind === Kind.Text) i = textEnd(html, i, name);
      else if (kind === Kind.Script) i = scriptEnd(html, i);
      else if (kind === Kind.Plaintext) return;
    }
  }
}

/**
 * Reads the attributes from `p` (just after the tag name) to the tag's ">", into `into` when given;
 * returns the index after ">", or -1 when the page ends first.
 */
function readAttributes(html: string, p: number, into: Map<string, string> | undefined): number {
  const n = html.length;
  for (;;) {
    let c = 0;
    // Before the attribute name: spaces, and "/" (a self-closing mark not before ">" is ignored).
    while (p < n && (isSpace((c = html.charCodeAt(p))) || c === SLASH)) p++;
    if (p >= n) return -1;
    if (c === GT) return p + 1;
    // The name: its first character may be "=", then anything up to a space, "/", ">" or "=".
    const nameStart = p++;
    while (p < n && !endsName((c = html.charCodeAt(p))) && c !== EQUALS) p++;
    const nameEnd = p;
    while (p < n && isSpace((c = html.charCodeAt(p)))) p++;
    let value = "";
    if (p < n && c === EQUALS) {
      p++;
      while (p < n && isSpace((c = html.charCodeAt(p)))) p++;
      if (p >= n) return -1;
      if (c === DQUOTE || c === SQUOTE) {
        const close = html.indexOf(c === DQUOTE ? '"' : "'", p + 1);
        if (close < 0) return -1;
        if (into) value = html.slice(p + 1, close);
        p = close + 1;
      } else if (c !== GT) {
        const valueStart = p;
        while (p < n && !isSpace((c = html.charCodeAt(p))) && c !== GT) p++;
        if (into) value = html.slice(valueStart, p);
      }
    }
    if (into) {
      const name = html.slice(nameStart, nameEnd).toLowerCase();
      if (!into.has(name)) into.set(name, cleanValue(value));
    }
  }
}

/** The input stream's preprocessing, for the rare value that needs it: CR LF and CR to LF, NUL to U+FFFD. */
function cleanValue(value: string): string {
  if (value.includes("\r")) value = value.replace(/\r\n?/g, "\n");
  if (value.includes("\0")) value = value.replaceAll("\0", "\uFFFD");
  return value;
}

/** After `<!`: a comment, a doctype, a CDATA section (in foreign content) or a bogus comment. */
function afterMarkupDeclaration(html: string, lt: number, foreign: boolean): number {
  if (html.startsWith("--", lt + 2)) return afterComment(html, lt + 4);
  if (foreign && html.startsWith("[CDATA[", lt + 2)) {
    const close = html.indexOf("]]>", lt + 9);
    return close < 0 ? html.length : close + 3;
  }
  return afterBogusComment(html, lt + 2);
}

/** A comment's text starts at `p`: "<!-->" and "<!--->" are empty; it ends at "-->" or "--!>". */
function afterComment(html: string, p: number): number {
  if (html.charCodeAt(p) === GT) return p + 1;
  if (html.charCodeAt(p) === DASH && html.charCodeAt(p + 1) === GT) return p + 2;
  const n = html.length;
  let dashes = html.indexOf("--", p);
  while (dashes >= 0) {
    // Any number of dashes, then ">" or "!>".
    let q = dashes + 2;
    while (q < n && html.charCodeAt(q) === DASH) q++;
    if (html.charCodeAt(q) === GT) return q + 1;
    if (html.charCodeAt(q) === BANG && html.charCodeAt(q + 1) === GT) return q + 2;
    dashes = html.indexOf("--", q);
  }
  return n;
}

function afterBogusComment(html: string, p: number): number {
  const gt = html.indexOf(">", p);
  return gt < 0 ? html.length : gt + 1;
}

/** Where `</name` followed by a space, "/" or ">" starts, from `p` on (the page's end if never). */
function textEnd(html: string, p: number, name: string): number {
  for (;;) {
    const close = html.indexOf("</", p);
    if (close < 0) return html.length;
    if (isEndTagOf(html, close, name)) return close;
    p = close + 2;
  }
}

function isEndTagOf(html: string, at: number, name: string): boolean {
  return (
    html.charCodeAt(at + 1) === SLASH &&
    html.slice(at + 2, at + 2 + name.length).toLowerCase() === name &&
    endsName(html.charCodeAt(at + 2 + name.length))
  );
}

function isStartTagOf(html: string, at: number, name: string): boolean {
  return html.slice(at + 1, at + 1 + name.length).toLowerCase() === name && endsName(html.charCodeAt(at + 1 + name.length));
}

/**
 * Where a script's content ends: at `</script`, except inside "<!--" ... "-->" after a `<script`
 * (the script data escaped and double escaped states), where `</script>` only leaves the inner one.
 */
function scriptEnd(html: string, p: number): number {
  const DATA = 0, ESCAPED = 1, DOUBLE_ESCAPED = 2;
  let state = DATA;
  // The next "-->" at or after p, searched again only once p has passed it (else quadratic).
  let close = -1;
  let searched = -1;
  for (;;) {
    const lt = html.indexOf("<", p);
    if (state !== DATA) {
      // "-->" leaves either escaped state; its dashes may be those of the "<!--" that entered it.
      if (searched < 0 || (close >= 0 && close < p)) {
        close = html.indexOf("-->", p);
        searched = p;
      }
      if (close >= 0 && (lt < 0 || close < lt)) {
        state = DATA;
        p = close + 3;
        continue;
      }
    }
    if (lt < 0) return html.length;
    if (state === DATA) {
      if (html.startsWith("<!--", lt)) {
        state = ESCAPED;
        p = lt + 2;
        continue;
      }
      if (isEndTagOf(html, lt, "script")) return lt;
    } else if (state === ESCAPED) {
      if (isEndTagOf(html, lt, "script")) return lt;
      if (isStartTagOf(html, lt, "script")) state = DOUBLE_ESCAPED;
    } else if (isEndTagOf(html, lt, "script")) {
      state = ESCAPED;
    }
    p = lt + 1;
  }
}
