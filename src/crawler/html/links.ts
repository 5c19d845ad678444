// What one HTML page says: its links to follow, its canonical URL, its robots meta directives, the
// dates it gives itself and, when asked, its fingerprint.
// The tags are found by tag-scanner.ts (the HTML tokenizer's rules, no tree): its cost is linear in
// the page whatever its nesting, where a DOM parser's grows with the square of a hostile page's
// unclosed tags.
import { metaDirectives, mergeDirectives, NO_DIRECTIVES, type Directives } from "./directives.ts";
import { decodeHTMLAttribute } from "entities";
import { readStartTags, type PageText, type ReportedAttribute } from "./tag-scanner.ts";
import { fingerprintOf } from "./fingerprint.ts";
import { jsonLdDateModified, type OwnDates } from "./page-date.ts";
import { LinkBase, normaliseUrl } from "../url/url.ts";
import type { Alternate } from "../output/xml.ts";

/** Images listed per page at most (Google's limit of <image:image> per <url>). */
export const MAX_IMAGES_PER_PAGE = 1_000;
/** Resource URLs read per page at most (the link report's resource checks): a bound on what one hostile page adds. */
export const MAX_RESOURCES_PER_PAGE = 1_000;
/** hreflang alternates listed per page at most: a bound on what one hostile page adds to the sitemap. */
export const MAX_ALTERNATES_PER_PAGE = 1_000;
/** What the sitemap may hold of a URL (sitemaps.org's <loc> limit, used for the extensions too). */
const MAX_EXTENSION_URL_LENGTH = 2_048;
/** xs:language, the type the xhtml schema gives hreflang; "x-default" matches it too. */
const LANGUAGE_TAG = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;

/** What to gather beyond links, canonical and directives: only for the options that ask for it. */
export interface ExtractExtras {
  alternates?: boolean;
  images?: boolean;
  /** The links not followed too (`rel="nofollow"`, or all under a nofollow meta): the link report's referrers. */
  nofollow?: boolean;
  /** The page's fingerprint (fingerprint.ts): its title and main text, hashed. */
  fingerprint?: boolean;
  /** The resources it loads (`resources`): the link report's resource checks. */
  resources?: boolean;
}

export interface PageFacts {
  /** Normalised http(s) URLs to follow, unique, in document order (empty under meta nofollow). */
  links: string[];
  /** More than maxLinks links (or maxLinks invalid ones): the rest were dropped. */
  linksDropped: boolean;
  /**
   * Hrefs that are not a valid URI (the URL parser refuses them, resolved against the base), as
   * written, unique, at most maxLinks; empty under meta nofollow. Links to another scheme
   * (mailto:, javascript:) are valid and not in it: they are not the crawl's to list.
   */
  invalid: string[];
  /** The `<link rel="canonical">` target, normalised; null when absent, invalid or not http(s). */
  canonical: string | null;
  /** `<meta name="robots">` and `<meta name="<productToken>">`. */
  directives: Directives;
  /** `<link rel="alternate" hreflang href>`, absolute http(s), unique; only when asked for. */
  alternates?: Alternate[];
  /** `<img src>`, absolute http(s), unique, at most MAX_IMAGES_PER_PAGE; only when asked for. */
  images?: string[];
  /** Links not followed, normalised, unique, none of them in `links`, at most maxLinks; only when asked for. */
  nofollowLinks?: string[];
  /** The dates the page gives itself (page-date.ts's pageLastmod makes its <lastmod> of them). */
  ownDates: OwnDates;
  /** fingerprintOf the page's title and main text; only when asked for. */
  fingerprint?: string;
  /**
   * `<img src>` and `srcset` URLs, `<link rel="stylesheet" href>`, `<script src>`, `<source src>`
   * and `srcset`, `<video src>` and `poster`, `<audio src>`: absolute http(s), normalised, unique,
   * at most MAX_RESOURCES_PER_PAGE; only when asked for.
   */
  resources?: string[];
}

