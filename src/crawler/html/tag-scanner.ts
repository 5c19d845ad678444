// The start tags of an HTML page that a crawler reads (a, area, base, link, meta, img; and script,
// source, video and audio when the link report checks resources) with their attributes, found by
// the HTML Living Standard's tokenizer rules (13.2.5) as far as they decide which tags and
// attribute values exist: comments, bogus comments, raw text and RCDATA elements
// (script with its escape states, style, textarea, title, ...), plaintext, CDATA in svg and math,
// quoted and unquoted values, duplicate attributes (the first wins), a tag cut off by the end of
// the page (not a tag).
//
// Which of those states applies depends on the tree builder (a <style> in svg is an element of
// svg, whose content is markup; in svg's <foreignObject> it is HTML's raw text again). That part is
// simulated as lol-html simulates it, with a stack of namespaces that only svg, math and their
// HTML integration points push (nothing is kept for other elements, so nesting them costs nothing),
// and with the standard's rule where lol-html departs from it ("Namespaces on the stack" below; the
// exceptions are listed in test/crawler/html/tag-scanner.differential.test.ts).
//
// Why not Bun's HTMLRewriter (lol-html), which did this before: its tokenizer is fast, but every
// matched element calls into JavaScript and every attribute read calls back into native code. On
// the bench site's 23 KB pages (CPU µs a page, one core): HTMLRewriter with no handlers 10.3, with
// the four selectors the crawler needs and no-op handlers 52.1, `indexOf("<")` over the page 2.2;
// the whole extraction 64.9 with HTMLRewriter, ~20 with this scanner. The scanner classifies tag
// names by a hash of their characters (no string per tag), records only the attributes it may be
// asked for (no Map, no string until `get`), and reports a tag through one reused object
// (notes/bench-profile.md, "Tag scanner").
//
// Beside the tags, every scan keeps the text of `<script type="application/ld+json">` (a page's
// JSON-LD dates), and a scan asked for `text` keeps the page's text nodes and its first title for
// the page's fingerprint (fingerprint.ts). The text is found in the same pass: the scan already
// visits every "<", so a text node is the stretch between two tokens, recorded as bounds and sliced
// once the main content is known. Its regions (the first main, the first article, the page outside
// nav, header, footer and aside; noscript and template are never text) come from a stack of those
// eight elements only: an end tag closes the latest open element of its name and the tracked ones
// opened inside it, as the tree builder's "any other end tag" does; an end tag of an untracked
// element (a `</div>` around an unclosed `<nav>`) closes nothing, where the tree builder would close
// the nav too. The text mode costs nothing when off: one test per token.

/**
 * The start tags reported to readStartTags' callback: script, source, video and audio only to a
 * scan asked for `resources` (the link report's resource checks), so that other scans report, and
 * record, nothing more than before.
 */
export type ReportedTag = "a" | "area" | "base" | "link" | "meta" | "img" | "script" | "source" | "video" | "audio";
/** The attributes a reported tag's `get` answers for. */
export type ReportedAttribute = "href" | "rel" | "hreflang" | "name" | "content" | "src" | "property" | "srcset" | "poster";

/** A reported start tag's attributes, valid only during the callback. */
export interface TagAttributes {
  /**
   * The first attribute of that name (ASCII letters in any case): its value after the input
   * stream's preprocessing (CR LF and CR to LF, NUL to U+FFFD), character references not decoded.
   */
  get(name: ReportedAttribute): string | undefined;
}

/** What a scan finds beside the reported tags. */
export interface ScanFindings {
  /** The text of each `<script type="application/ld+json">` (type in any case, spaces around it allowed), in document order, as written. */
  jsonLd: readonly string[];
  /** The page's text, when the scan was asked for it. */
  text?: PageText;
}

/** A page's title and main text as the fingerprint reads them, character references not decoded. */
export interface PageText {
  /** The first title element's text (svg's titles are not it); "" when there is none. */
  title: string;
  /** The page the nodes are in. */
  html: string;
  /**
   * The text nodes of the page's main content as [start, end) pairs of `html`, in document order:
   * those inside the first main, else inside the first article, else all outside nav, header, footer
   * and aside; never those inside noscript or template (nor, as everywhere, the text of script, style
   * and the other raw text and RCDATA elements). A tag or comment between two stretches of text
   * separates them. Bounds, not strings: a hostile 5 MiB page of "a<b>" has 1.3 million nodes,
   * 10 MB of bounds where an array of their strings took 87 MB.
   */
  nodes: Int32Array;
}

