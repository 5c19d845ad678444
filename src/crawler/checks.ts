// The requests of the link report's checks beyond the crawl's own links (links/outside.ts keeps
// their rows): each URL a page links to on another origin, or loads as a resource, is checked once,
// HEAD first, GET when HEAD answers 405 or 501, never followed. The checks run beside the crawl, as
// pages meet their URLs, at most the checks' own politeness face allows at once (the host cap), and
// the crawl waits for the last of them before its report. A resource of the crawl's own origin goes
// through the crawl's own connection (its credentials, its max_concurrency and delay_ms); everything
// else through the network's checks face (net/crawl-fetch.ts), which sends no credentials.
import type { CheckFate, CheckKind, CheckLedger, CheckReport } from "./links/outside.ts";
import { CrawlStopped, createRequester, describeFailure, type HopFetcher, type Requester } from "./net/request.ts";

export interface CheckDeps {
  /** Whether a URL is on the crawl's origin. */
  inScope(url: string): boolean;
  /** The crawl's own fetcher (its credentials and politeness). */
  crawlFetch: HopFetcher;
  /** The checks' face (no credentials beyond the start origin), made on first use. */
  checksFetch: () => { fetch: HopFetcher; maxConcurrency: number };
  userAgent: string;
  requestTimeoutMs: number;
  /** The crawl's stop: a check it cuts short counts as unchecked. */
  stop: AbortSignal;
}

/** Requests every check asks for: any type (a check reads no body). */
const ACCEPT = "*/*";

export class CheckRunner {
  private readonly queue: { kind: CheckKind; url: string }[] = [];
  private active = 0;
  private concurrency = 0;
  private requesters: Record<"crawl" | "checks", { head: Requester; get: Requester }> | null = null;
  private drained: (() => void) | null = null;

  constructor(
    readonly ledger: CheckLedger,
    private readonly deps: CheckDeps,
  ) {
    // A ledger carried on from an earlier attempt: the checks it had not made are made now.
    this.queue.push(...ledger.pending());
  }

  /** A page's link or resource: counted, and checked if it is new and within the cap. */
  meet(kind: CheckKind, url: string, referrer: string): void {
    if (!this.ledger.meet(kind, url, referrer)) return;
    this.queue.push({ kind, url });
    this.pump();
  }

  /** Waits for every check met so far; once the crawl has stopped, those not made count as unchecked. */
  async drain(): Promise<CheckReport> {
    if (this.active > 0 || this.queue.length > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        this.pump();
      });
    }
    return this.ledger.report();
  }

  private pump(): void {
    // Once the crawl has stopped, what is left stays pending in the ledger (counted as unchecked).
    if (this.deps.stop.aborted) this.queue.length = 0;
    if (this.requesters === null && this.queue.length > 0) this.open();
    while (this.active < this.concurrency && this.queue.length > 0) {
      const { kind, url } = this.queue.shift()!;
      this.active++;
      void this.check(kind, url).finally(() => {
        this.active--;
        this.pump();
      });
    }
    if (this.active === 0 && this.queue.length === 0 && this.drained !== null) {
      const drained = this.drained;
      this.drained = null;
      drained();
    }
  }

  private open(): void {
    const { userAgent, requestTimeoutMs, stop } = this.deps;
    const headers = { "User-Agent": userAgent, Accept: ACCEPT };
    const pair = (fetch: HopFetcher) => ({
      head: createRequester((url, init) => fetch(url, { ...init, method: "HEAD" }), headers, requestTimeoutMs, stop),
      get: createRequester(fetch, headers, requestTimeoutMs, stop),
    });
    const checks = this.deps.checksFetch();
    this.concurrency = checks.maxConcurrency;
    this.requesters = { crawl: pair(this.deps.crawlFetch), checks: pair(checks.fetch) };
  }

  private async check(kind: CheckKind, url: string): Promise<void> {
    const { head, get } = this.requesters![kind === "resource" && this.deps.inScope(url) ? "crawl" : "checks"];
    let fate: CheckFate;
    try {
      let status = await head(url, async (res) => res.status);
      // A server that does not do HEAD says so with 405 or 501: the URL itself may be fine.
      if (status === 405 || status === 501) status = await get(url, async (res) => res.status);
      fate = status >= 400 ? { kind: "broken", status, error: `HTTP ${status}` } : { kind: "ok" };
    } catch (err) {
      if (err instanceof CrawlStopped) return;
      fate = { kind: "broken", status: null, error: describeFailure(err) };
    }
    this.ledger.settle(kind, url, fate);
  }
}
