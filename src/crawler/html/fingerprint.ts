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
// Measured on the bench site's 23 KB pages (about 20 KB of main text in 60 nodes), CPU µs a page:
// joining the nodes and collapsing with `replace(/\s+/g, " ")` 85; with a regular expression that
// matches only runs to change 31; a JavaScript loop hashing character by character 43; slicing each
// node and hashing it natively 7.3. So a node is collapsed only when a native search finds something
// to collapse, and is never joined to the others. Per page, the 77 nodes' hashes cost 4.7 with
// XXH3, 5.5 with XXH64; testing each node with one regular expression for what to collapse 17.7,
// with five `includes` 5.1.
import { decodeHTML } from "entities";
import type { PageText } from "./tag-scanner.ts";

/** The fingerprint of a page's text: 16 lower-case hex digits. */
export function fingerprintOf(text: PageText): string {
  let hash = Bun.hash.xxHash3(canonical(text.title));
  const { html, nodes } = text;
  if (nodes.length === 0) return hex(hash);
  // What is rare in a page's text is looked for once in the whole stretch of the nodes, not in each.
  const stretch = html.slice(nodes[0], nodes[nodes.length - 1]);
  const references = stretch.includes("&");
  const rareSpaces = stretch.includes("\t") || stretch.includes("\r") || stretch.includes("\f");
  for (let k = 0; k < nodes.length; k += 2) {
    const node = canonicalRange(html, nodes[k]!, nodes[k + 1]!, references, rareSpaces);
    if (node !== "") hash = Bun.hash.xxHash3(node, hash);
  }
  return hex(hash);
}

function hex(hash: bigint): string {
  return hash.toString(16).padStart(16, "0");
}

/** A text node or title as the fingerprint reads it: references decoded, ASCII whitespace trimmed and collapsed. */
export function canonical(raw: string): string {
  return canonicalRange(raw, 0, raw.length, true, true);
}

/**
 * canonical(html.slice(start, end)), with no slice for a node of whitespace only, and no search for
 * what the caller knows is not there (`references`: "&"; `rareSpaces`: tab, CR, FF).
 */
function canonicalRange(html: string, start: number, end: number, references: boolean, rareSpaces: boolean): string {
  while (start < end && isSpace(html.charCodeAt(start))) start++;
  while (end > start && isSpace(html.charCodeAt(end - 1))) end--;
  if (start === end) return "";
  const text = html.slice(start, end);
  // A reference may stand for whitespace (&#10;, &Tab;): the decoded text is read again in full.
  if (references && text.includes("&")) return collapsed(decodeHTML(text));
  const collapse =
    text.includes("  ") || text.includes("\n") || (rareSpaces && (text.includes("\t") || text.includes("\r") || text.includes("\f")));
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
