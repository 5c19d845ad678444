// The crawler's tag reading as it was before src/sitemap/tag-scanner.ts: Bun's HTMLRewriter
// (lol-html), with noscript tags removed first (a crawler runs no scripts). Kept as the reference the
// scanner is compared with (test/sitemap/tag-scanner.test.ts), not used by the service.
import { decodeHTMLAttribute } from "entities";
import { metaDirectives, mergeDirectives, NO_DIRECTIVES } from "../../src/sitemap/directives.ts";
import { MAX_ALTERNATES_PER_PAGE, MAX_IMAGES_PER_PAGE, type ExtractExtras, type Tags } from "../../src/sitemap/links.ts";

const NOSCRIPT_TAG = /<\/?noscript(?=[\s/>])[^>]*>/gi;

export function htmlRewriterTags(html: string, productToken: string, extras: ExtractExtras = {}): Tags {
  const tags: Tags = { baseHref: undefined, canonicalHref: undefined, directives: NO_DIRECTIVES, hrefs: [] };
  if (extras.alternates) tags.alternates = [];
  if (extras.images) tags.imageSrcs = new Set();
  const token = productToken.toLowerCase();
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
        if (tags.canonicalHref === undefined && rel.includes("canonical")) tags.canonicalHref = attribute(el, "href")!;
        if (tags.alternates && rel.includes("alternate")) {
          const hreflang = attribute(el, "hreflang");
          if (hreflang !== null && tags.alternates.length < 4 * MAX_ALTERNATES_PER_PAGE) tags.alternates.push({ hreflang, href: attribute(el, "href")! });
        }
      },
    })
    .on("meta[name][content]", {
      element(el) {
        const name = attribute(el, "name")!.trim().toLowerCase();
        if (name === "robots" || name === token) tags.directives = mergeDirectives(tags.directives, metaDirectives(attribute(el, "content")!));
      },
    });
  const imageSrcs = tags.imageSrcs;
  if (imageSrcs) {
    rewriter.on("img[src]", {
      element(el) {
        if (imageSrcs.size < 4 * MAX_IMAGES_PER_PAGE) imageSrcs.add(attribute(el, "src")!);
      },
    });
  }
  rewriter.transform(html.replace(NOSCRIPT_TAG, ""));
  return tags;
}

function attribute(el: HTMLRewriterTypes.Element, name: string): string | null {
  const raw = el.getAttribute(name);
  return raw === null ? null : decodeHTMLAttribute(raw);
}

function relTokens(rel: string): string[] {
  return rel.toLowerCase().split(/\s+/);
}
