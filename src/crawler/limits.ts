// The limits of one crawl: what the server's flags set (pages, time) and what is fixed (request
// time, body size, links per page, redirects, the sitemaps.org bounds of one file).
import { SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS } from "./output/sitemap-writer.ts";
import { MAX_URL_LENGTH } from "./url/url.ts";
import { MAX_CHECKED_URLS } from "./links/outside.ts";

export { SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS } from "./output/sitemap-writer.ts";
export { MAX_URL_LENGTH } from "./url/url.ts";

export interface CrawlLimits {
  /** Page requests per crawl, each redirect hop included, robots.txt excluded. */
  maxPages: number;
  /** Total budget: robots.txt, start page and crawl. */
  timeoutMs: number;
  /** Per request, including the whole body read. */
  requestTimeoutMs: number;
  /** Parallel requests within one crawl. */
  concurrency: number;
  /** Per HTML page, counted on the decoded stream; a larger page is skipped (truncated). */
  maxBodyBytes: number;
  /** Longer links are ignored. */
  maxUrlLength: number;
  /** Distinct links followed per page; the rest are dropped (truncated). */
  maxLinksPerPage: number;
  /** Redirects followed per chain after the start page; a longer chain or a loop is not listed. */
  maxRedirects: number;
  /** sitemaps.org limits of one sitemap file. */
  maxUrls: number;
  maxSitemapBytes: number;
  /** The link report's checks beyond the crawl's links: distinct URLs checked per kind (external, resource); the rest are counted. */
  maxCheckedUrls: number;
}

export const defaultCrawlLimits: CrawlLimits = {
  maxPages: 500,
  timeoutMs: 60_000,
  requestTimeoutMs: 10_000,
  concurrency: 8,
  maxBodyBytes: 5 * 1024 * 1024,
  maxUrlLength: MAX_URL_LENGTH,
  maxLinksPerPage: 10_000,
  maxRedirects: 10,
  maxUrls: SITEMAP_MAX_URLS,
  maxSitemapBytes: SITEMAP_MAX_BYTES,
  maxCheckedUrls: MAX_CHECKED_URLS,
};