/** What the tags say, before any URL is resolved: the base may come after the links it applies to. */
export interface Tags {
  baseHref: string | undefined;
  canonicalHref: string | undefined;
  directives: Directives;
  /** Hrefs of the links that may be followed, in document order. */
  hrefs: string[];
  /** hreflang and href as written, when alternates are gathered. */
  alternates?: { hreflang: string; href: string }[];
  /** Distinct srcs as written, when images are gathered (a page may repeat an icon thousands of times). */
  imageSrcs?: Set<string>;
  /** Hrefs of `rel="nofollow"` links, when the links not followed are gathered. */
  nofollowHrefs?: string[];
  ownDates: OwnDates;
  /** The title and main text, when the fingerprint is asked for. */
  text?: PageText;
  /** Distinct resource URLs as written, when resources are gathered. */
  resourceSrcs?: Set<string>;
}

export function extractPage(html: string, pageUrl: string, productToken: string, maxLinks: number, extras: ExtractExtras = {}): PageFacts {
  return factsFromTags(readTags(html, productToken, extras), pageUrl, maxLinks);
}

/** The page's facts from what its tags say: URLs resolved against the document base. */
export function factsFromTags(tags: Tags, pageUrl: string, maxLinks: number): PageFacts {
  // The document base: the first <base href>, itself resolved against the page URL.
  const base = (tags.baseHref !== undefined && normaliseUrl(tags.baseHref, pageUrl)) || pageUrl;
  const canonical = tags.canonicalHref === undefined ? null : normaliseUrl(tags.canonicalHref, base);

  const linkBase = new LinkBase(base); // base is normalised: pageUrl (the crawler's) or normaliseUrl's
  const links = new Set<string>();
  // Hrefs that gave no link: each checked (URL.canParse) and listed as invalid once however often a page repeats it.
  let unresolved: Set<string> | undefined;
  const invalid: string[] = [];
  let linksDropped = false;
  if (!tags.directives.nofollow) {
    for (const href of tags.hrefs) {
      const link = linkBase.resolve(href);
      if (link === null) {
        unresolved ??= new Set();
        if (unresolved.has(href)) continue;
        unresolved.add(href);
        // Another scheme or a user name is a valid URI that is not the crawl's; what the parser refuses is not one.
        if (URL.canParse(href, base)) continue;
        if (invalid.length === maxLinks) linksDropped = true;
        else invalid.push(href);
        continue;
      }
      if (links.has(link)) continue;
      if (links.size === maxLinks) {
        linksDropped = true;
        break;
      }
      links.add(link);
    }
  }
  const facts: PageFacts = { links: [...links], linksDropped, invalid, canonical, directives: tags.directives, ownDates: tags.ownDates };
  if (tags.text) facts.fingerprint = fingerprintOf(tags.text);
  if (tags.alternates) facts.alternates = resolveAlternates(tags.alternates, base);
  if (tags.imageSrcs) facts.images = resolveImages(tags.imageSrcs, base);
  if (tags.resourceSrcs) facts.resources = resolveResources(tags.resourceSrcs, base);
  if (tags.nofollowHrefs) {
    // A nofollow page follows none of its links: they all are the report's nofollow referrers.
    const hrefs = tags.directives.nofollow ? [...tags.hrefs, ...tags.nofollowHrefs] : tags.nofollowHrefs;
    facts.nofollowLinks = hrefs.length === 0 ? [] : resolveNofollow(hrefs, linkBase, maxLinks, links);
  }
  return facts;
}

