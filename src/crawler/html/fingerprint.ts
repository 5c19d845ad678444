// A page's fingerprint: a hash of its title and the text of its main content (tag-scanner.ts's
// PageText), so that a change anywhere else (a footer's year, a script's nonce, an ad slot outside
// the main content, markup or whitespace) leaves it as it was.
//
// The text is canonical before it is hashed: each text node and the title with its character
// references decoded, ASCII whitespace (the HTML standard's: tab, LF, FF, CR, space; not U+00A0,
// which a browser does not collapse either) trimmed at both ends and collapsed to one space inside,
// empty nodes dropped. The hash is XXH3's 64-bit one (a fixed, published algorithm, so a stored
// fingerprint keeps its meaning across Bun versions, where Bun.hash's default makes no such
// promise), chained node to node through its seed: the title, then each node with the hash so far as
// seed.
// 64 bits as 16 hex digits: a site's store keeps one per URL, compared only with that URL's last
// one, so a change passes unseen with probability 2^-64.
//
// Measured (scripts/bench/probes/fingerprint-cost.ts) on the bench site's 23 KB pages (about 21 KB of main text in 77 nodes, 39 of them not
// whitespace only), CPU µs a page: joining the nodes and collapsing with `replace(/\s+/g, " ")` 85;
// with a regular expression that matches only the runs to change 31; a JavaScript loop hashing
// character by character 43; testing each node with one regular expression for what to collapse
// 17.7. Each native pass over the text costs 2.5-3.6 (XXH3 chained 3.6, XXH64 5.5, one `includes`
// per node 2.5-2.9), so what a node may need is looked for once in the whole stretch of the nodes
// first, and a node is searched, collapsed or decoded only for what the stretch holds; nodes are
// never joined (a join costs 6-8). fingerprintOf: 8.3 a page (9.9 with every search per node); the
// scanner's text mode adds 0.6 to its 8.
import { decodeHTML } from "entities";
import type { PageText } from "./tag-scanner.ts";

/** The fingerprint of a page's text: 16 lower-case hex digits. */
export function fingerprintOf(text: PageText): string {
  let hash = Bun.hash.xxHash3(canonical(text.title));
  const { html, nodes } = text;
  if (nodes.length === 0) return hex(hash);
  // What is looked for in each node is first looked for once in the whole stretch of the nodes: a
  // search of one long string is cheaper than one of each node, and most pages lack most of it.
  const stretch = html.slice(nodes[0], nodes[nodes.length - 1]);
  const look: Look = {
    references: stretch.includes("&"),
    doubleSpaces: stretch.includes("  "),
    newlines: stretch.includes("\n"),
    rareSpaces: stretch.includes("\t") || stretch.includes("\r") || stretch.includes("\f"),
  };
  for (let k = 0; k < nodes.length; k += 2) {
    const node = canonicalRange(html, nodes[k]!, nodes[k + 1]!, look);
    if (node !== "") hash = Bun.hash.xxHash3(node, hash);
  }
  return hex(hash);
}

function hex(hash: bigint): string {
  return hash.toString(16).padStart(16, "0");
}

/** A text node or title as the fingerprint reads it: references decoded, ASCII whitespace trimmed and collapsed. */
export function canonical(raw: string): string {
  return canonicalRange(raw, 0, raw.length, LOOK_FOR_ALL);
}

/** What may be in a node: "&", two spaces, LF, and tab, CR or FF. */
interface Look {
  references: boolean;
  doubleSpaces: boolean;
  newlines: boolean;
  rareSpaces: boolean;
}
const LOOK_FOR_ALL: Look = { references: true, doubleSpaces: true, newlines: true, rareSpaces: true };

/** canonical(html.slice(start, end)), with no slice for a node of whitespace only, and no search for what `look` rules out. */
function canonicalRange(html: string, start: number, end: number, look: Look): string {
  while (start < end && isSpace(html.charCodeAt(start))) start++;
  while (end > start && isSpace(html.charCodeAt(end - 1))) end--;
  if (start === end) return "";
  const text = html.slice(start, end);
  // A reference may stand for whitespace (&#10;, &Tab;): the decoded text is read again in full.
  if (look.references && text.includes("&")) return collapsed(decodeHTML(text));
  const collapse =
    (look.doubleSpaces && text.includes("  ")) ||
    (look.newlines && text.includes("\n")) ||
    (look.rareSpaces && (text.includes("\t") || text.includes("\r") || text.includes("\f")));
  return collapse ? text.replace(SPACES, " ") : text;
}

const SPACES = /[\t\n\f\r ]+/g;

function collapsed(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end).replace(SPACES, " ");
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13 || c === 12;
}
