// One bounded HTTP hop: headers, per-request timeout covering the body read, crawl-wide stop.
import { isSettlingOnAbort, timerDelay, untilAborted } from "./abort.ts";
import type { Answer } from "./answer.ts";
import { discardBody } from "./body.ts";

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
  /** Headers of this request alone (a conditional request's validators). */
  extra?: Record<string, string>,
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
  stop.addEventListener(
    "abort",
    () => {
      for (const ctrl of [...live]) ctrl.abort(stop.reason);
    },
    { once: true },
  );
  return async (url, use, extra) => {
    stop.throwIfAborted();
    const ctrl = new AbortController();
    live.add(ctrl);
    const expire = () => ctrl.abort(new RequestTimedOut());
    let timer = setTimeout(expire, timerDelay(timeoutMs));
    // While the request waits its turn at a polite host, its time limit stands still; it starts
    // afresh when the request goes.
    const queue: RequestQueue = {
      enter: () => clearTimeout(timer),
      leave: () => {
        clearTimeout(timer);
        timer = setTimeout(expire, timerDelay(timeoutMs));
      },
    };
    let res: Answer | undefined;
    try {
      // A normalised URL has no fragment: its path and query run from the first "/" after the authority.
      const target = url.slice(url.indexOf("/", url.indexOf("//") + 2));
      const sent = extra === undefined ? headers : { ...headers, ...extra };
      const fetching = fetch(new URL(url), { signal: ctrl.signal, headers: sent, target, queue });
      res = settles ? await fetching : await untilAborted(fetching, ctrl.signal, discardBody);
      // An answer that came after the abort is dropped (finally) and the abort's reason thrown.
      ctrl.signal.throwIfAborted();
      return await use(res, ctrl.signal);
    } catch (err) {
      // Report our own abort reason, not the fetch implementation's AbortError.
      throw ctrl.signal.aborted ? ctrl.signal.reason : err;
    } finally {
      clearTimeout(timer);
      live.delete(ctrl);
      if (res) discardBody(res);
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
