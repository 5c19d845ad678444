// The requests of the link report's checks beyond the crawl's own links (links/outside.ts keeps
// their rows): each URL a page links to on another origin, or loads as a resource, is checked once,
// HEAD first, GET when HEAD answers 405 or 501, never followed. The checks run beside the crawl, as
// pages meet their URLs, at most the checks' own politeness face allows at once (the host cap), and
// the crawl waits for the last of them before its report. The checks waiting are queued per origin
// and taken in turn, at most half the slots to one origin: a host that answers slowly, or is paused
// after a 429 (its Retry-After, up to 2 minutes), holds up its own checks, not every other host's
// (one queue let a paused host take every slot). A resource of the crawl's own origin goes
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

interface Check {
  kind: CheckKind;
  url: string;
}

/** One origin's waiting checks, and its checks under way. */
interface OriginQueue {
  origin: string;
  items: Check[];
  /** Items before it are taken. */
  next: number;
  inFlight: number;
  /** In `ready`. */
  ready: boolean;
}

export class CheckRunner {
  private readonly origins = new Map<string, OriginQueue>();
  /** Origins with a waiting check and a slot of their share free, in turn. */
  private ready: OriginQueue[] = [];
  private readyNext = 0;
  private queued = 0;
  private active = 0;
  private concurrency = 0;
  /** Checks of one origin under way at most: half the slots (at least one). */
  private perOrigin = 1;
  private requesters: Record<"crawl" | "checks", { head: Requester; get: Requester }> | null = null;
  private drained: (() => void) | null = null;

  constructor(
    readonly ledger: CheckLedger,
    private readonly deps: CheckDeps,
  ) {
    // A ledger carried on from an earlier attempt: the checks it had not made are made now.
    for (const check of ledger.pending()) this.enqueue(check);
  }

  /** A page's link or resource: counted, and checked if it is new and within the cap. */
  meet(kind: CheckKind, url: string, referrer: string): void {
    if (!this.ledger.meet(kind, url, referrer)) return;
    this.enqueue({ kind, url });
    this.pump();
  }

  private enqueue(check: Check): void {
    // A normalised URL: its origin runs to the first "/" after the authority's "//".
    const origin = check.url.slice(0, check.url.indexOf("/", check.url.indexOf("//") + 2));
    let queue = this.origins.get(origin);
    if (queue === undefined) {
      queue = { origin, items: [], next: 0, inFlight: 0, ready: false };
      this.origins.set(origin, queue);
    }
    queue.items.push(check);
    this.queued++;
    this.makeReady(queue);
  }

  private makeReady(queue: OriginQueue): void {
    if (queue.ready || queue.next === queue.items.length || queue.inFlight >= this.perOrigin) return;
    queue.ready = true;
    this.ready.push(queue);
  }

  /** Waits for every check met so far; once the crawl has stopped, those not made count as unchecked. */
  async drain(): Promise<CheckReport> {
    if (this.active > 0 || this.queued > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        this.pump();
      });
    }
    return this.ledger.report();
  }

  private pump(): void {
    // Once the crawl has stopped, what is left stays pending in the ledger (counted as unchecked).
    if (this.deps.stop.aborted && this.queued > 0) {
      for (const queue of this.origins.values()) {
        queue.items = [];
        queue.next = 0;
      }
      this.origins.clear();
      this.ready = [];
      this.readyNext = 0;
      this.queued = 0;
    }
    if (this.requesters === null && this.queued > 0) this.open();
    while (this.active < this.concurrency && this.readyNext < this.ready.length) {
      const queue = this.ready[this.readyNext++]!;
      queue.ready = false;
      const { kind, url } = queue.items[queue.next++]!;
      this.queued--;
      queue.inFlight++;
      this.active++;
      // Taken in turn: the origin goes to the back of the line if it has more and room for them.
      this.makeReady(queue);
      void this.check(kind, url).finally(() => {
        this.active--;
        queue.inFlight--;
        if (queue.next === queue.items.length) {
          // All taken: its items go (a later URL of the origin starts a new queue once this one is idle).
          queue.items = [];
          queue.next = 0;
          if (queue.inFlight === 0 && this.origins.get(queue.origin) === queue) this.origins.delete(queue.origin);
        } else this.makeReady(queue);
        this.pump();
      });
    }
    if (this.readyNext > 1_024 && this.readyNext * 2 > this.ready.length) {
      this.ready = this.ready.slice(this.readyNext);
      this.readyNext = 0;
    }
    if (this.active === 0 && this.queued === 0 && this.drained !== null) {
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
    this.perOrigin = Math.max(1, Math.floor(this.concurrency / 2));
    // Origins queued before the share was known go by it now.
    for (const queue of this.origins.values()) this.makeReady(queue);
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
