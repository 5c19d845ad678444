// The one network path of a crawl, built the same way by every caller (the API's crawls, jobs and
// `genapi crawl`): the address guard, then the host's politeness, then the crawl's credentials for
// the start origin only (credentials.ts), then the crawler's HTTP/1.1 client with one keep-alive
// pool for the process. Whatever a request to a site must pass goes here.
import { systemResolver, type Resolver, type TargetPolicy } from "./address-guard.ts";
import type { Answer } from "./answer.ts";
import { type CrawlCredentials, withCredentials } from "./credentials.ts";
import { createGuardedFetch } from "./guarded-fetch.ts";
import { createHttpClient } from "./http-client.ts";
import {
  type CrawlPoliteness,
  defaultPolitenessConfig,
  type HostCoordinator,
  Politeness,
  type PolitenessConfig,
  type PolitenessReport,
  quietPoliteness,
} from "./politeness.ts";
import type { HopFetcher } from "./request.ts";

export interface CrawlNetworkOptions {
  /** Which private addresses may be reached (none by default; `genapi crawl` allows them all). */
  policy: TargetPolicy;
  resolve?: Resolver;
  /** Per-host limits (--host-concurrency, --host-delay). */
  politeness?: PolitenessConfig;
  /** The store's host leases, shared by every process on it; none: this process alone. */
  coordinator?: HostCoordinator | null;
  /** Told of every 429 or 503 a crawled site answers. */
  onThrottled?: () => void;
}

/** One crawl's network: its fetcher, its limits, and what politeness did for it. */
export interface CrawlConnection {
  fetch: HopFetcher;
  /** Requests the crawl may have in flight: its max_concurrency, at most the host cap. */
  maxConcurrency: number;
  /** robots.txt's Crawl-delay for a host (seconds, or null): raises the host's interval for every crawl. */
  crawlDelay(host: string, seconds: number | null): void;
  politeness(): PolitenessReport;
  /**
   * A rendered page's sub-request (render/render.ts): through the same guard, politeness and
   * client; to the page's own origin under the crawl's address policy, to other origins only on
   * public addresses, whatever the server allows for crawl targets.
   */
  subFetch(url: URL, init: { headers: Record<string, string>; sameOrigin: boolean; signal: AbortSignal }): Promise<Answer>;
  /**
   * The link report's checks of URLs beyond the crawl's pages (links/outside.ts): the same address
   * guard, client and credentials layer (so the start origin alone gets credentials), each host's
   * own politeness, but a face of its own: the checks' requests neither take the crawl's slots nor
   * wait on its delay_ms, and a host paused by a 429 holds up only the checks (made on first use).
   */
  checks(): { fetch: HopFetcher; maxConcurrency: number };
}

/** One crawl's settings: its own politeness, and its credentials (sent to their origin only, credentials.ts). */
export interface CrawlSettings extends CrawlPoliteness {
  credentials?: CrawlCredentials;
}

export interface CrawlNetwork {
  /** The per-host limits every crawl of this network obeys. */
  readonly config: PolitenessConfig;
  open(settings?: CrawlSettings): CrawlConnection;
}

export function createCrawlNetwork(options: CrawlNetworkOptions): CrawlNetwork {
  const config = options.politeness ?? defaultPolitenessConfig;
  const politeness = new Politeness(config, options.coordinator ?? null, Date.now, options.onThrottled);
  // Idle connections kept per site: as many as a host may have requests in flight.
  const client = createHttpClient({ maxIdlePerKey: config.hostConcurrency });
  const resolve = options.resolve ?? systemResolver;
  return {
    config,
    open(settings = {}) {
      const crawl = politeness.open(settings);
      // The credentials are the last step before the client: nothing after them adds a header.
      // Every request of the crawl goes through it, the browser's too when pages are rendered, so
      // that the start origin's credentials reach it and only it.
      const send = crawl.wrap(settings.credentials ? withCredentials(client.answer, settings.credentials) : client.answer);
      const fetch = createGuardedFetch(options.policy, resolve, send);
      let thirdParty: HopFetcher | undefined;
      let checks: { fetch: HopFetcher; maxConcurrency: number } | undefined;
      return {
        fetch,
        maxConcurrency: crawl.maxConcurrency,
        crawlDelay: (host, seconds) => crawl.crawlDelay(host, seconds),
        politeness: () => crawl.report(),
        subFetch(url, { headers, sameOrigin, signal }) {
          if (sameOrigin) return fetch(url, { headers, signal });
          thirdParty ??= createGuardedFetch(PUBLIC_ONLY, resolve, send);
          return thirdParty(url, { headers, signal });
        },
        checks() {
          if (checks === undefined) {
            const face = politeness.open({ requestTimeoutMs: settings.requestTimeoutMs });
            const checkSend = face.wrap(settings.credentials ? withCredentials(client.answer, settings.credentials) : client.answer);
            checks = { fetch: createGuardedFetch(options.policy, resolve, checkSend), maxConcurrency: face.maxConcurrency };
          }
          return checks;
        },
      };
    },
  };
}

/** Other origins' sub-requests of a rendered page: public addresses only. */
const PUBLIC_ONLY: TargetPolicy = { allowPrivate: false, allowTargets: [] };

/** A connection over a bare fetcher, with no politeness: for tests that script the network. */
export function plainConnection(fetch: HopFetcher, maxConcurrency: number): CrawlConnection {
  return {
    fetch,
    maxConcurrency,
    crawlDelay: () => {},
    politeness: () => quietPoliteness(maxConcurrency),
    subFetch: (url, { headers, signal }) => fetch(url, { headers, signal }),
    checks: () => ({ fetch, maxConcurrency }),
  };
}
