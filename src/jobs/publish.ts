// Turns a job's listed entries (in the store, sorted by loc) into its sitemap files, stored
// gzip-compressed: one <urlset> as sitemap.xml, or, past 50,000 URLs or 50 MB, parts of at most
// that much and a <sitemapindex> over them whose <loc>s are where the owner will publish them.
import { escapeXml, renderEntry, SITEMAP_NS, URLSET_TAIL, urlsetHead, type SitemapEntry } from "../sitemap/xml.ts";
import type { JobStore, StoredEntry, StoredJob } from "./job-store.ts";
import type { JobProgress, JobResult } from "./model.ts";

export const MAX_PART_URLS = 50_000;
export const MAX_PART_BYTES = 52_428_800;
/** Entries read from the store at a time: memory stays at one page of entries plus one part. */
const PAGE = 2_000;

export interface PartLimits {
  urls: number;
  bytes: number;
}

export function entryOf(stored: StoredEntry): SitemapEntry {
  const entry: SitemapEntry = { loc: stored.loc };
  if (stored.lastmod !== null) entry.lastmod = stored.lastmod;
  if (stored.extra !== null) Object.assign(entry, JSON.parse(stored.extra));
  return entry;
}

/** The listed entries in loc order, read from the store a page at a time. */
async function* storedEntries(store: JobStore, id: string): AsyncGenerator<SitemapEntry> {
  let after: string | null = null;
  for (;;) {
    const page = await store.entries(id, after, PAGE);
    for (const stored of page) yield entryOf(stored);
    if (page.length < PAGE) return;
    after = page[page.length - 1]!.loc;
  }
}

export function sitemapIndex(locs: string[]): string {
  const items = locs.map((loc) => `<sitemap><loc>${escapeXml(loc)}</loc></sitemap>`).join("");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="${SITEMAP_NS}">${items}</sitemapindex>\n`;
}

/**
 * Writes the job's sitemap files and returns its result, or null when the crawl stored nothing
 * (it never got past its start page).
 */
export async function publishResult(
  store: JobStore,
  job: StoredJob,
  run: { truncated: boolean; progress: JobProgress; now: Date },
  limits: PartLimits = { urls: MAX_PART_URLS, bytes: MAX_PART_BYTES },
): Promise<JobResult | null> {
  const facts = (await store.get(job.id))?.crawl ?? job.crawl;
  if (!facts) return null;
  const head = urlsetHead({ alternates: job.options.alternates, images: job.options.images });
  const frame = Buffer.byteLength(head + URLSET_TAIL);
  // The last completed part waits in `held`: only a second part shows that the result is split.
  let held: string | null = null;
  let written = 0;
  let pending: string[] = [];
  let pendingBytes = frame;
  let count = 0;
  const complete = async () => {
    if (held !== null) await store.putPart(job.id, ++written, Bun.gzipSync(held));
    held = head + pending.join("") + URLSET_TAIL;
    pending = [];
    pendingBytes = frame;
  };
  for await (const entry of storedEntries(store, job.id)) {
    const xml = renderEntry(entry);
    const bytes = Buffer.byteLength(xml);
    if (pending.length === limits.urls || (pending.length > 0 && pendingBytes + bytes > limits.bytes)) await complete();
    pending.push(xml);
    pendingBytes += bytes;
    count++;
  }
  await complete();
  let partCount = 0;
  if (written === 0) {
    await store.putPart(job.id, 0, Bun.gzipSync(held!));
  } else {
    partCount = written + 1;
    await store.putPart(job.id, partCount, Bun.gzipSync(held!));
    const origin = new URL(facts.url).origin;
    const locs = Array.from({ length: partCount }, (_, i) => `${origin}/sitemap-${i + 1}.xml`);
    await store.putPart(job.id, 0, Bun.gzipSync(sitemapIndex(locs)));
  }
  return {
    url: facts.url,
    url_count: count,
    pages_crawled: run.progress.pages_crawled,
    truncated: facts.truncated || run.truncated,
    duration_ms: run.progress.elapsed_ms,
    generated_at: run.now.toISOString(),
    excluded: facts.excluded,
    excluded_examples: facts.excludedExamples,
    sitemap_url: `/api/jobs/${job.id}/sitemap.xml`,
    sitemap_parts: partCount,
  };
}
