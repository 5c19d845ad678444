// How a crawl fails after admission, and the one place that turns it into {status, message}: the
// route answers with it, a job stores it as its `error`, `genapi crawl` prints the message (exit 1).
import { TargetRefusedError } from "./net/address-guard.ts";

export { TargetRefusedError } from "./net/address-guard.ts";

/** The start page could not be crawled (DNS, refused, timeout, non-2xx, not HTML, robots.txt): 502. */
export class CrawlFailedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "CrawlFailedError";
  }
}

/** The crawl ran and found no URL to list: 422, with why (exclusions.ts words it). */
export class NothingListedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "NothingListedError";
  }
}

export interface CrawlErrorAnswer {
  status: 400 | 422 | 502;
  message: string;
}

/**
 * The contract's answer to a failed crawl of `sent` (the URL as the client sent it), or null for an
 * error that is not a crawl outcome (a bug, the store): the caller's 500.
 */
export function crawlErrorAnswer(error: unknown, sent: string): CrawlErrorAnswer | null {
  if (error instanceof TargetRefusedError) return { status: 400, message: error.reason };
  if (error instanceof CrawlFailedError) return { status: 502, message: `Could not crawl ${sent}: ${error.reason}` };
  if (error instanceof NothingListedError) {
    return { status: 422, message: `Could not crawl ${sent}: no indexable page found (${error.reason})` };
  }
  return null;
}
