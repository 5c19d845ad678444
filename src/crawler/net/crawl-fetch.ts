// The one network path of a crawl, built the same way by every caller (the API's crawls, jobs and
// `genapi crawl`): the address guard in front of the crawler's HTTP/1.1 client, with one keep-alive
// pool per fetcher. Whatever a request to a site must pass (politeness, credentials) goes here.
import { systemResolver, type Resolver, type TargetPolicy } from "./address-guard.ts";
import { createGuardedFetch } from "./guarded-fetch.ts";
import { createHttpClient } from "./http-client.ts";
import type { HopFetcher } from "./request.ts";

export interface CrawlFetchOptions {
  /** Which private addresses may be reached (none by default; `genapi crawl` allows them all). */
  policy: TargetPolicy;
  resolve?: Resolver;
  /** Requests one crawl runs at once: the idle connections the pool keeps per site. */
  concurrency: number;
}

export function createCrawlFetch(options: CrawlFetchOptions): HopFetcher {
  const client = createHttpClient({ maxIdlePerKey: options.concurrency });
  return createGuardedFetch(options.policy, options.resolve ?? systemResolver, client.send);
}