/** The links of `hrefs` not in `followed`, normalised, unique, at most `maxLinks`. */
function resolveNofollow(hrefs: string[], base: LinkBase, maxLinks: number, followed: Set<string>): string[] {
  const out = new Set<string>();
  for (const href of hrefs) {
    if (out.size === maxLinks) break;
    const link = base.resolve(href);
    if (link !== null && !followed.has(link)) out.add(link);
  }
  return [...out];
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

/** Absolute http(s) resource URLs (data: and other schemes dropped), normalised, unique, in document order. */
function resolveResources(srcs: Set<string>, base: string): string[] {
  const out = new Set<string>();
  for (const src of srcs) {
    if (out.size === MAX_RESOURCES_PER_PAGE) break;
    const trimmed = src.trim();
    // An empty src is no resource (it would resolve to the page itself).
    const url = trimmed === "" ? null : normaliseUrl(trimmed, base);
    if (url !== null && url.length <= MAX_EXTENSION_URL_LENGTH) out.add(url);
  }
  return [...out];
}

/**
 * The URLs of a `srcset` (HTML 4.8.4.3.10, its candidate parsing in short): each candidate is a URL
 * up to the next whitespace (its trailing commas not part of it), then descriptors up to a comma
 * outside parentheses.
 */
export function srcsetUrls(srcset: string): string[] {
  const urls: string[] = [];
  const n = srcset.length;
  let i = 0;
  while (i < n) {
    while (i < n && (SPACE.test(srcset[i]!) || srcset[i] === ",")) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && !SPACE.test(srcset[i]!)) i++;
    let url = srcset.slice(start, i);
    let ended = false;
    if (url.endsWith(",")) {
      url = url.replace(/,+$/, "");
      ended = true;
    }
    if (url !== "") urls.push(url);
    if (ended) continue;
    let depth = 0;
    for (; i < n; i++) {
      const c = srcset[i];
      if (c === "(") depth++;
      else if (c === ")") depth = Math.max(0, depth - 1);
      else if (c === "," && depth === 0) break;
    }
  }
  return urls;
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

/**
 * What the tags of `html` say. A crawler runs no scripts, so a noscript's content is read as the
 * markup it is (the scanner gives noscript no special treatment, as a browser without scripting).
 */
function readTags(html: string, productToken: string, extras: ExtractExtras = {}): Tags {
  const ownDates: OwnDates = {};
  const tags: Tags = { baseHref: undefined, canonicalHref: undefined, directives: NO_DIRECTIVES, hrefs: [], ownDates };
  const alternates: Tags["alternates"] = extras.alternates ? [] : undefined;
  const imageSrcs: Tags["imageSrcs"] = extras.images ? new Set() : undefined;
  const nofollowHrefs: Tags["nofollowHrefs"] = extras.nofollow ? [] : undefined;
  const resourceSrcs: Tags["resourceSrcs"] = extras.resources ? new Set() : undefined;
  // A bound on what is kept before resolution: srcs that resolve alike or to nothing are dropped later.
  const resource = (src: string | undefined) => {
    if (resourceSrcs && src !== undefined && resourceSrcs.size < 4 * MAX_RESOURCES_PER_PAGE) resourceSrcs.add(src);
  };
  const resourceSet = (srcset: string | undefined) => {
    if (resourceSrcs && srcset !== undefined) for (const url of srcsetUrls(srcset)) resource(url);
  };
  if (resourceSrcs) tags.resourceSrcs = resourceSrcs;
  if (alternates) tags.alternates = alternates;
  if (imageSrcs) tags.imageSrcs = imageSrcs;
  if (nofollowHrefs) tags.nofollowHrefs = nofollowHrefs;
  const token = productToken.toLowerCase();
  const findings = readStartTags(
    html,
    (name, attributes) => {
      const attribute = (key: ReportedAttribute) => decoded(attributes.get(key));
      switch (name) {
        case "a":
        case "area": {
          const href = attribute("href");
          if (href === undefined) return;
          const rel = attribute("rel");
          if (rel === undefined || !hasRelToken(rel, "nofollow")) tags.hrefs.push(href);
          else nofollowHrefs?.push(href);
          return;
        }
        case "base":
          tags.baseHref ??= attribute("href");
          return;
        case "link": {
          const [relValue, href] = [attribute("rel"), attribute("href")];
          if (relValue === undefined || href === undefined) return;
          if (tags.canonicalHref === undefined && hasRelToken(relValue, "canonical")) tags.canonicalHref = href;
          if (alternates && hasRelToken(relValue, "alternate")) {
            const hreflang = attribute("hreflang");
            // A bound on what is kept before resolution; duplicates and invalid ones are dropped later.
            if (hreflang !== undefined && alternates.length < 4 * MAX_ALTERNATES_PER_PAGE) alternates.push({ hreflang, href });
          }
          if (resourceSrcs && hasRelToken(relValue, "stylesheet")) resource(href);
          return;
        }
        case "meta": {
          if (ownDates.modifiedTime === undefined) {
            const property = attributes.get("property");
            if (property !== undefined && property.trim().toLowerCase() === "article:modified_time")
              ownDates.modifiedTime = attribute("content");
          }
          const [metaName, content] = [attribute("name"), attribute("content")];
          if (metaName === undefined || content === undefined) return;
          const lower = metaName.trim().toLowerCase();
          if (lower === "robots" || lower === token) tags.directives = mergeDirectives(tags.directives, metaDirectives(content));
          return;
        }
        case "img": {
          const src = attribute("src");
          // A bound on what is kept before resolution: srcs that resolve alike or to nothing are dropped later.
          if (imageSrcs && src !== undefined && imageSrcs.size < 4 * MAX_IMAGES_PER_PAGE) imageSrcs.add(src);
          if (resourceSrcs) {
            resource(src);
            resourceSet(attribute("srcset"));
          }
          return;
        }
        // Reported only to a scan asked for resources (tag-scanner.ts).
        case "source":
          resourceSet(attribute("srcset"));
          resource(attribute("src"));
          return;
        case "video":
          resource(attribute("src"));
          resource(attribute("poster"));
          return;
        case "script":
        case "audio":
          resource(attribute("src"));
      }
    },
    extras.fingerprint === true,
    extras.resources === true,
  );
  const dateModified = jsonLdDateModified(findings.jsonLd);
  if (dateModified !== undefined) ownDates.dateModified = dateModified;
  if (findings.text) tags.text = findings.text;
  return tags;
}

/**
 * An attribute value with its character references decoded (most values have none). Most that have
 * one have "&amp;" alone, between a URL's query parameters: replaced as it is, without the decoder
 * (the bench pages with a two-parameter query on each link: extraction 0.93x).
 */
function decoded(raw: string | undefined): string | undefined {
  if (raw === undefined) return raw;
  let at = raw.indexOf("&");
  if (at < 0) return raw;
  for (; at >= 0; at = raw.indexOf("&", at + 5)) if (!raw.startsWith("&amp;", at)) return decodeHTMLAttribute(raw);
  return raw.replaceAll("&amp;", "&");
}

/** Whether the space-separated `rel` holds `token` (lower case), in any case. */
function hasRelToken(rel: string, token: string): boolean {
  const lower = rel.toLowerCase();
  // Most rel values hold one token or none of interest: no split unless the token is there.
  for (let at = lower.indexOf(token); at >= 0; at = lower.indexOf(token, at + 1)) {
    const end = at + token.length;
    if ((at === 0 || SPACE.test(lower[at - 1]!)) && (end === lower.length || SPACE.test(lower[end]!))) return true;
  }
  return false;
}

const SPACE = /\s/;

/**
 * Decodes an HTML body: a byte order mark wins, then the Content-Type charset, then a
 * `<meta charset>` in the first 1024 bytes, then UTF-8. Unknown labels fall back to UTF-8.
 */
export function decodeHtml(bytes: Uint8Array, headerCharset: string | undefined): string {
  return decoderFor(bomCharset(bytes) ?? headerCharset ?? metaCharset(bytes) ?? "utf-8").decode(bytes);
}

/**
 * A decoder for each label met, made once: a TextDecoder without `stream` keeps nothing between
 * calls, and making one a page (and one for the charset sniff) was 5 µs of decodeHtml's 20 (the
 * bench site's 23 KB pages, one core: 19.9-20.6 µs, 14.5-15.8 with the decoders kept). Keyed by
 * the label as written (TextDecoder reads its case and spaces), a label it does not know with the
 * UTF-8 decoder it falls back to; MAX_DECODERS bounds what a site spelling its charset many ways
 * can make the process keep (the labels a site uses are one or two), labels past it get a decoder
 * of their own.
 */
const decoders = new Map<string, TextDecoder>();
const MAX_DECODERS = 64;
const UTF8_DECODER = new TextDecoder("utf-8");

function decoderFor(label: string): TextDecoder {
  let decoder = decoders.get(label);
  if (decoder === undefined) {
    try {
      // Bun's types list only a few labels; TextDecoder itself knows the WHATWG Encoding set.
      decoder = new TextDecoder(label as ConstructorParameters<typeof TextDecoder>[0]);
    } catch {
      decoder = UTF8_DECODER;
    }
    if (decoders.size < MAX_DECODERS) decoders.set(label, decoder);
  }
  return decoder;
}

function bomCharset(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  return undefined;
}

const LATIN1_DECODER = new TextDecoder("latin1");

function metaCharset(bytes: Uint8Array): string | undefined {
  const head = LATIN1_DECODER.decode(bytes.subarray(0, 1024));
  return /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.-]+)/i.exec(head)?.[1];
}