/** The text nodes of `text` as strings (for tests and tools). */
export function textNodes(text: PageText): string[] {
  const nodes: string[] = [];
  for (let k = 0; k < text.nodes.length; k += 2) nodes.push(text.html.slice(text.nodes[k], text.nodes[k + 1]));
  return nodes;
}

const NO_JSON_LD: readonly string[] = Object.freeze([]);

/** A reported start tag with all its attributes (names lower-cased, the first of a repeated name). */
export interface ScannedTag {
  name: ReportedTag;
  attributes: Map<string, string>;
}

const TAB = 9,
  LF = 10,
  FF = 12,
  CR = 13,
  SPACE = 32,
  BANG = 33,
  DQUOTE = 34,
  SQUOTE = 39,
  DASH = 45,
  SLASH = 47,
  EQUALS = 61,
  GT = 62,
  QMARK = 63;

/** Tab, LF, FF, CR (LF after the input stream's newline normalisation) and space. */
function isSpace(c: number): boolean {
  // One comparison for the characters of names and values (all above the space).
  return c <= SPACE && (c === SPACE || c === LF || c === TAB || c === FF || c === CR);
}

function isAsciiAlpha(c: number): boolean {
  const lower = c | 0x20;
  return lower >= 97 && lower <= 122;
}

// What a tag name means to the scanner, as bit flags.
const REPORTED = 1;
/** RAWTEXT (style, xmp, iframe, noembed, noframes) and RCDATA (textarea, title): text to `</name`. */
const TEXT = 2;
const SCRIPT = 4;
const PLAINTEXT = 8;
const SVG = 16;
const MATH = 32;
/** HTML start tags that end foreign content (13.2.6.5); p and br end it as end tags too. */
const BREAKOUT = 64;
const P_OR_BR = 128;
/** font ends foreign content when it has a color, face or size attribute. */
const FONT = 256;
/** svg's HTML integration points (desc, title, foreignObject). */
const SVG_POINT = 512;
/** MathML's text integration points (mi, mo, mn, ms, mtext). */
const MATH_POINT = 1024;
/** annotation-xml, an HTML integration point when its encoding is text/html or application/xhtml+xml. */
const ANNOTATION = 2048;
/** The elements that decide the page's text regions (main, article, nav, ...): TRACK_CODE gives which. */
const TRACKED = 4096;
/** Tags that load a resource (script src, media sources and posters): reported to a scan asked for resources. */
const RESOURCE = 8192;

const TAG_FLAGS = new Map<string, number>();
function flag(names: string, bits: number): void {
  for (const name of names.split(" ")) TAG_FLAGS.set(name, (TAG_FLAGS.get(name) ?? 0) | bits);
}
flag("a area base link meta img", REPORTED);
flag("style xmp iframe noembed noframes textarea title", TEXT);
flag("script", SCRIPT);
flag("plaintext", PLAINTEXT);
flag("svg", SVG);
flag("math", MATH);
flag(
  "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing menu meta nobr ol p pre " +
    "ruby s small span strong strike sub sup table tt u ul var",
  BREAKOUT,
);
flag("p br", P_OR_BR);
flag("font", FONT);
flag("desc title foreignobject", SVG_POINT);
flag("mi mo mn ms mtext", MATH_POINT);
flag("annotation-xml", ANNOTATION);
flag("main article nav header footer aside noscript template", TRACKED);
flag("script source video audio", RESOURCE);

// The tracked elements' codes (1-8) and what each means for the text regions.
const MAIN = 1,
  ARTICLE = 2,
  NOSCRIPT = 7,
  TEMPLATE = 8;
const TRACK_CODE = new Map([
  ["main", MAIN],
  ["article", ARTICLE],
  ["nav", 3],
  ["header", 4],
  ["footer", 5],
  ["aside", 6],
  ["noscript", NOSCRIPT],
  ["template", TEMPLATE],
]);
/** nav, header, footer and aside: outside the body's main text. */
function isChrome(code: number): boolean {
  return code >= 3 && code <= 6;
}
// The regions a text node is in, as bits.
const IN_MAIN = 1,
  IN_ARTICLE = 2,
  IN_BODY = 4;

