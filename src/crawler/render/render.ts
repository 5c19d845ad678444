// One page rendered in the browser, every request of it answered by genapi. The page opens in a
// fresh tab (tab.ts: a browser context of its own, no cookie, storage or cache shared with
// anything else, set up before the page has it, possibly opened ahead while other pages rendered,
// and closed after the page: never used twice), the Fetch domain pauses each request of the page, of the frames and workers it starts, and of the shared workers
// of its context (attached at the browser's level, Browser.launch: their fetches met the proxy
// before), before any DNS lookup or connection, and each is answered here:
// - the document itself with the bytes the crawl already fetched (no second request): the first
//   document request of the page's main frame, however the browser spells its URL (it encodes a
//   query's `'` as %27, which the crawl keeps as written: matched by URL, such a page was fetched twice);
// - other GET/HEAD requests through the crawl's network path: the address guard with its own DNS
//   answer, politeness, the HTTP client's TLS checks and size caps; the page's own origin as the
//   crawl's policy allows, other origins only on public addresses; at most MAX_SUBREQUESTS;
// - anything else (POST and other methods, beacons, forms, non-http schemes, the 101st request)
//   fails. Service workers are not registered and downloads are denied. WebSockets are not paused
//   by the Fetch domain: they meet the browser's refusing proxy (browser.ts).
// Every request genapi answers carries the browser's User-Agent with genapi's product token added
// (`... HeadlessChrome/156.0.0.0 Safari/537.36 genapi/<version>`), set in the page and its workers
// and on each request handed to the network.
// The DOM is read once the load event has fired and the page's own requests (not another tab's)
// have been quiet for 500 ms, or when the render timeout strikes, whichever comes first; the wait
// wakes on the page's events and at that moment, not on a 50 ms poll. It is measured in the page before it is
// sent: a DOM over the crawl's page cap is not transferred (a 20 MB text DOM read back took the
// process from 19 to 123 MB; the issue measured a 50 MB one from 60 to 268 MB). A page whose DOM
// cannot be read, or whose tab fails, is a RenderError.
import type { Protocol } from "devtools-protocol";
import type { Answer, AnswerFields } from "../net/answer.ts";
import { discardBody, readCapped } from "../net/body.ts";
import { type Browser, BrowserStartError } from "./browser.ts";
import { type CrawlTabs, FreshTab } from "./tab.ts";

export const MAX_SUBREQUESTS = 100;
/** Quiet time after the load event before the DOM is read. */
export const IDLE_MS = 500;
/** Quiet time after which the next pages' tabs are opened (tab.ts). */
const AHEAD_AFTER_MS = 100;
/** A sub-request's body is read up to this (the page's own cap). */
const MAX_SUBREQUEST_BYTES = 5 * 1024 * 1024;

/** A sub-request on its way out: what the page asked, answered by the crawl's network. */
export type SubFetch = (
  url: URL,
  init: { method: "GET" | "HEAD"; headers: Record<string, string>; sameOrigin: boolean; signal: AbortSignal },
) => Promise<Answer>;

/** One page could not be rendered (its DOM unreadable or too large, its tab crashed): the crawl goes on. */
export class RenderError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "RenderError";
  }
}

export interface RenderInput {
  url: string;
  /** "genapi/<version>": added to the browser's own User-Agent. */
  userAgent: string;
  /** The largest DOM read back, bytes of UTF-8 (the crawl's page cap). */
  maxDomBytes: number;
  /** The document's own answer, already fetched by the crawl. */
  document: { status: number; headers: AnswerFields; body: Uint8Array };
  fetch: SubFetch;
  timeoutMs: number;
  signal: AbortSignal;
  /**
   * The crawl's tabs (its pages' tabs opened ahead, closed after them); without, the page opens
   * its own tab in its slot and closes it before it returns.
   */
  tabs?: CrawlTabs;
}

export interface Rendered {
  /** The DOM as HTML (document.documentElement.outerHTML with its doctype). */
  html: string;
  /** Sub-requests answered, and refused (method, scheme, address, count). */
  subrequests: number;
  refused: number;
  timedOut: boolean;
  /** Where the page's time went, ms (for the bench; the report does not carry it). */
  phases: RenderPhases;
}

export interface RenderPhases {
  /** Waiting for a tab: another page's slot, or the browser starting. */
  waitMs: number;
  /** A fresh browser context and page, interception and the prelude set up (or the one opened ahead, awaited). */
  openMs: number;
  /** Navigation until the load event (or the render timeout). */
  loadMs: number;
  /** After the load event, until the network had been quiet for IDLE_MS. */
  idleMs: number;
  /** The DOM read back (and, for a page rendered alone, its context disposed of). */
  readMs: number;
}

