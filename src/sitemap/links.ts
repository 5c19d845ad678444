// What one HTML page says: its links to follow, its canonical URL and its robots meta directives.
import { parse } from "node-html-parser";
import { metaDirectives, mergeDirectives, NO_DIRECTIVES, type Directives } from "./directives.ts";
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

// Raw-text elements whose content is not markup: a "<a href>" inside them is not a link.
const RAW_TEXT = { script: false, style: false, textarea: false, title: false, xmp: false };

export function extractPage(html: string, pageUrl: string, productToken: string, maxLinks: number): PageFacts {
  const root = parse(html, { comment: false, blockTextElements: RAW_TEXT });

  let directives = NO_DIRECTIVES;
  for (const meta of root.querySelectorAll("meta[name][content]")) {
    const name = meta.getAttribute("name")!.trim().toLowerCase();
    if (name === "robots" || name === productToken.toLowerCase()) {
      directives = mergeDirectives(directives, metaDirectives(meta.getAttribute("content")!));
    }
  }

  // The document base: the first <base href>, itself resolved against the page URL.
  const baseHref = root.querySelector("base[href]")?.getAttribute("href");
  const base = (baseHref !== undefined && normaliseUrl(baseHref, pageUrl)) || pageUrl;

  const canonicalHref = root
    .querySelectorAll("link[rel][href]")
    .find((link) => relTokens(link.getAttribute("rel")!).includes("canonical"))
    ?.getAttribute("href");
  const canonical = canonicalHref === undefined ? null : normaliseUrl(canonicalHref, base);

  const links = new Set<string>();
  let linksDropped = false;
  if (!directives.nofollow) {
    for (const anchor of root.querySelectorAll("a[href], area[href]")) {
      if (relTokens(anchor.getAttribute("rel") ?? "").includes("nofollow")) continue;
      const link = normaliseUrl(anchor.getAttribute("href")!, base);
      if (link === null || links.has(link)) continue;
      if (links.size === maxLinks) {
        linksDropped = true;
        break;
      }
      links.add(link);
    }
  }
  return { links: [...links], linksDropped, canonical, directives };
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
