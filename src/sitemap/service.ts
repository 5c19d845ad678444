// Binds the crawler to the server's configuration: the address policy, the guarded fetcher and
// the crawl limits. The route sees only `checkTarget` and `crawl`.
import type { ServeConfig } from "../config.ts";
import { USER_AGENT } from "../version.ts";
import { checkTarget, systemResolver, type Resolver, type TargetPolicy } from "./address-guard.ts";
import { crawlSite, defaultCrawlLimits, type CrawlLimits, type CrawlResult } from "./crawler.ts";
import { TargetRefusedError } from "./errors.ts";
import { createGuardedFetch } from "./guarded-fetch.ts";

export interface SitemapService {
  checkTarget: (url: URL) => Promise<void>;
  crawl: (url: string, signal: AbortSignal) => Promise<CrawlResult>;
}

export function crawlLimitsFor(config: Pick<ServeConfig, "maxPages" | "crawlTimeoutSeconds">): CrawlLimits {
  return { ...defaultCrawlLimits, maxPages: config.maxPages, timeoutMs: config.crawlTimeoutSeconds * 1000 };
}

export function createSitemapService(
  config: Pick<ServeConfig, "maxPages" | "crawlTimeoutSeconds" | "allowPrivateTargets" | "allowTargets">,
  options: { resolve?: Resolver; stopSignal?: AbortSignal } = {},
): SitemapService {
  const policy: TargetPolicy = { allowPrivate: config.allowPrivateTargets, allowTargets: config.allowTargets };
  const resolve = options.resolve ?? systemResolver;
  const fetch = createGuardedFetch(policy, resolve);
  const limits = crawlLimitsFor(config);
  return {
    async checkTarget(url) {
      try {
        await checkTarget(url, policy, resolve);
      } catch (error) {
        // A refusal answers 400 now; a name that does not resolve is the crawl's 502 to report.
        if (error instanceof TargetRefusedError) throw error;
      }
    },
    crawl(url, signal) {
      const signals = options.stopSignal ? AbortSignal.any([signal, options.stopSignal]) : signal;
      return crawlSite(url, limits, { fetch, now: () => performance.now(), userAgent: USER_AGENT }, signals);
    },
  };
}
