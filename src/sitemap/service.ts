// Binds the crawler to the server's configuration: the address policy, the guarded fetcher and
// the crawl limits. The route sees only `checkTarget` and `crawl`.
import {
  type AllowedTarget,
  type CrawlLimits,
  type CrawlOptions,
  type CrawlResult,
  checkTarget,
  crawlSite,
  type CrawlNetwork,
  createCrawlNetwork,
  defaultCrawlLimits,
  type Renderer,
  type Resolver,
  systemResolver,
  TargetRefusedError,
  type TargetPolicy,
} from "../crawler/index.ts";
import { USER_AGENT } from "../config/version.ts";

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

/** The server's settings this service needs (serve's flags, src/config/config.ts). */
export interface SitemapServiceConfig {
  maxPages: number;
  crawlTimeoutSeconds: number;
  allowPrivateTargets: boolean;
  allowTargets: AllowedTarget[];
}

function crawlLimitsFor(config: Pick<SitemapServiceConfig, "maxPages" | "crawlTimeoutSeconds">): CrawlLimits {
  return { ...defaultCrawlLimits, maxPages: config.maxPages, timeoutMs: config.crawlTimeoutSeconds * 1000 };
}

export function createSitemapService(
  config: SitemapServiceConfig,
  options: { resolve?: Resolver; stopSignal?: AbortSignal; network?: CrawlNetwork; renderer?: Renderer | null } = {},
): SitemapService {
  const policy: TargetPolicy = { allowPrivate: config.allowPrivateTargets, allowTargets: config.allowTargets };
  const resolve = options.resolve ?? systemResolver;
  const limits = crawlLimitsFor(config);
  // The server's one network (shared with jobs, so that every crawl of a host passes one gate);
  // a service made alone (tests) has its own.
  const fetch = options.network ?? createCrawlNetwork({ policy, resolve });
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
      return crawlSite(url, limits, { fetch, now: Date.now, userAgent: USER_AGENT, renderer: options.renderer }, signals, crawlOptions);
    },
  };
}
