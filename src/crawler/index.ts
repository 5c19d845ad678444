// The crawler's one way in. Routes, jobs and the CLI import from here, never from the files below:
//
//   engine.ts, state.ts, options.ts, limits.ts, errors.ts, exclusions.ts, report.ts, filter.ts
//     the crawl itself and its public face
//   net/     every request to a site: address guard, HTTP/1.1 client, bounded body reads, redirects
//   html/    links, robots meta, canonical and images read from a page (the tag scanner)
//   robots/  robots.txt, its sitemaps, and the path patterns it shares with include/exclude
//   url/     normalisation and the start URL's checks
//   output/  the sitemap XML and the writer that splits it into files
//   links/   the link report: what a state keeps per URL, and the lists built from it
//
// Arrows point down: the root uses the subfolders; net/ and url/ use nothing else of the crawler.

export { crawlSite, runCrawl } from "./engine.ts";
export type { CrawlDeps, CrawlProgress, CrawlResult, CrawlRun, HopFetcher, RunOptions } from "./engine.ts";
export { MemoryCrawlState } from "./state.ts";
export type { CrawlCounters, CrawlState, FrontierItem, LinkVerdict, PageRecord, RecordResult, ResumePoint } from "./state.ts";
export {
  defaultCrawlOptions,
  MAX_PARAM_NAME_LENGTH,
  MAX_PATTERN_LENGTH,
  MAX_PATTERNS,
  parseCrawlOptions,
  type CrawlOptions,
  type ParsedCrawlOptions,
} from "./options.ts";
export { defaultCrawlLimits, MAX_URL_LENGTH, SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS, type CrawlLimits } from "./limits.ts";
export { CrawlFailedError, crawlErrorAnswer, NothingListedError, TargetRefusedError, type CrawlErrorAnswer } from "./errors.ts";
export {
  EXCLUSION_REASONS,
  emptyExclusionReport,
  MAX_EXAMPLES_PER_REASON,
  recordExclusion,
  type ExclusionReason,
  type ExclusionReport,
} from "./exclusions.ts";
export { crawlReport, type CrawlOutcome, type CrawlReport } from "./report.ts";
export { NO_LINK_FACTS } from "./state.ts";
export {
  addReferrer,
  type BrokenLink,
  type FateRecord,
  type LinkCounts,
  type LinkFacts,
  type LinkFate,
  type LinkLists,
  type LinkReport,
  type LinkRow,
  LISTED,
  MAX_LIST_ENTRIES,
  MAX_REFERRERS,
  mergeReferrers,
  NOT_LINKED,
  type RedirectLink,
  type SitemapError,
  type SitemapSeed,
} from "./links/model.ts";
export { cutLinkReport, fullLinkLists, type LinkSource, type ReportLimits, writeLinkLists } from "./links/report.ts";

export {
  checkTarget,
  parseAllowTarget,
  systemResolver,
  type AllowedTarget,
  type Resolver,
  type TargetPolicy,
} from "./net/address-guard.ts";
export { createCrawlFetch, type CrawlFetchOptions } from "./net/crawl-fetch.ts";
export { createGuardedFetch, type Send } from "./net/guarded-fetch.ts";
export { INVALID_URL_MESSAGE, parseTargetUrl } from "./url/target-url.ts";
export { writeSitemap, type PartLimits, type SitemapSink, type WrittenSitemap } from "./output/sitemap-writer.ts";
export type { SitemapEntry } from "./output/xml.ts";