// The names above in an open-addressed table keyed by a hash of the name's characters with ASCII
// letters lower-cased, so that a tag name is classified without making a string of it.
const SLOTS = 256;
const slotNames: (string | undefined)[] = new Array(SLOTS).fill(undefined);
const slotFlags = new Int32Array(SLOTS);
const slotCodes = new Uint8Array(SLOTS);
/** The hash step for one character of a name (ASCII letters lower-cased; a false match is ruled out by comparing the name). */
function hashStep(hash: number, c: number): number {
  return (Math.imul(hash, 31) + (c | 0x20)) | 0;
}
for (const [name, bits] of TAG_FLAGS) {
  let hash = 0;
  for (let k = 0; k < name.length; k++) hash = hashStep(hash, name.charCodeAt(k));
  let slot = hash & (SLOTS - 1);
  while (slotNames[slot] !== undefined) slot = (slot + 1) & (SLOTS - 1);
  slotNames[slot] = name;
  slotFlags[slot] = bits;
  slotCodes[slot] = TRACK_CODE.get(name) ?? 0;
}

/** The slot of the tag name html[start, end) whose hash is `hash`, or -1 for a name with no flags. */
function slotOf(html: string, start: number, end: number, hash: number): number {
  for (let slot = hash & (SLOTS - 1); ; slot = (slot + 1) & (SLOTS - 1)) {
    const name = slotNames[slot];
    if (name === undefined) return -1;
    if (name.length === end - start && isWordAt(html, start, name)) return slot;
  }
}

// The attributes recorded for a tag, by index: those reported, then those the namespace rules read.
const ATTRIBUTES = [
  "href",
  "rel",
  "hreflang",
  "name",
  "content",
  "src",
  "property",
  "color",
  "face",
  "size",
  "encoding",
  "type",
  "srcset",
  "poster",
] as const;
const HREF = 0,
  REL = 1,
  HREFLANG = 2,
  NAME = 3,
  CONTENT = 4,
  SRC = 5,
  PROPERTY = 6,
  COLOR = 7,
  FACE = 8,
  SIZE = 9,
  ENCODING = 10,
  TYPE = 11,
  SRCSET = 12,
  POSTER = 13;
const ATTRIBUTE_INDEX: Record<ReportedAttribute, number> = {
  href: HREF,
  rel: REL,
  hreflang: HREFLANG,
  name: NAME,
  content: CONTENT,
  src: SRC,
  property: PROPERTY,
  srcset: SRCSET,
  poster: POSTER,
};

/** Whether html[start, start + word.length) is `word` (lower case) with its ASCII letters in any case. */
function isWordAt(html: string, start: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) {
    const c = html.charCodeAt(start + k);
    const w = word.charCodeAt(k);
    if (c !== w && ((c | 0x20) !== w || w < 97 || w > 122)) return false;
  }
  return true;
}

/** The index in ATTRIBUTES of the attribute name html[start, end), or -1. */
function attributeIndex(html: string, start: number, end: number): number {
  switch (end - start) {
    case 3:
      if (isWordAt(html, start, "rel")) return REL;
      return isWordAt(html, start, "src") ? SRC : -1;
    case 4:
      if (isWordAt(html, start, "href")) return HREF;
      if (isWordAt(html, start, "name")) return NAME;
      if (isWordAt(html, start, "face")) return FACE;
      if (isWordAt(html, start, "size")) return SIZE;
      return isWordAt(html, start, "type") ? TYPE : -1;
    case 5:
      return isWordAt(html, start, "color") ? COLOR : -1;
    case 6:
      if (isWordAt(html, start, "srcset")) return SRCSET;
      return isWordAt(html, start, "poster") ? POSTER : -1;
    case 7:
      return isWordAt(html, start, "content") ? CONTENT : -1;
    case 8:
      if (isWordAt(html, start, "hreflang")) return HREFLANG;
      if (isWordAt(html, start, "property")) return PROPERTY;
      return isWordAt(html, start, "encoding") ? ENCODING : -1;
    default:
      return -1;
  }
}

/** The input stream's preprocessing, for the rare value that needs it: CR LF and CR to LF, NUL to U+FFFD. */
function cleanValue(value: string): string {
  if (value.includes("\r")) value = value.replace(/\r\n?/g, "\n");
  if (value.includes("\0")) value = value.replaceAll("\0", "\uFFFD");
  return value;
}

// Namespaces on the stack, as lol-html's simulation of the tree builder keeps them
// (parser/tree_builder_simulator): svg, math and an entered integration point push one; their end
// tags, an HTML breakout tag in foreign content and </p> or </br> there pop one. One departure, the
// standard's (13.2.6.1 "in body", 13.2.6.5 "any other start tag"): a self-closing <svg/> or <math/>
// opens nothing, where lol-html enters svg for the rest of the page and reads the scripts, styles,
// textareas and titles after it as markup. Where a breakout pops one level the standard pops to the
// nearest HTML context; the two differ only for svg and math nested directly in each other and left
// by a breakout, and lol-html's way is kept there (results identical, see the differential test).
const HTML_NS = 0,
  SVG_NS = 1,
  MATH_NS = 2;

