// What one HTML page says: its links to follow, its canonical URL and its robots meta directives.
// Read with Bun's HTMLRewriter (lol-html), a streaming tokenizer: its cost is linear in the page,
// where a DOM parser's grows with the square of the unclosed tags of a hostile page.
import { metaDirectives, mergeDirectives, NO_DIRECTIVES, type Directives } from "./directives.ts";
import { decodeHTMLAttribute } from "entities";
import { normaliseUrl } from "./url.ts";

export interface PageFacts {
  /** Normalised http(s) URLs to follow, unique, in document order (empty under meta nofollow). */
  links: string[];
  /** More than maxLinks links: the rest were dropped. */
  linksDropped: boolean;
  /** The `<link rel="canonical">` target, normalised; null when absent, invalid or not http(s). */
  canonical: string | null;
  /** `<meta name="robots">` and `<meta name="<productToken>">`. */
  directives: Directives;
}

/** What the tags say, before any URL is resolved: the base may come after the links it applies to. */
interface Tags {
  baseHref: string | undefined;
  canonicalHref: string | undefined;
  directives: Directives;
  /** Hrefs of the links that may be followed, in document order. */
  hrefs: string[];
}

export function extractPage(html: string, pageUrl: string, productToken: string, maxLinks: number): PageFacts {
  const tags: Tags = { baseHref: undefined, canonicalHref: undefined, directives: NO_DIRECTIVES, hrefs: [] };
  readTags(html, tags, productToken.toLowerCase(), true);

  // The document base: the first <base href>, itself resolved against the page URL.
  const base = (tags.baseHref !== undefined && normaliseUrl(tags.baseHref, pageUrl)) || pageUrl;
  const canonical = tags.canonicalHref === undefined ? null : normaliseUrl(tags.canonicalHref, base);

  const links = new Set<string>();
  const resolved = new Set<string>(); // a repeated href needs no second resolution
  let linksDropped = false;
  if (!tags.directives.nofollow) {
    for (const href of tags.hrefs) {
      if (resolved.has(href)) continue;
      resolved.add(href);
      const link = normaliseUrl(href, base);
      if (link === null || links.has(link)) continue;
      if (links.size === maxLinks) {
        linksDropped = true;
        break;
      }
      links.add(link);
    }
  }
  return { links: [...links], linksDropped, canonical, directives: tags.directives };
}

/**
 * Adds what the tags of `html` say to `tags`. Script, style, textarea, title, xmp, iframe, noembed
 * and noframes hold text, not markup. So does noscript for lol-html, which assumes scripting; a
 * crawler runs none, so a noscript's content is read as markup, once: a noscript within it stays
 * text, else nested noscripts would have their shared content read once per level.
 */
function readTags(html: string, tags: Tags, productToken: string, noscriptIsMarkup: boolean): void {
  const rewriter = new HTMLRewriter()
    .on("a[href], area[href]", {
      element(el) {
        const rel = attribute(el, "rel");
        if (rel === null || !relTokens(rel).includes("nofollow")) tags.hrefs.push(attribute(el, "href")!);
      },
    })
    .on("base[href]", {
      element(el) {
        tags.baseHref ??= attribute(el, "href")!;
      },
    })
    .on("link[rel][href]", {
      element(el) {
        if (tags.canonicalHref === undefined && relTokens(attribute(el, "rel")!).includes("canonical")) {
          tags.canonicalHref = attribute(el, "href")!;
        }
      },
    })
    .on("meta[name][content]", {
      element(el) {
        const name = attribute(el, "name")!.trim().toLowerCase();
        if (name === "robots" || name === productToken) {
          tags.directives = mergeDirectives(tags.directives, metaDirectives(attribute(el, "content")!));
        }
      },
    });
  if (noscriptIsMarkup) {
    let content = "";
    rewriter.on("noscript", {
      text(chunk) {
        content += chunk.text;
        if (!chunk.lastInTextNode) return;
        readTags(content, tags, productToken, false);
        content = "";
      },
    });
  }
  rewriter.transform(html);
}

function attribute(el: HTMLRewriterTypes.Element, name: string): string | null {
  const raw = el.getAttribute(name);
  return raw === null ? null : decodeHTMLAttribute(raw);
}

function relTokens(rel: string): string[] {
  return rel.toLowerCase().split(/\s+/);
}

/**
 * Decodes an HTML body: a byte order mark wins, then the Content-Type charset, then a
 * `<meta charset>` in the first 1024 bytes, then UTF-8. Unknown labels fall back to UTF-8.
 */
export function decodeHtml(bytes: Uint8Array, headerCharset: string | undefined): string {
  const label = bomCharset(bytes) ?? headerCharset ?? metaCharset(bytes) ?? "utf-8";
  let decoder: TextDecoder;
  try {
    // Bun's types list only a few labels; TextDecoder itself knows the WHATWG Encoding set.
    decoder = new TextDecoder(label as ConstructorParameters<typeof TextDecoder>[0]);
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  return decoder.decode(bytes);
}

function bomCharset(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  return undefined;
}

function metaCharset(bytes: Uint8Array): string | undefined {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024));
  return /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.-]+)/i.exec(head)?.[1];
}
