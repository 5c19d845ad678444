// The sitemaps.org 0.9 <urlset> document.

export interface SitemapEntry {
  loc: string;
  /** W3C datetime, from the page's Last-Modified. */
  lastmod?: string;
}

const HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">';
const TAIL = "</urlset>\n";
const utf8 = new TextEncoder();

/** The sitemap of `entries`, in the order given (crawlSite sorts them by loc). */
export function renderSitemap(entries: SitemapEntry[]): string {
  return HEAD + entries.map(renderEntry).join("") + TAIL;
}

function renderEntry(entry: SitemapEntry): string {
  const lastmod = entry.lastmod === undefined ? "" : `<lastmod>${escapeXml(entry.lastmod)}</lastmod>`;
  return `<url><loc>${escapeXml(entry.loc)}</loc>${lastmod}</url>`;
}

export function escapeXml(text: string): string {
  return text.replace(/[&<>'"]/g, (ch) => `&${ESCAPES[ch]};`);
}

const ESCAPES: Record<string, string> = { "&": "amp", "<": "lt", ">": "gt", "'": "apos", '"': "quot" };

/**
 * Sorts by loc (code-unit order) and keeps the first entries that fit in `maxUrls` entries and a
 * `maxBytes` UTF-8 document; `truncated` says whether any were dropped.
 */
export function fitSitemap(entries: SitemapEntry[], maxUrls: number, maxBytes: number): { entries: SitemapEntry[]; truncated: boolean } {
  const sorted = [...entries].sort((a, b) => (a.loc < b.loc ? -1 : a.loc > b.loc ? 1 : 0));
  let bytes = utf8.encode(HEAD + TAIL).byteLength;
  let count = 0;
  for (const entry of sorted) {
    if (count === maxUrls) break;
    bytes += utf8.encode(renderEntry(entry)).byteLength;
    if (bytes > maxBytes) break;
    count++;
  }
  return { entries: sorted.slice(0, count), truncated: count < sorted.length };
}