class Scanner implements TagAttributes {
  html = "";
  /** Value bounds of the recorded attributes, [start, end) per ATTRIBUTES index; -1 when absent. */
  readonly bounds = new Int32Array(2 * ATTRIBUTES.length);
  /** All attributes of a reported tag, for scanTags. */
  all: Map<string, string> | null = null;
  selfClosing = false;
  /** Namespaces above the document's HTML; `depth` of them are open. */
  stack = new Uint8Array(16);
  depth = 0;
  /** Characters examined, searches included: linear in the page whatever it holds (tests bound it). */
  work = 0;
  /** What scriptEnd's "-->" searches examined beyond where the scan resumed. */
  lookAhead = 0;
  /** The JSON-LD scripts' texts, as [start, end) pairs. */
  readonly jsonLd: number[] = [];
  /** Whether this scan records the text (PageText). */
  text = false;
  /** The tags whose attributes are recorded, and those reported: RESOURCE's too for a scan asked for resources. */
  recordMask = REPORTED | SCRIPT;
  reportMask = REPORTED;
  /** Text nodes as [start, end) pairs, and the regions (IN_MAIN, IN_ARTICLE, IN_BODY) of each. */
  textBounds = new Int32Array(512);
  textRegions = new Uint8Array(256);
  textCount = 0;
  /** Where the current text node started. */
  textStart = 0;
  titleStart = -1;
  titleEnd = -1;
  /** Tracked elements open (their codes, innermost last), and how many of each code. */
  open = new Uint8Array(16);
  openDepth = 0;
  readonly openCounts = new Int32Array(TRACK_CODE.size + 1);
  /** Open nav, header, footer and aside elements; open noscript and template elements. */
  chrome = 0;
  hidden = 0;
  /** The first main and the first article: 0 not seen, 1 open, 2 closed; and their place in `open`. */
  mainState = 0;
  mainAt = -1;
  articleState = 0;
  articleAt = -1;

  get(name: ReportedAttribute): string | undefined {
    const at = 2 * ATTRIBUTE_INDEX[name];
    const start = this.bounds[at]!;
    return start < 0 ? undefined : cleanValue(this.html.slice(start, this.bounds[at + 1]));
  }

  private has(index: number): boolean {
    return this.bounds[2 * index]! >= 0;
  }

  private get ns(): number {
    return this.depth === 0 ? HTML_NS : this.stack[this.depth - 1]!;
  }

