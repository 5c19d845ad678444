// extractPage as it was before the tag scanner (commit 13625ef, src/sitemap/links.ts): the tags read
// by Bun's HTMLRewriter (lol-html) after noscript tags are removed, then the same resolution of
// links, base, canonical, alternates and images. The reference the scanner's differential test
// (test/sitemap/tag-scanner.differential.test.ts) compares PageFacts with; not used by the service.
// Only the imports and this comment differ from that commit (decodeHtml, unchanged, is left out).
import { metaDirectives, mergeDirectives, NO_DIRECTIVES, type Directives } from "../../src/sitemap/directives.ts";
import { decodeHTMLAttribute } from "entities";
import { MAX_ALTERNATES_PER_PAGE, MAX_IMAGES_PER_PAGE, type ExtractExtras, type PageFacts } from "../../src/sitemap/links.ts";
import { normaliseLink, normaliseUrl } from "../../src/sitemap/url.ts";
import type { Alternate } from "../../src/sitemap/xml.ts";

/** What the sitemap may hold of a URL (sitemaps.org's <loc> limit, used for the extensions too). */
const MAX_EXTENSION_URL_LENGTH = 2_048;
/** xs:language, the type the xhtml schema gives hreflang; "x-default" matches it too. */
const LANGUAGE_TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;

/** What the tags say, before any URL is resolved: the base may come after the links it applies to. */
interface Tags {
  baseHref: string | undefined;
  canonicalHref: string | undefined;
  directives: Directives;
  /** Hrefs of the links that may be followed, in document order. */
  hrefs: string[];
  /** hreflang and href as written, when alternates are gathered. */
  alternates?: { hreflang: string; href: string }[];
  /** Distinct srcs as written, when images are gathered (a page may repeat an icon thousands of times). */
  imageSrcs?: Set<string>;
}

export function extractPageWithHtmlRewriter(html: string, pageUrl: string, productToken: string, maxLinks: number, extras: ExtractExtras = {}): PageFacts {
  const tags: Tags = { baseHref: undefined, canonicalHref: undefined, directives: NO_DIRECTIVES, hrefs: [] };
  if (extras.alternates) tags.alternates = [];
  if (extras.images) tags.imageSrcs = new Set();
  readTags(html, tags, productToken.toLowerCase());

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
      const link = normaliseLink(href, base); // base is normalised: pageUrl (the crawler's) or normaliseUrl's
      if (link === null || links.has(link)) continue;
      if (links.size === maxLinks) {
        linksDropped = true;
        break;
      }
      links.add(link);
    }
  }
  const facts: PageFacts = { links: [...links], linksDropped, canonical, directives: tags.directives };
  if (tags.alternates) facts.alternates = resolveAlternates(tags.alternates, base);
  if (tags.imageSrcs) facts.images = resolveImages(tags.imageSrcs, base);
  return facts;
}

/** Absolute http(s) hreflang alternates with a valid language tag, the first of each (hreflang, href) pair. */
function resolveAlternates(written: { hreflang: string; href: string }[], base: string): Alternate[] {
  const out: Alternate[] = [];
  const seen = new Set<string>();
  for (const { hreflang, href } of written) {
    if (out.length === MAX_ALTERNATES_PER_PAGE) break;
    const lang = hreflang.trim();
    if (!LANGUAGE_TAG.test(lang)) continue;
    const url = normaliseUrl(href, base);
    if (url === null || url.length > MAX_EXTENSION_URL_LENGTH) continue;
    const key = `${lang.toLowerCase()} ${url}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ hreflang: lang, href: url });
  }
  return out;
}

/** Absolute http(s) image URLs (data: and other schemes dropped), unique, in document order. */
function resolveImages(srcs: Set<string>, base: string): string[] {
  const images = new Set<string>();
  for (const src of srcs) {
    if (images.size === MAX_IMAGES_PER_PAGE) break;
    const url = resolveImage(src.trim(), base);
    if (url !== null && url.length <= MAX_EXTENSION_URL_LENGTH) images.add(url);
  }
  return [...images];
}

/**
 * Sites repeat the same logos and icons on every page, by absolute or root-relative src: their
 * resolution does not depend on the page's path, so it is remembered (a bounded cache, emptied when
 * full) rather than parsed again for each page.
 */
const imageCache = new Map<string, string | null>();
const IMAGE_CACHE_SIZE = 4_096;

function resolveImage(src: string, base: string): string | null {
  let key: string | null = null;
  if (/^https?:\/\//i.test(src)) key = src;
  else if (src.startsWith("/") && !src.startsWith("//")) key = `${base.slice(0, base.indexOf("/", base.indexOf("//") + 2))}${src}`;
  if (key === null) return normaliseUrl(src, base);
  const known = imageCache.get(key);
  if (known !== undefined) return known;
  const url = normaliseUrl(src, base);
  if (imageCache.size === IMAGE_CACHE_SIZE) imageCache.clear();
  imageCache.set(key, url);
  return url;
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
