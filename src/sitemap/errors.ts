// The two ways a crawl request fails after admission, each mapped to one status by the route.

/** The target (or a redirect hop of the start URL) is an address the service must not reach: 400. */
export class TargetRefusedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "TargetRefusedError";
  }
}

/** The start page could not be crawled (DNS, refused, timeout, non-2xx, not HTML, robots.txt): 502. */
export class CrawlFailedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "CrawlFailedError";
  }
}