  scan(html: string, report: (name: ReportedTag, attributes: TagAttributes) => void, text: boolean, resources = false): void {
    this.html = html;
    this.recordMask = resources ? REPORTED | SCRIPT | RESOURCE : REPORTED | SCRIPT;
    this.reportMask = resources ? REPORTED | RESOURCE : REPORTED;
    this.depth = 0;
    this.lookAhead = 0;
    this.jsonLd.length = 0;
    this.text = text;
    if (text) this.resetText();
    const n = html.length;
    // Each step examines the page from `i` to where the next starts (searches included); scriptEnd
    // adds what its "-->" search looks at beyond that. Whatever ends the loop (the page's end,
    // plaintext, a tag cut off), the rest was looked at once.
    let work = 0;
    let i = 0;
    while (i < n) {
      const lt = html.indexOf("<", i);
      if (lt < 0) break;
      let next: number;
      const c = html.charCodeAt(lt + 1);
      if (isAsciiAlpha(c)) {
        // A start tag: its name ends at a space, "/" or ">".
        let p = lt + 2;
        let hash = hashStep(0, c);
        for (let d = html.charCodeAt(p); p < n && !endsName(d); d = html.charCodeAt(++p)) hash = hashStep(hash, d);
        const slot = slotOf(html, lt + 1, p, hash);
        const flags = slot < 0 ? 0 : slotFlags[slot]!;
        const foreign = this.depth > 0 && this.ns !== HTML_NS;
        const record = (flags & this.recordMask) !== 0 || (foreign && (flags & (FONT | ANNOTATION)) !== 0);
        if (record) {
          this.bounds.fill(-1);
          if (this.all) this.all = new Map();
        }
        next = this.readAttributes(p, record);
        if (next < 0) {
          if (text) this.endText(lt, n);
          break; // cut off by the end of the page: no tag
        }
        if (flags !== 0) {
          const name = slotNames[slot]!;
          if (flags & this.reportMask) report(name as ReportedTag, this);
          if (flags & (SVG | MATH)) {
            if (!this.selfClosing) this.push(flags & SVG ? SVG_NS : MATH_NS);
          } else if (foreign) {
            this.startTagInForeignContent(flags);
          } else if (flags & TEXT) {
            const start = next;
            next = this.textEnd(next, name);
            if (text && name === "title" && this.titleStart < 0) {
              this.titleStart = start;
              this.titleEnd = next;
            }
          } else if (flags & SCRIPT) {
            const start = next;
            next = this.scriptEnd(next);
            if (this.isJsonLd()) this.jsonLd.push(start, next);
          } else if (flags & PLAINTEXT) {
            if (text) this.endText(lt, next);
            i = next;
            break;
          } else if (text && flags & TRACKED) {
            this.openTracked(slotCodes[slot]!, lt);
          }
        }
      } else if (c === SLASH) {
        const first = html.charCodeAt(lt + 2);
        if (isAsciiAlpha(first)) {
          // An end tag: its attributes are read (a ">" may be quoted in them) and dropped.
          let p = lt + 3;
          let hash = hashStep(0, first);
          for (let d = html.charCodeAt(p); p < n && !endsName(d); d = html.charCodeAt(++p)) hash = hashStep(hash, d);
          const nameEnd = p;
          next = this.readAttributes(p, false);
          if (next < 0) {
            if (text) this.endText(lt, n);
            break;
          }
          if (this.depth > 0 || text) {
            const slot = slotOf(html, lt + 2, nameEnd, hash);
            if (slot >= 0) {
              const flags = slotFlags[slot]!;
              if (this.depth > 0) this.endTag(flags);
              if (text && flags & TRACKED) this.closeTracked(slotCodes[slot]!, lt);
            }
          }
        } else if (first === GT) {
          next = lt + 3; // "</>" is nothing
        } else if (lt + 2 >= n) {
          if (text) this.endText(lt, lt);
          break; // "</" at the end is text
        } else {
          next = bogusCommentEnd(html, lt + 2);
        }
      } else if (c === BANG) {
        next = this.markupDeclarationEnd(lt);
      } else if (c === QMARK) {
        next = bogusCommentEnd(html, lt + 2);
      } else {
        next = lt + 1; // "<" and anything else is text
      }
      // Every token ends the text node before it; a "<" that starts none is text.
      if (text && next !== lt + 1) this.endText(lt, next);
      work += next - i;
      i = next;
    }
    this.work = work + (n - i) + this.lookAhead;
    if (text) this.addText(this.textStart, n);
  }

  /** The text node up to the token at `lt` ends there; the next one starts at `next`. */
  private endText(lt: number, next: number): void {
    this.addText(this.textStart, lt);
    this.textStart = next;
  }

  /** Whether the script start tag just read is JSON-LD: its type, ASCII spaces around it, is application/ld+json in any case. */
  private isJsonLd(): boolean {
    let start = this.bounds[2 * TYPE]!;
    if (start < 0) return false;
    let end = this.bounds[2 * TYPE + 1]!;
    while (start < end && isSpace(this.html.charCodeAt(start))) start++;
    while (end > start && isSpace(this.html.charCodeAt(end - 1))) end--;
    return end - start === 19 && isWordAt(this.html, start, "application/ld+json");
  }

  private resetText(): void {
    this.textCount = this.textStart = 0;
    this.titleStart = this.titleEnd = -1;
    this.openDepth = this.chrome = this.hidden = 0;
    this.openCounts.fill(0);
    this.mainState = this.articleState = 0;
    this.mainAt = this.articleAt = -1;
  }

  /** Records html[start, end) as a text node in the regions open now (none inside noscript or template). */
  private addText(start: number, end: number): void {
    if (end <= start || this.hidden > 0) return;
    const regions = (this.mainState === 1 ? IN_MAIN : 0) | (this.articleState === 1 ? IN_ARTICLE : 0) | (this.chrome === 0 ? IN_BODY : 0);
    if (regions === 0) return;
    const count = this.textCount;
    if (count === this.textRegions.length) {
      const bounds = new Int32Array(4 * count);
      bounds.set(this.textBounds);
      this.textBounds = bounds;
      const regionsGrown = new Uint8Array(2 * count);
      regionsGrown.set(this.textRegions);
      this.textRegions = regionsGrown;
    }
    this.textBounds[2 * count] = start;
    this.textBounds[2 * count + 1] = end;
    this.textRegions[count] = regions;
    this.textCount = count + 1;
  }