/**
 * Renders one page. Throws BrowserStartError when the browser cannot be started, RenderError when
 * this page cannot be rendered, and the signal's reason once it is aborted.
 */
export async function renderPage(browser: Browser, input: RenderInput): Promise<Rendered> {
  const asked = performance.now();
  try {
    return await browser.withTab(input.signal, async (cdp) => {
      const waitMs = performance.now() - asked;
      const opening = performance.now();
      const intercept = browser.options.intercept !== false;
      const tab = await (input.tabs ? input.tabs.take(cdp) : FreshTab.open(cdp, input.userAgent, intercept));
      try {
        return await renderIn(tab, input, { waitMs, openMs: performance.now() - opening, loadMs: 0, idleMs: 0, readMs: 0 });
      } finally {
        // The crawl's tabs close it at a later page's quiet time (their close() at the latest);
        // a page rendered alone closes its own before it returns.
        if (input.tabs) {
          input.tabs.release(tab);
          input.tabs.openAhead(cdp);
        } else await tab.close();
      }
    });
  } catch (error) {
    if (input.signal.aborted) throw input.signal.reason;
    if (error instanceof BrowserStartError || error instanceof RenderError) throw error;
    // The DevTools connection or the tab failed under this page (a crash, the browser killed).
    throw new RenderError(`its tab failed: ${(error as Error).message}`);
  }
}

/**
 * The page's HTML (doctype and documentElement.outerHTML) if its UTF-8 size is at most `max`
 * bytes, else its size; measured in the page, so that a larger DOM never leaves the browser.
 */
const readDom = (max: number) => `(() => {
  const html = (document.doctype ? new XMLSerializer().serializeToString(document.doctype) : "") + document.documentElement.outerHTML;
  if (html.length * 3 <= ${max}) return { html };
  const bytes = new Blob([html]).size;
  return bytes <= ${max} ? { html } : { bytes };
})()`;

