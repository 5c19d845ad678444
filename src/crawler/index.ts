// The crawler's one way in. Routes, jobs and the CLI import from here, never from the files below:
//
//   engine.ts, state.ts, options.ts, auth.ts, limits.ts, errors.ts, exclusions.ts, report.ts, filter.ts,
//   checks.ts (the link report's requests beyond the origin)
//     the crawl itself and its public face
//   net/     every request to a site: address guard, politeness, credentials, HTTP/1.1 client, bounded body reads, redirects
//   html/    links, robots meta, canonical and images read from a page (the tag scanner)
//   robots/  robots.txt, its sitemaps, and the path patterns it shares with include/exclude
//   url/     normalisation and the start URL's checks
//   output/  the sitemap XML and the writer that splits it into files
//   links/   the link report: what a state keeps per URL, and the lists built from it
//
// Arrows point down: the root uses the subfolders; net/ and url/ use nothing else of the crawler.

export { crawlSite, runCrawl } from "./engine.ts";
export type { CrawlDeps, CrawlProgress, CrawlResult, CrawlRun, HopFetcher, RenderReport, Renderer, RunOptions } from "./engine.ts";
export { Browser, findChromium } from "./render/browser.ts";
export { type RenderPhases, renderPage } from "./render/render.ts";
export { CrawlTabs } from "./render/tab.ts";
export { MemoryCrawlState } from "./state.ts";
export {
  NO_HISTORY,
  packLinks,
  type PageHistory,
  type PageKept,
  type PageMemory,
  type StoredPage,
  siteLastmod,
  unpackLinks,
  unpackPage,
  w3cSeconds,
} from "./history.ts";
export { originOf } from "./url/url.ts";
export type { CrawlCounters, CrawlState, FrontierItem, LinkVerdict, PageRecord, RecordResult, ResumePoint } from "./state.ts";
export {
  defaultCrawlOptions,
  hasLinkReport,
  type LinkChecks,
  linkChecksOf,
  LINK_REPORT_FIELDS_MESSAGE,
  LINK_REPORT_MESSAGE,
  MAX_PARAM_NAME_LENGTH,
  MAX_PATTERN_LENGTH,
  MAX_DELAY_MS,
  MAX_PATTERNS,
  RENDER_MODES,
  RENDER_UNAVAILABLE,
  type RenderMode,
  parseCrawlOptions,
  partBaseUrl,
  redactCrawlOptions,
  sitemapFeatures,
  type Directive,
  DIRECTIVES,
  MAX_URLS_PER_FILE,
  type CrawlOptions,
  type ParsedCrawlOptions,
} from "./options.ts";
export {
  AUTH_SHAPE_MESSAGE,
  type CrawlAuth,
  MAX_AUTH_COOKIES,
  MAX_AUTH_HEADERS,
  MAX_AUTH_LENGTH,
  parseCrawlAuth,
  REDACTED,
  redactAuth,
} from "./auth.ts";
export { defaultCrawlLimits, MAX_URL_LENGTH, SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS, type CrawlLimits } from "./limits.ts";
export { CrawlFailedError, crawlErrorAnswer, NothingListedError, TargetRefusedError, type CrawlErrorAnswer } from "./errors.ts";
export {
  EXCLUSION_REASONS,
  emptyExclusionReport,
  INVALID_EXAMPLE_LENGTH,
  MAX_EXAMPLES_PER_REASON,
  recordExclusion,
  type ExclusionReason,
  type ExclusionReport,
} from "./exclusions.ts";
export { crawlReport, type CrawlOutcome, type CrawlReport } from "./report.ts";
export { NO_LINK_FACTS } from "./state.ts";
export {
  addReferrer,
  isReferrerLink,
  type BrokenKind,
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
export { BloomFilter } from "./links/bloom.ts";
export {
  type CheckKind,
  CheckLedger,
  type CheckReport,
  type CheckSnapshot,
  MAX_CHECKED_URLS,
  MAX_COUNTED_UNCHECKED,
} from "./links/outside.ts";
export { cutLinkReport, fullLinkLists, type LinkSource, type ReportLimits, writeLinkLists } from "./links/report.ts";

export {
  checkTarget,
  parseAllowTarget,
  systemResolver,
  type AllowedTarget,
  type Resolver,
  type TargetPolicy,
} from "./net/address-guard.ts";
export { type CrawlConnection, type CrawlNetwork, type CrawlNetworkOptions, createCrawlNetwork } from "./net/crawl-fetch.ts";
export {
  defaultPolitenessConfig,
  type HostCoordinator,
  type HostGrant,
  MAX_CRAWL_DELAY_MS,
  type PolitenessConfig,
  type PolitenessReport,
  quietPoliteness,
} from "./net/politeness.ts";
export { createGuardedFetch, type Send } from "./net/guarded-fetch.ts";
export { INVALID_URL_MESSAGE, parseTargetUrl } from "./url/target-url.ts";
export { writeSitemap, type PartLimits, type SitemapSink, type WrittenSitemap } from "./output/sitemap-writer.ts";
export { publicUrls, type SitemapEntry } from "./output/xml.ts";
export { fingerprintOf } from "./html/fingerprint.ts";
export { collector } from "./memory/collector.ts";
export { pageLastmod, readW3cDate, type OwnDates } from "./html/page-date.ts";