  /** A tracked element's start tag at `lt`: the text before it is in the regions open before it. */
  private openTracked(code: number, lt: number): void {
    this.endText(lt, lt);
    if (this.openDepth === this.open.length) {
      const grown = new Uint8Array(2 * this.openDepth);
      grown.set(this.open);
      this.open = grown;
    }
    const at = this.openDepth++;
    this.open[at] = code;
    this.openCounts[code]!++;
    if (code === MAIN && this.mainState === 0) {
      this.mainState = 1;
      this.mainAt = at;
    } else if (code === ARTICLE && this.articleState === 0) {
      this.articleState = 1;
      this.articleAt = at;
    } else if (code === NOSCRIPT || code === TEMPLATE) {
      this.hidden++;
    } else if (isChrome(code)) {
      this.chrome++;
    }
  }

  /** An end tag of a tracked element: closes the latest open one of its name and those opened inside it; nothing when none is open. */
  private closeTracked(code: number, lt: number): void {
    if (this.openCounts[code] === 0) return;
    this.endText(lt, lt);
    for (;;) {
      const at = --this.openDepth;
      const closed = this.open[at]!;
      this.openCounts[closed]!--;
      if (closed === NOSCRIPT || closed === TEMPLATE) this.hidden--;
      else if (isChrome(closed)) this.chrome--;
      if (at === this.mainAt && this.mainState === 1) this.mainState = 2;
      if (at === this.articleAt && this.articleState === 1) this.articleState = 2;
      if (closed === code) return;
    }
  }

  /** What the scan found beside the tags: slices of the page, made once it is read. */
  findings(): ScanFindings {
    const html = this.html;
    const pairs = this.jsonLd;
    let jsonLd = NO_JSON_LD;
    if (pairs.length > 0) {
      const texts: string[] = [];
      for (let k = 0; k < pairs.length; k += 2) texts.push(html.slice(pairs[k], pairs[k + 1]));
      jsonLd = texts;
    }
    if (!this.text) return { jsonLd };
    const region = this.mainState !== 0 ? IN_MAIN : this.articleState !== 0 ? IN_ARTICLE : IN_BODY;
    const bounds = this.textBounds;
    const regions = this.textRegions;
    let count = 0;
    for (let k = 0; k < this.textCount; k++) if (regions[k]! & region) count++;
    const nodes = new Int32Array(2 * count);
    for (let k = 0, at = 0; k < this.textCount; k++) {
      if (regions[k]! & region) {
        nodes[at++] = bounds[2 * k]!;
        nodes[at++] = bounds[2 * k + 1]!;
      }
    }
    const title = this.titleStart < 0 ? "" : html.slice(this.titleStart, this.titleEnd);
    return { jsonLd, text: { title, html, nodes } };
  }

  private push(ns: number): void {
    if (this.depth === this.stack.length) {
      const grown = new Uint8Array(2 * this.depth);
      grown.set(this.stack);
      this.stack = grown;
    }
    this.stack[this.depth++] = ns;
  }

  private startTagInForeignContent(flags: number): void {
    if (flags & BREAKOUT || (flags & FONT && (this.has(COLOR) || this.has(FACE) || this.has(SIZE)))) {
      this.depth--;
      return;
    }
    if (this.selfClosing) return;
    const ns = this.ns;
    if (
      (ns === SVG_NS && flags & SVG_POINT) ||
      (ns === MATH_NS && flags & MATH_POINT) ||
      (ns === MATH_NS && flags & ANNOTATION && this.isHtmlEncoding())
    ) {
      this.push(HTML_NS);
    }
  }

  /** annotation-xml's encoding as lol-html compares it: the value as written, in any case. */
  private isHtmlEncoding(): boolean {
    const start = this.bounds[2 * ENCODING]!;
    if (start < 0) return false;
    const length = this.bounds[2 * ENCODING + 1]! - start;
    return (
      (length === 9 && isWordAt(this.html, start, "text/html")) || (length === 21 && isWordAt(this.html, start, "application/xhtml+xml"))
    );
  }

