// One bounded HTTP hop: headers, per-request timeout covering the body read, crawl-wide stop.
import { isSettlingOnAbort, timerDelay, untilAborted } from "./abort.ts";
import type { Answer } from "./answer.ts";
import { discardBody } from "./body.ts";
import type { Validators } from "./http1/request.ts";

/**
 * A request that waits its turn (a polite host's slot or start time) says so, so that its time
 * limit counts its own network time and not the wait: `enter` when it starts to wait, `leave`
 * when it goes.
 */
export interface RequestQueue {
  enter(): void;
  leave(): void;
}

/**
 * One HTTP hop, no redirect following. The real one (guarded-fetch.ts) checks the address.
 * `target` is the request target (path and query) exactly as the URL is listed: the URL parser's
 * serialisation of `url` may differ (it writes a query's "'" as "%27"), and the request must be for
 * the URL robots.txt judged. Without it, the URL's own path and query are sent. A crawl's answers
 * are the client's (an Answer); a Response is one too.
 */
export type HopFetcher<A extends Answer = Answer> = (
  url: URL,
  init: {
    signal: AbortSignal;
    headers: Record<string, string>;
    target?: string;
    queue?: RequestQueue;
    /** GET unless HEAD (the link report's checks of URLs it does not read). */
    method?: "HEAD";
    /** A conditional GET's validators (the crawler's client writes them after the headers). */
    validators?: Validators;
  },
) => Promise<A>;

/**
 * Fetches `url` (a normalised URL, as it is listed) and hands the response to `use` while the
 * request's time limit still runs, so the limit covers the body read; whatever body `use` leaves
 * unread is cancelled afterwards.
 */
export type Requester = <T>(
  url: string,
  use: (res: Answer, signal: AbortSignal) => Promise<T>,
  /** A conditional request's validators: the headers record stays the crawl's one. */
  validators?: Validators,
) => Promise<T>;

/** The request ran past its own time limit. */
export class RequestTimedOut extends Error {
  constructor() {
    super("timed out");
    this.name = "RequestTimedOut";
  }
}

/** The whole crawl stopped: total time budget spent, or the caller aborted. */
export class CrawlStopped extends Error {
  constructor(readonly reason: "timed out" | "aborted") {
    super(reason);
    this.name = "CrawlStopped";
  }
}

export function createRequester(fetch: HopFetcher, headers: Record<string, string>, timeoutMs: number, stop: AbortSignal): Requester {
  // The requests in flight, aborted with the crawl: one listener on `stop` for all of them rather
  // than one added and removed per request.
  const live = new Set<AbortController>();
  // A fetcher whose promise settles as its signal aborts (the crawl's: abort.ts) is not raced.
  const settles = isSettlingOnAbort(fetch);
  const limits = new TimeLimits(timerDelay(timeoutMs));
  stop.addEventListener(
    "abort",
    () => {
      for (const ctrl of [...live]) ctrl.abort(stop.reason);
    },
    { once: true },
  );
  return async (url, use, validators) => {
    stop.throwIfAborted();
    const ctrl = new AbortController();
    live.add(ctrl);
    // While the request waits its turn at a polite host, its time limit stands still; it starts
    // afresh when the request goes.
    const limit = new TimeLimit(limits, ctrl);
    limits.start(limit);
    let res: Answer | undefined;
    try {
      // A normalised URL has no fragment: its path and query run from the first "/" after the authority.
      const target = url.slice(url.indexOf("/", url.indexOf("//") + 2));
      const init: Parameters<HopFetcher>[1] = { signal: ctrl.signal, headers, target, queue: limit };
      if (validators !== undefined) init.validators = validators;
      const fetching = fetch(new URL(url), init);
      res = settles ? await fetching : await untilAborted(fetching, ctrl.signal, discardBody);
      // An answer that came after the abort is dropped (finally) and the abort's reason thrown.
      ctrl.signal.throwIfAborted();
      return await use(res, ctrl.signal);
    } catch (err) {
      // Report our own abort reason, not the fetch implementation's AbortError.
      throw ctrl.signal.aborted ? ctrl.signal.reason : err;
    } finally {
      limit.end();
      live.delete(ctrl);
      if (res) discardBody(res);
    }
  };
}

/** One request's time limit; its queue hooks stop it while the request waits its turn and start it afresh when it goes. */
class TimeLimit implements RequestQueue {
  /** When it expires (performance.now()), while it runs. */
  deadline = 0;
  private ended = false;

  constructor(
    private readonly limits: TimeLimits,
    readonly ctrl: AbortController,
  ) {}

  enter(): void {
    if (!this.ended) this.limits.stop(this);
  }

  leave(): void {
    if (!this.ended) this.limits.start(this);
  }

  end(): void {
    this.ended = true;
    this.limits.stop(this);
  }
}

/**
 * The running time limits of one requester, and one timer for all of them: a timer a request (set,
 * cleared, set again after its turn at a polite host) was 1.0 µs a page of the profile. Every limit
 * is as long (`ms`), so the order they were started in is the order they expire in; the timer is
 * set for the first, and when it fires it aborts those past their deadline and is set for the next.
 * A limit that ends leaves the timer as it is (it finds a later deadline when it fires) unless no
 * limit runs any more: then it is cleared, so that nothing keeps the process alive.
 */
class TimeLimits {
  /** Running limits, oldest deadline first (a Set keeps insertion order). */
  private readonly running = new Set<TimeLimit>();
  private timer: Timer | null = null;

  constructor(private readonly ms: number) {}

  start(limit: TimeLimit): void {
    this.running.delete(limit);
    limit.deadline = performance.now() + this.ms;
    this.running.add(limit);
    if (this.timer === null) this.timer = setTimeout(this.expire, this.ms);
  }

  stop(limit: TimeLimit): void {
    if (!this.running.delete(limit) || this.running.size > 0 || this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
  }

  private readonly expire = (): void => {
    this.timer = null;
    const now = performance.now();
    for (const limit of this.running) {
      if (limit.deadline > now) {
        this.timer = setTimeout(this.expire, Math.max(1, Math.ceil(limit.deadline - now)));
        return;
      }
      this.running.delete(limit);
      limit.ctrl.abort(new RequestTimedOut());
    }
  };
}

/** A short, human reason for a failed request ("timed out", "connection refused", ...). */
export function describeFailure(err: unknown): string {
  if (err instanceof CrawlStopped) return err.reason;
  if (err instanceof RequestTimedOut) return "timed out";
  const code = (err as { code?: unknown } | null)?.code;
  if (code === "ECONNREFUSED" || code === "ConnectionRefused") return "connection refused";
  if (code === "ECONNRESET" || code === "ConnectionClosed" || code === "EPIPE") return "connection reset";
  if (code === "ETIMEDOUT") return "connection timed out";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return "host unreachable";
  if (code === "ENOTFOUND" || code === "DNSException") return "host not found";
  if (err instanceof Error && err.message !== "") return err.message;
  return String(err);
}
