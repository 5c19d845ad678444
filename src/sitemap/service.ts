// Binds the crawler to the server's configuration: the address policy, the guarded fetcher and
// the crawl limits. The route sees only `checkTarget` and `crawl`.
import type { ServeConfig } from "../config.ts";
import { USER_AGENT } from "../version.ts";
import { checkTarget, systemResolver, type Resolver, type TargetPolicy } from "../crawler/net/address-guard.ts";
import type { CrawlOptions } from "../crawler/options.ts";
import { crawlSite, defaultCrawlLimits, type CrawlLimits, type CrawlResult } from "../crawler/engine.ts";
import { TargetRefusedError } from "../crawler/errors.ts";
import { createGuardedFetch } from "../crawler/net/guarded-fetch.ts";
import { createHttpClient } from "../crawler/net/http-client.ts";

/** How long the pre-admission address check waits for DNS; the crawl has its own deadline. */
const DNS_TIMEOUT_MS = 5000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: Timer | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("DNS lookup timed out")), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

export interface SitemapService {
  checkTarget: (url: URL) => Promise<void>;
  /** `options.max_pages` (at most --max-pages, checked by the route) bounds this crawl's pages. */
  crawl: (url: string, signal: AbortSignal, options: CrawlOptions) => Promise<CrawlResult>;
}

function crawlLimitsFor(config: Pick<ServeConfig, "maxPages" | "crawlTimeoutSeconds">): CrawlLimits {
  return { ...defaultCrawlLimits, maxPages: config.maxPages, timeoutMs: config.crawlTimeoutSeconds * 1000 };
}

export function createSitemapService(
  config: Pick<ServeConfig, "maxPages" | "crawlTimeoutSeconds" | "allowPrivateTargets" | "allowTargets">,
  options: { resolve?: Resolver; stopSignal?: AbortSignal } = {},
): SitemapService {
  const policy: TargetPolicy = { allowPrivate: config.allowPrivateTargets, allowTargets: config.allowTargets };
  const resolve = options.resolve ?? systemResolver;
  const limits = crawlLimitsFor(config);
  // One keep-alive pool for every crawl of the server, keeping as many idle connections per site
  // as a crawl runs requests.
  const fetch = createGuardedFetch(policy, resolve, createHttpClient({ maxIdlePerKey: limits.concurrency }).send);
  return {
    async checkTarget(url) {
      try {
        await checkTarget(url, policy, (host) => withTimeout(resolve(host), DNS_TIMEOUT_MS));
      } catch (error) {
        // A refusal answers 400 now; a name that does not resolve (or not in time) is the
        // crawl's 502 to report, once the request has been admitted.
        if (error instanceof TargetRefusedError) throw error;
      }
    },
    crawl(url, signal, crawlOptions) {
      const signals = options.stopSignal ? AbortSignal.any([signal, options.stopSignal]) : signal;
      // Wall-clock time: budgets need only differences, but lastmod is checked against today.
      return crawlSite(url, limits, { fetch, now: Date.now, userAgent: USER_AGENT }, signals, crawlOptions);
    },
  };
}