  /** An end tag while a namespace is open (depth > 0). */
  private endTag(flags: number): void {
    const ns = this.ns;
    if (ns === HTML_NS) {
      // Inside an integration point: its end tag goes back to the namespace around it.
      const outer = this.depth > 1 ? this.stack[this.depth - 2]! : HTML_NS;
      if ((outer === SVG_NS && flags & SVG_POINT) || (outer === MATH_NS && flags & (MATH_POINT | ANNOTATION))) this.depth--;
    } else if ((ns === SVG_NS && flags & SVG) || (ns === MATH_NS && flags & MATH)) {
      this.depth--;
    } else if (flags & P_OR_BR) {
      this.depth--;
    }
  }

  /**
   * Reads the attributes from `p` (just after the tag name) to the tag's ">", recording them when
   * asked; sets selfClosing; returns the index after ">", or -1 when the page ends first.
   */
  private readAttributes(p: number, record: boolean): number {
    const html = this.html;
    const n = html.length;
    this.selfClosing = false;
    for (;;) {
      // Before an attribute name: spaces, and "/" (self-closing only right before ">").
      let c = html.charCodeAt(p);
      for (;;) {
        if (isSpace(c)) c = html.charCodeAt(++p);
        else if (c === SLASH) {
          c = html.charCodeAt(++p);
          if (c === GT) {
            this.selfClosing = true;
            return p + 1;
          }
        } else break;
      }
      if (p >= n) return -1;
      if (c === GT) return p + 1;
      // The name: its first character may be "=", then anything up to a space, "/", ">" or "=".
      const nameStart = p;
      c = html.charCodeAt(++p);
      while (p < n && (c > GT || !(isSpace(c) || c === SLASH || c === GT || c === EQUALS))) c = html.charCodeAt(++p);
      const nameEnd = p;
      while (isSpace(c)) c = html.charCodeAt(++p);
      let valueStart = nameEnd;
      let valueEnd = nameEnd;
      if (c === EQUALS) {
        c = html.charCodeAt(++p);
        while (isSpace(c)) c = html.charCodeAt(++p);
        if (c === DQUOTE || c === SQUOTE) {
          const close = html.indexOf(c === DQUOTE ? '"' : "'", p + 1);
          if (close < 0) return -1;
          valueStart = p + 1;
          valueEnd = close;
          p = close + 1;
        } else if (c !== GT) {
          valueStart = p;
          while (p < n && (c > GT || !(isSpace(c) || c === GT))) c = html.charCodeAt(++p);
          valueEnd = p;
        }
      }
      if (record) this.recordAttribute(nameStart, nameEnd, valueStart, valueEnd);
    }
  }

  private recordAttribute(nameStart: number, nameEnd: number, valueStart: number, valueEnd: number): void {
    const index = attributeIndex(this.html, nameStart, nameEnd);
    if (index >= 0 && this.bounds[2 * index]! < 0) {
      this.bounds[2 * index] = valueStart;
      this.bounds[2 * index + 1] = valueEnd;
    }
    const all = this.all;
    if (all) {
      const name = this.html.slice(nameStart, nameEnd).toLowerCase();
      if (!all.has(name)) all.set(name, cleanValue(this.html.slice(valueStart, valueEnd)));
    }
  }

  /** After `<!` at lt: a comment, a CDATA section (in svg and math), or a bogus comment (doctypes too). */
  private markupDeclarationEnd(lt: number): number {
    const html = this.html;
    if (html.startsWith("--", lt + 2)) return commentEnd(html, lt + 4);
    if (this.depth > 0 && this.ns !== HTML_NS && html.startsWith("[CDATA[", lt + 2)) {
      const close = html.indexOf("]]>", lt + 9);
      return close < 0 ? html.length : close + 3;
    }
    return bogusCommentEnd(html, lt + 2);
  }

  /** Where `</name` followed by a space, "/" or ">" starts, from `p` on (the page's end if never). */
  private textEnd(p: number, name: string): number {
    const html = this.html;
    for (let close = html.indexOf("</", p); close >= 0; close = html.indexOf("</", close + 2)) {
      if (isEndTagOf(html, close, name)) return close;
    }
    return html.length;
  }

