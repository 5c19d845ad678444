// Turns a job's listed entries (in the store, sorted by loc) into its sitemap files with the shared
// sitemap writer, each stored gzip-compressed: one <urlset> as sitemap.xml, or, past 50,000 URLs
// or 50 MB, parts and a <sitemapindex> whose <loc>s are where the owner will publish them. With
// link_report, the link report's full lists too, as links.json (the result holds their counts).
import {
  type CheckReport,
  crawlReport,
  defaultCrawlLimits,
  type LinkCounts,
  type LinkSource,
  type PartLimits,
  type PolitenessReport,
  type RenderReport,
  type SitemapEntry,
  writeLinkLists,
  writeSitemap,
  defaultCrawlOptions,
  partBaseUrl,
  SITEMAP_MAX_BYTES,
  sitemapFeatures,
  collector,
} from "../crawler/index.ts";
import { type JobCrawlState, type JobFiles, type JobQueue, LINKS_PART, type StoredEntry, type StoredJob } from "./job-store.ts";
import type { JobProgress, JobResult } from "./model.ts";

/** Entries read from the store at a time: memory holds one page of entries plus at most two parts. */
const PAGE = 2_000;

export function entryOf(stored: StoredEntry): SitemapEntry {
  const entry: SitemapEntry = { loc: stored.loc };
  if (stored.lastmod !== null) entry.lastmod = stored.lastmod;
  if (stored.extra !== null) Object.assign(entry, JSON.parse(stored.extra));
  return entry;
}

/** Part n's file name: sitemap-<n>.xml, or sitemap-<n>.xml.gz with gzip_files. */
export function partName(n: number, gzipped: boolean): string {
  return `sitemap-${n}.xml${gzipped ? ".gz" : ""}`;
}

/** The part number a file name asks for (`sitemap-<n>.xml`, or `.xml.gz` for a job with gzip_files), or null. */
export function partNumber(name: string, gzipped: boolean): number | null {
  const n = (gzipped ? /^sitemap-([1-9]\d{0,6})\.xml\.gz$/ : /^sitemap-([1-9]\d{0,6})\.xml$/).exec(name)?.[1];
  return n === undefined ? null : Number(n);
}

/** The listed entries in loc order, read from the store a page at a time. */
export async function* storedEntries(store: Pick<JobCrawlState, "entries">, id: string): AsyncGenerator<SitemapEntry> {
  let after: string | null = null;
  for (;;) {
    const page = await store.entries(id, after, PAGE);
    for (const stored of page) yield entryOf(stored);
    if (page.length < PAGE) return;
    after = page[page.length - 1]!.loc;
  }
}

/** The job's link report rows in the store, as the crawler's report builder reads them. */
export function storeLinkSource(store: Pick<JobCrawlState, "linkRows" | "linkFates">, id: string): LinkSource {
  return {
    linked: (after, limit) => store.linkRows(id, "linked", after, limit),
    fates: (urls) => store.linkFates(id, [...urls]),
    sitemapRows: (after, limit) => store.linkRows(id, "sitemap", after, limit),
  };
}

/**
 * Writes links.json: the full lists, read from job_links a page at a time and gzip-compressed as
 * they are written, so that memory holds a page of rows and the compressed file, never the text.
 */
async function publishLinks(store: JobCrawlState & JobFiles, id: string, checks: CheckReport | undefined): Promise<LinkCounts> {
  const gzip = new CompressionStream("gzip");
  const writer = gzip.writable.getWriter();
  const compressed = new Response(gzip.readable).bytes();
  const encoder = new TextEncoder();
  let pending = "";
  const counts = await writeLinkLists(
    storeLinkSource(store, id),
    { maxRedirects: defaultCrawlLimits.maxRedirects },
    async (text) => {
      pending += text;
      if (pending.length >= 64 * 1024) {
        await writer.write(encoder.encode(pending));
        pending = "";
      }
    },
    checks,
  );
  await writer.write(encoder.encode(pending));
  await writer.close();
  await store.putPart(id, LINKS_PART, await compressed);
  return counts;
}

/**
 * Writes the job's sitemap files and returns its result, or null when the crawl stored nothing
 * (it never got past its start page).
 */
export async function publishResult(
  store: JobCrawlState & JobFiles & Pick<JobQueue, "get">,
  job: StoredJob,
  run: {
    truncated: boolean;
    progress: JobProgress;
    now: Date;
    politeness: PolitenessReport;
    render: RenderReport;
    /** link_report's checks beyond the crawl's links, as this process's crawl found them (src/crawler/links/outside.ts). */
    checks?: CheckReport;
  },
  limits?: PartLimits,
): Promise<JobResult | null> {
  const facts = (await store.get(job.id))?.crawl ?? job.crawl;
  if (!facts) return null;
  // A job stored before the publishing options existed has none of them: the defaults.
  const options = { ...defaultCrawlOptions(job.options.max_pages), ...job.options };
  const base = partBaseUrl(options, facts.url);
  const written = await writeSitemap(storedEntries(store, job.id), {
    features: sitemapFeatures(options, facts.url),
    partLoc: (n) => `${base}${partName(n, options.gzip_files)}`,
    sink: async (n, xml) => {
      await store.putPart(job.id, n, Bun.gzipSync(xml));
      // Each part leaves megabytes of strings behind; collected lazily they raised a
      // 1,000,000-URL job's peak RSS from 190 to 260 MB while it published its 20 parts: a
      // collection after a part when the process has grown.
      collector.check();
    },
    limits: limits ?? { urls: options.max_urls_per_file, bytes: SITEMAP_MAX_BYTES },
  });
  const links = job.options.link_report ? await publishLinks(store, job.id, run.checks) : undefined;
  const report = crawlReport(
    {
      url: facts.url,
      urlCount: written.urlCount,
      pagesCrawled: run.progress.pages_crawled,
      truncated: facts.truncated || run.truncated,
      durationMs: run.progress.elapsed_ms,
      exclusions: { excluded: facts.excluded, excluded_examples: facts.excludedExamples },
      politeness: run.politeness,
      render: run.render,
      links,
    },
    run.now,
  );
  const { links: _cut, ...plain } = report;
  return { ...plain, ...(links && { links }), sitemap_url: `/api/jobs/${job.id}/sitemap.xml`, sitemap_parts: written.parts };
}
