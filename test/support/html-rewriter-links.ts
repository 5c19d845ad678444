// The tag reading of extractPage as it was before the tag scanner (commit 13625ef,
// src/crawler/html/links.ts): Bun's HTMLRewriter (lol-html) after noscript tags are removed; the
// resolution of links, base, canonical, alternates and images is src/crawler/html/links.ts's own factsFromTags, so
// the comparison is of the readers alone. The reference the scanner's differential tests compare
// PageFacts with; not used by the service.
import { metaDirectives, mergeDirectives, NO_DIRECTIVES } from "../../src/crawler/html/directives.ts";
import { decodeHTMLAttribute } from "entities";
import {
  factsFromTags,
  MAX_ALTERNATES_PER_PAGE,
  MAX_IMAGES_PER_PAGE,
  type ExtractExtras,
  type PageFacts,
  type Tags,
} from "../../src/crawler/html/links.ts";

export function extractPageWithHtmlRewriter(
  html: string,
  pageUrl: string,
  productToken: string,
  maxLinks: number,
  extras: ExtractExtras = {},
): PageFacts {
  // The dates a page gives itself are not compared: the pages compared hold none.
  const tags: Tags = { baseHref: undefined, canonicalHref: undefined, directives: NO_DIRECTIVES, hrefs: [], ownDates: {} };
  if (extras.alternates) tags.alternates = [];
  if (extras.images) tags.imageSrcs = new Set();
  readTags(html, tags, productToken.toLowerCase());
  return factsFromTags(tags, pageUrl, maxLinks);
}

/** A noscript start or end tag (its name ends at a space, "/" or ">"). */
const NOSCRIPT_TAG = /<\/?noscript(?=[\s/>])[^>]*>/gi;

/**
 * Adds what the tags of `html` say to `tags`. Script, style, textarea, title, xmp, iframe, noembed
 * and noframes hold text, not markup. So does noscript for lol-html, which assumes scripting; a
 * crawler runs none (its noscripts are plain elements), so noscript tags are removed first and
 * their content is read as the markup it is, once, in one pass. Gathering a noscript's text to read
 * it again cost a JS object per text chunk (660,000 for a 3.3 MB page of nested noscripts: 74 MB,
 * 256 ms), and renaming the tags left lol-html an open element per nesting level (133 MB).
 */
function readTags(html: string, tags: Tags, productToken: string): void {
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
        const rel = relTokens(attribute(el, "rel")!);
        if (tags.canonicalHref === undefined && rel.includes("canonical")) {
          tags.canonicalHref = attribute(el, "href")!;
        }
        if (tags.alternates && rel.includes("alternate")) {
          const hreflang = attribute(el, "hreflang");
          // A bound on what is kept before resolution; duplicates and invalid ones are dropped later.
          if (hreflang !== null && tags.alternates.length < 4 * MAX_ALTERNATES_PER_PAGE) {
            tags.alternates.push({ hreflang, href: attribute(el, "href")! });
          }
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
  const imageSrcs = tags.imageSrcs;
  if (imageSrcs) {
    rewriter.on("img[src]", {
      element(el) {
        // A bound on what is kept before resolution: srcs that resolve alike or to nothing are dropped later.
        if (imageSrcs.size < 4 * MAX_IMAGES_PER_PAGE) imageSrcs.add(attribute(el, "src")!);
      },
    });
  }
  rewriter.transform(html.replace(NOSCRIPT_TAG, ""));
}

function attribute(el: HTMLRewriterTypes.Element, name: string): string | null {
  const raw = el.getAttribute(name);
  return raw === null ? null : decodeHTMLAttribute(raw);
}

function relTokens(rel: string): string[] {
  return rel.toLowerCase().split(/\s+/);
}