  /**
   * Where a script's content ends (13.2.5.4-13.2.5.31, the script data states): at `</script`,
   * except inside "<!--" ... "-->" after a `<script` (double escaped), where `</script` only goes
   * back to the single escape. Each search resumes where the last one stopped, or is kept while
   * still ahead, so the whole is linear in the script.
   */
  private scriptEnd(p: number): number {
    const html = this.html;
    const n = html.length;
    const DATA = 0,
      ESCAPED = 1,
      DOUBLE_ESCAPED = 2;
    let state = DATA;
    let close = -2; // the next "-->" at or after p; -2 before it is searched, -1 when there is none
    for (;;) {
      const lt = html.indexOf("<", p);
      if (state !== DATA) {
        // "-->" ends either escape (the dashes may be those of the "<!--" that started it).
        if (close === -2 || (close >= 0 && close < p)) {
          close = html.indexOf("-->", p);
          this.lookAhead += (close < 0 ? n : close + 3) - p;
        }
        if (close >= 0 && (lt < 0 || close < lt)) {
          state = DATA;
          p = close + 3;
          continue;
        }
      }
      if (lt < 0) return n;
      if (state === DATA) {
        if (html.startsWith("<!--", lt)) {
          state = ESCAPED;
          if (close >= 0 && close < lt + 2) close = -2;
          p = lt + 2;
          continue;
        }
        if (isEndTagOf(html, lt, "script")) return lt;
      } else if (state === ESCAPED) {
        if (isEndTagOf(html, lt, "script")) return lt;
        if (isWordAt(html, lt + 1, "script") && endsName(html.charCodeAt(lt + 7))) state = DOUBLE_ESCAPED;
      } else if (isEndTagOf(html, lt, "script")) {
        state = ESCAPED;
      }
      p = lt + 1;
    }
  }
}

/** A comment's text starts at `p`: "<!-->" and "<!--->" are empty; it ends at "-->" or "--!>" (any dashes before). */
function commentEnd(html: string, p: number): number {
  const n = html.length;
  if (html.charCodeAt(p) === GT) return p + 1;
  if (html.charCodeAt(p) === DASH && html.charCodeAt(p + 1) === GT) return p + 2;
  for (let dashes = html.indexOf("--", p); dashes >= 0; dashes = html.indexOf("--", p)) {
    p = dashes + 2;
    while (p < n && html.charCodeAt(p) === DASH) p++;
    if (html.charCodeAt(p) === GT) return p + 1;
    if (html.charCodeAt(p) === BANG && html.charCodeAt(p + 1) === GT) return p + 2;
  }
  return n;
}

function bogusCommentEnd(html: string, p: number): number {
  const gt = html.indexOf(">", p);
  return gt < 0 ? html.length : gt + 1;
}

/** Ends a tag name (or the name after `</` in raw text): space, "/" or ">". */
function endsName(c: number): boolean {
  // One comparison for a name's letters (all above ">").
  return c <= GT && (isSpace(c) || c === SLASH || c === GT);
}

/** `</name` (any case) followed by a space, "/" or ">" at `at`. */
function isEndTagOf(html: string, at: number, name: string): boolean {
  return html.charCodeAt(at + 1) === SLASH && isWordAt(html, at + 2, name) && endsName(html.charCodeAt(at + 2 + name.length));
}

const scanner = new Scanner();

/** Lets go of the page and of what a hostile page grew (a byte per open svg, math or tracked element; 9 per text node). */
function release(): void {
  scanner.html = "";
  if (scanner.stack.length > 1024) scanner.stack = new Uint8Array(16);
  if (scanner.open.length > 1024) scanner.open = new Uint8Array(16);
  if (scanner.textRegions.length > 4096) {
    scanner.textBounds = new Int32Array(512);
    scanner.textRegions = new Uint8Array(256);
  }
  scanner.jsonLd.length = 0;
}

/**
 * Calls `report` for every a, area, base, link, meta and img start tag of `html`, in document
 * order, with its attributes (valid during the call only), and returns what else the page holds:
 * its JSON-LD, and with `text` its title and main text. Not reentrant: `report` must not scan.
 */
export function readStartTags(
  html: string,
  report: (name: ReportedTag, attributes: TagAttributes) => void,
  text = false,
  /** Also report script, source, video and audio, and record srcset and poster (the link report's resource checks). */
  resources = false,
): ScanFindings {
  scanner.all = null;
  try {
    scanner.scan(html, report, text, resources);
    return scanner.findings();
  } finally {
    release();
  }
}

/** readStartTags with every attribute of each reported tag in a Map (for tests and tools). */
export function scanTags(html: string, report: (tag: ScannedTag) => void): void {
  scanner.all = new Map();
  try {
    scanner.scan(html, (name) => report({ name, attributes: scanner.all! }), false);
  } finally {
    scanner.all = null;
    release();
  }
}

/** Characters the last scan examined (its searches included): the tests' measure of linear work. */
export function lastScanWork(): number {
  return scanner.work;
}