async function renderIn(tab: FreshTab, input: RenderInput, phases: RenderPhases): Promise<Rendered> {
  const { cdp, sessionId } = tab;
  const abort = new AbortController();
  let subrequests = 0;
  let refused = 0;
  let inFlight = 0;
  let lastActivity = performance.now();
  let loaded = false;
  let loadedAt = 0;
  let documentServed = false;
  const origin = new URL(input.url).origin;
  // The wait below sleeps until its next deadline or until this page's state changes.
  let wake: (() => void) | null = null;
  const changed = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const onOuterAbort = () => {
    abort.abort(input.signal.reason);
    changed();
  };
  input.signal.addEventListener("abort", onOuterAbort, { once: true });

  const fail = (requestId: string, session: string) => {
    refused++;
    return cdp.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }, session).catch(() => {});
  };

  const answer = async (event: Protocol.Fetch.RequestPausedEvent, session: string) => {
    const { requestId, request } = event;
    // The browser's own request for the tab's icon, not the page's: refused without reaching the
    // site, and not the page's activity (it came after the page's own requests, and its answer
    // started the quiet time again: 2-12 ms a page, and a request to the site for each).
    if (isDefaultIcon(event, tab.targetId)) {
      await cdp.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }, session).catch(() => {});
      return;
    }
    lastActivity = performance.now();
    changed();
    // The document: the crawl's own answer to the first document request of the main frame.
    if (!documentServed && session === sessionId && event.resourceType === "Document" && event.frameId === tab.targetId) {
      documentServed = true;
      await cdp
        .send(
          "Fetch.fulfillRequest",
          {
            requestId,
            responseCode: input.document.status,
            responseHeaders: headerList(input.document.headers),
            body: Buffer.from(input.document.body).toString("base64"),
          },
          session,
        )
        .catch(() => {});
      return;
    }
    const url = URL.parse(request.url);
    const method = request.method.toUpperCase();
    if (url === null || (url.protocol !== "http:" && url.protocol !== "https:") || (method !== "GET" && method !== "HEAD")) {
      await fail(requestId, session);
      return;
    }
    if (subrequests >= MAX_SUBREQUESTS) {
      await fail(requestId, session);
      return;
    }
    subrequests++;
    inFlight++;
    try {
      const res = await input.fetch(url, {
        method: method as "GET" | "HEAD",
        headers: { ...safeHeaders(request.headers), "User-Agent": tab.userAgent },
        sameOrigin: url.origin === origin,
        signal: abort.signal,
      });
      let body: Uint8Array = new Uint8Array(0);
      if (method === "HEAD") discardBody(res);
      else body = (await readCapped(res, MAX_SUBREQUEST_BYTES, abort.signal)).bytes;
      await cdp.send(
        "Fetch.fulfillRequest",
        { requestId, responseCode: res.status, responseHeaders: headerList(res.headers), body: Buffer.from(body).toString("base64") },
        session,
      );
    } catch {
      // Refused by the guard, failed, or the page is done: the page sees a network error.
      await fail(requestId, session);
    } finally {
      inFlight--;
      lastActivity = performance.now();
      changed();
    }
  };

  tab.use({
    paused: (event, session) => void answer(event, session),
    loaded: () => {
      // Before its document was served, a load event is the blank page's the tab was opened on.
      if (loaded || (tab.intercepts && !documentServed)) return;
      loaded = true;
      loadedAt = performance.now();
      changed();
    },
  });

  let timedOut = false;
  let readAt = 0;
  try {
    const navigatedAt = performance.now();
    const deadline = navigatedAt + input.timeoutMs;
    await cdp.send("Page.navigate", { url: input.url }, sessionId);
    // The load event, then IDLE_MS with no request of the page in flight or started: woken by the
    // page's events, or at the moment the quiet time or the render timeout ends.
    for (;;) {
      input.signal.throwIfAborted();
      const now = performance.now();
      if (now >= deadline) {
        timedOut = true;
        break;
      }
      const quiet = loaded && inFlight === 0;
      if (quiet && now - lastActivity >= IDLE_MS) break;
      // The next pages' tabs open, and the tabs of pages done close, while this one waits out the
      // rest of its quiet time, not while its own requests and scripts still run (that takes the
      // browser's CPU, and a page starved of it went quiet before its last requests: they were
      // never made).
      const ahead = quiet && now - lastActivity >= AHEAD_AFTER_MS;
      if (ahead) input.tabs?.quiet(cdp);
      const until = quiet ? Math.min(deadline, lastActivity + (ahead ? IDLE_MS : AHEAD_AFTER_MS)) : deadline;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, Math.ceil(until - now)));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    readAt = performance.now();
    phases.loadMs = (loaded ? loadedAt : readAt) - navigatedAt;
    phases.idleMs = loaded ? readAt - loadedAt : 0;
    // A page that never settles is read as it stands; a script still running gets a moment, no more.
    const result = await Promise.race([
      cdp.send("Runtime.evaluate", { expression: readDom(input.maxDomBytes), returnByValue: true, timeout: 2_000 }, sessionId),
      Bun.sleep(3_000).then(() => null),
    ]);
    const value = result?.result.value as { html?: unknown; bytes?: unknown } | undefined;
    if (typeof value?.bytes === "number") throw new RenderError(`its DOM is larger than ${input.maxDomBytes} bytes (${value.bytes})`);
    // A script that never yields keeps the DOM from being read.
    if (typeof value?.html !== "string" || value.html === "") throw new RenderError("its DOM could not be read (a script kept it busy)");
    return { html: value.html, subrequests, refused, timedOut, phases };
  } finally {
    wake = null;
    abort.abort(new Error("rendered"));
    input.signal.removeEventListener("abort", onOuterAbort);
    if (readAt > 0) phases.readMs = performance.now() - readAt;
  }
}

/**
 * The icon the browser asks for on its own for a page that names none: `GET /favicon.ico` of the
 * main frame, typed "Other" (a page's own fetch of it is typed "Fetch" or "XHR", an <img> "Image").
 */
function isDefaultIcon(event: Protocol.Fetch.RequestPausedEvent, mainFrame: string): boolean {
  if (event.resourceType !== "Other" || event.frameId !== mainFrame || event.request.method !== "GET") return false;
  const url = URL.parse(event.request.url);
  return url !== null && url.pathname === "/favicon.ico" && url.search === "";
}

function headerList(headers: AnswerFields): Protocol.Fetch.HeaderEntry[] {
  const list: Protocol.Fetch.HeaderEntry[] = [];
  headers.forEach((value, name) => {
    // The body is handed over decoded and whole.
    if (name === "content-encoding" || name === "content-length" || name === "transfer-encoding") return;
    list.push({ name, value });
  });
  return list;
}

/** The page's request headers less those the network path sets itself. */
function safeHeaders(headers: Protocol.Network.Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (
      lower === "host" ||
      lower === "cookie" ||
      lower === "authorization" ||
      lower === "user-agent" ||
      lower.startsWith("proxy-") ||
      lower === "connection"
    )
      continue;
    out[name] = String(value);
  }
  return out;
}
