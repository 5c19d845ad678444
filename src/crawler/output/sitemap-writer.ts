// Sorted sitemap entries -> sitemap files: one <urlset> when everything fits the sitemaps.org limits
// of one file (50,000 URLs, 50 MB), else parts of at most that much and a <sitemapindex> over them.
// Streaming: the entries arrive as an (async) iterable and each finished file goes to the caller's
// sink, so memory holds at most two parts, never the whole result (jobs list 1,000,000 URLs).
// Jobs gzip each file into the store; `genapi crawl` writes files beside --output.
import { collector } from "../memory/collector.ts";
import { escapeXml, renderEntry, SITEMAP_NS, URLSET_TAIL, urlsetHead, type SitemapEntry, type SitemapFeatures } from "./xml.ts";

/** sitemaps.org: URLs in one sitemap file. */
export const SITEMAP_MAX_URLS = 50_000;
/** sitemaps.org: bytes of one (uncompressed) sitemap file. */
export const SITEMAP_MAX_BYTES = 52_428_800;

export interface PartLimits {
  urls: number;
  /** UTF-8 bytes of the whole file, head and tail included. */
  bytes: number;
}

export const SITEMAP_FILE_LIMITS: PartLimits = { urls: SITEMAP_MAX_URLS, bytes: SITEMAP_MAX_BYTES };

/**
 * Receives one finished file. `part` 0 is the sitemap itself when the result is not split, or the
 * <sitemapindex> when it is; parts are 1, 2, ... and all arrive before the index.
 */
export type SitemapSink = (part: number, xml: string) => void | Promise<void>;

export interface WriteSitemapOptions {
  /** The extensions in use (their namespaces go in every part's head). */
  features?: SitemapFeatures;
  /** Where part n will be published: the index's <loc>, an absolute URL. */
  partLoc: (part: number) => string;
  sink: SitemapSink;
  limits?: PartLimits;
}

export interface WrittenSitemap {
  urlCount: number;
  /** Part files written; 0 when the result is one <urlset>. */
  parts: number;
}

/** The <sitemapindex> over the given part URLs. */
export function renderSitemapIndex(locs: Iterable<string>): string {
  let items = "";
  for (const loc of locs) items += `<sitemap><loc>${escapeXml(loc)}</loc></sitemap>`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="${SITEMAP_NS}">${items}</sitemapindex>\n`;
}

/**
 * Writes `entries` (already sorted by loc) as sitemap files through `sink`. An empty result is one
 * empty <urlset>. An entry larger than a whole part on its own still gets a part to itself.
 */
export async function writeSitemap(
  entries: Iterable<SitemapEntry> | AsyncIterable<SitemapEntry>,
  options: WriteSitemapOptions,
): Promise<WrittenSitemap> {
  const limits = options.limits ?? SITEMAP_FILE_LIMITS;
  const head = urlsetHead(options.features);
  const frame = Buffer.byteLength(head) + Buffer.byteLength(URLSET_TAIL);
  // The last finished part waits in `held`: only a second part shows that the result is split,
  // which decides whether the first is file 0 or file 1.
  let held: string | null = null;
  let written = 0;
  let pending: string[] = [];
  let pendingBytes = frame;
  let urlCount = 0;
  const finishPart = async () => {
    if (held !== null) await options.sink(++written, held);
    held = head + pending.join("") + URLSET_TAIL;
    pending = [];
    pendingBytes = frame;
  };
  for await (const entry of entries) {
    const xml = renderEntry(entry, options.features?.publicUrl);
    const bytes = Buffer.byteLength(xml);
    if (pending.length === limits.urls || (pending.length > 0 && pendingBytes + bytes > limits.bytes)) await finishPart();
    pending.push(xml);
    pendingBytes += bytes;
    urlCount++;
    collector.tick();
  }
  await finishPart();
  if (written === 0) {
    await options.sink(0, held!);
    return { urlCount, parts: 0 };
  }
  const parts = written + 1;
  await options.sink(parts, held!);
  held = null;
  await options.sink(0, renderSitemapIndex(Array.from({ length: parts }, (_, i) => options.partLoc(i + 1))));
  return { urlCount, parts };
}
