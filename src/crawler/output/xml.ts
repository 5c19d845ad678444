// The sitemaps.org 0.9 <urlset> document, with Google's image and xhtml (hreflang) extensions.
// The head, each entry and the tail render separately, so a writer can stream or split them.
import { collector } from "../memory/collector.ts";

/** A `<link rel="alternate" hreflang href>` of a page. */
export interface Alternate {
  /** A language tag (xs:language) or "x-default". */
  hreflang: string;
  /** Normalised absolute URL. */
  href: string;
}

export interface SitemapEntry {
  loc: string;
  /**
   * W3C datetime: the page's own date (html/page-date.ts: article:modified_time, JSON-LD
   * dateModified, then a plausible Last-Modified), or none.
   */
  lastmod?: string;
  /** Only with the alternates option. */
  alternates?: Alternate[];
  /** Normalised absolute image URLs; only with the images option. */
  images?: string[];
}

/** The extensions in use: each declares its namespace in the head only when on. */
export interface SitemapFeatures {
  alternates?: boolean;
  images?: boolean;
  /** How a URL is written: publicUrls(public_origin) puts the crawled origin's URLs on another; none: as crawled. */
  publicUrl?: (url: string) => string;
}

/**
 * `public_origin`: a URL of `crawled` (an origin, `https://staging.example.com`) written on `target`
 * instead, path and query kept; other URLs as they are. Every URL of one origin shares the prefix, so
 * the sitemap's order by loc holds after the change.
 */
export function publicUrls(crawled: string, target: string): (url: string) => string {
  const prefix = `${crawled}/`;
  return (url) => (url.startsWith(prefix) ? target + url.slice(crawled.length) : url);
}

export const SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9";
export const XHTML_NS = "http://www.w3.org/1999/xhtml";
export const IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1";

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
export const URLSET_TAIL = "</urlset>\n";

/** The XML declaration and the <urlset> start tag, with the namespaces of the features in use. */
export function urlsetHead(features: SitemapFeatures = {}): string {
  const xhtml = features.alternates ? ` xmlns:xhtml="${XHTML_NS}"` : "";
  const image = features.images ? ` xmlns:image="${IMAGE_NS}"` : "";
  return `${XML_DECLARATION}<urlset xmlns="${SITEMAP_NS}"${xhtml}${image}>`;
}

/** The sitemap of `entries`, in the order given (crawlSite sorts them by loc). */
export function renderSitemap(entries: SitemapEntry[], features: SitemapFeatures = {}): string {
  return urlsetHead(features) + entries.map((entry) => renderEntry(entry, features.publicUrl)).join("") + URLSET_TAIL;
}

/**
 * One <url>: loc, lastmod, then the extension elements, which the schema's wildcard takes only after
 * the sitemaps.org elements. An entry's alternates and images are rendered when present: the crawl
 * gathers them only with their option on, and the head must then declare their namespaces.
 */
export function renderEntry(entry: SitemapEntry, publicUrl: (url: string) => string = asCrawled): string {
  let xml = `<url><loc>${escapeXml(publicUrl(entry.loc))}</loc>`;
  if (entry.lastmod !== undefined) xml += `<lastmod>${escapeXml(entry.lastmod)}</lastmod>`;
  if (entry.alternates) {
    for (const { hreflang, href } of entry.alternates) {
      xml += `<xhtml:link rel="alternate" hreflang="${escapeXml(hreflang)}" href="${escapeXml(publicUrl(href))}"/>`;
    }
  }
  if (entry.images) {
    for (const image of entry.images) xml += `<image:image><image:loc>${escapeXml(publicUrl(image))}</image:loc></image:image>`;
  }
  return `${xml}</url>`;
}

const asCrawled = (url: string) => url;

export function escapeXml(text: string): string {
  return text.replace(/[&<>'"]/g, (ch) => `&${ESCAPES[ch]};`);
}

const ESCAPES: Record<string, string> = { "&": "amp", "<": "lt", ">": "gt", "'": "apos", '"': "quot" };

/**
 * Sorts by loc (code-unit order) and keeps the first entries that fit in `maxUrls` entries and a
 * `maxBytes` UTF-8 document; `truncated` says whether any were dropped. `xml` is that document:
 * each entry is rendered once, for its size and for the text.
 */
export function fitSitemap(
  entries: SitemapEntry[],
  maxUrls: number,
  maxBytes: number,
  features: SitemapFeatures = {},
): { entries: SitemapEntry[]; truncated: boolean; xml: string } {
  const sorted = [...entries].sort((a, b) => (a.loc < b.loc ? -1 : a.loc > b.loc ? 1 : 0));
  const head = urlsetHead(features);
  // Buffer.byteLength counts UTF-8 bytes without encoding a copy (a 9 MB sitemap made 9 MB of garbage).
  let bytes = Buffer.byteLength(head + URLSET_TAIL, "utf8");
  const parts: string[] = [head];
  for (const entry of sorted) {
    if (parts.length - 1 === maxUrls) break;
    const xml = renderEntry(entry, features.publicUrl);
    bytes += Buffer.byteLength(xml, "utf8");
    if (bytes > maxBytes) break;
    parts.push(xml);
    collector.tick();
  }
  const count = parts.length - 1;
  parts.push(URLSET_TAIL);
  return { entries: sorted.slice(0, count), truncated: count < sorted.length, xml: parts.join("") };
}
