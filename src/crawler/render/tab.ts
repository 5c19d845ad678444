// A page's fresh tab: a browser context of its own (no cookie, storage or cache shared with
// anything), one page target in it, set up before any page uses it exactly as every tab is:
// downloads denied, the User-Agent with genapi's product token, the Fetch domain pausing every
// request of the page, of the frames and workers it starts and of the shared workers of its
// context, auto-attach to those, and the prelude that disables service workers and beacons. A tab
// serves one page (use() once) and is then closed, its context disposed: never used again.
//
// CrawlTabs opens the next pages' tabs ahead, while pages render: opening a context and its page
// took 301 ms of a rendered page's 1 s (30 %, notes/bench-profile.md section 13), on the critical
// path of every page. A crawl holds at most `tabs` opened ahead (the process at most `tabs` too,
// Browser.reserveAhead), opened one at a time once a page has waited out 100 ms of its quiet time
// (its load event fired, none of its requests in flight or started since) and after each page; a tab opened on a browser that has since been retired or has crashed is closed
// unused. A page's tab is closed at that same quiet moment of a later page, not as its page ends:
// the browser disposing of a context while the next page navigated took 26 of the 63 ms from that
// page's navigation to its load event at 1 tab (section 25). close() closes the tabs opened ahead
// and the pages' tabs still open, and waits for every tab of the crawl to be closed.
import type { Protocol } from "devtools-protocol";
import type { Browser } from "./browser.ts";
import type { Cdp } from "./cdp.ts";

/** Disables service workers and beacons before any script of the page runs. */
const PAGE_PRELUDE = `(() => {
  try { Object.defineProperty(navigator, "serviceWorker", { get: () => undefined, configurable: false }); } catch {}
  try { navigator.sendBeacon = () => false; } catch {}
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel"]) { try { delete window[name]; } catch {} }
})();`;

/** The browser's own User-Agent, asked once a connection. */
const browserAgents = new WeakMap<Cdp, Promise<string>>();

/** What the page using a tab hears of it. */
export interface TabPage {
  /** A request of the page (its frames, its workers) paused before it left: the page answers or fails it. */
  paused(event: Protocol.Fetch.RequestPausedEvent, sessionId: string): void;
  /** The page's load event. */
  loaded(): void;
}

export class FreshTab {
  /** The page's session and those of its frames and workers. */
  readonly sessions = new Set<string>();
  sessionId = "";
  targetId = "";
  /** The browser's User-Agent with genapi's product token. */
  userAgent = "";
  private page: TabPage | null = null;
  private used = false;
  private closing: Promise<void> | null = null;
  private readonly stopListening: (() => void)[] = [];

  private constructor(
    readonly cdp: Cdp,
    readonly browserContextId: string,
    /** Every request of the tab is paused (false only in tests that show what escapes). */
    readonly intercepts: boolean,
  ) {}

  /** A fresh context and its page, set up; closed again when the setup fails. */
  static async open(cdp: Cdp, productToken: string, intercept: boolean): Promise<FreshTab> {
    const { browserContextId } = await cdp.send("Target.createBrowserContext", { disposeOnDetach: true });
    const tab = new FreshTab(cdp, browserContextId, intercept);
    try {
      await tab.setUp(productToken);
    } catch (error) {
      await tab.close();
      throw error;
    }
    return tab;
  }

  /** Hands the tab to its page: once only. */
  use(page: TabPage): void {
    if (this.used) throw new Error("a tab serves one page");
    this.used = true;
    this.page = page;
  }

  /** Its page is done: whatever the tab still asks for is refused, as before its page had it. */
  finish(): void {
    this.page = null;
  }

  /** Disposes of the context (and its page, frames and workers); the same promise on every call. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.page = null;
      for (const stop of this.stopListening) stop();
      await this.cdp.send("Target.disposeBrowserContext", { browserContextId: this.browserContextId }).catch(() => {});
    })();
    return this.closing;
  }

  private async setUp(productToken: string): Promise<void> {
    const { cdp, browserContextId } = this;
    this.stopListening.push(
      cdp.on("Fetch.requestPaused", (event, sessionId) => {
        if (sessionId === undefined || !this.sessions.has(sessionId)) return;
        // Nothing leaves a tab before its page has it (and nothing after).
        if (this.page === null)
          void cdp.send("Fetch.failRequest", { requestId: event.requestId, errorReason: "BlockedByClient" }, sessionId).catch(() => {});
        else this.page.paused(event, sessionId);
      }),
      cdp.on("Page.loadEventFired", (_event, sessionId) => {
        if (sessionId === this.sessionId) this.page?.loaded();
      }),
      // Frames and workers of the page, and the shared workers of its context (attached to the
      // browser, Browser.launch): intercepted as the page is, then let run.
      cdp.on("Target.attachedToTarget", (event, parent) => {
        const mine =
          parent === undefined
            ? event.targetInfo.type === "shared_worker" && event.targetInfo.browserContextId === browserContextId
            : this.sessions.has(parent);
        if (!mine) return;
        const child = event.sessionId;
        this.sessions.add(child);
        void (async () => {
          if (this.intercepts) await cdp.send("Fetch.enable", { patterns: [{ urlPattern: "*" }] }, child).catch(() => {});
          await cdp.send("Network.setUserAgentOverride", { userAgent: this.userAgent }, child).catch(() => {});
          await cdp.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }, child).catch(() => {});
          await cdp.send("Runtime.runIfWaitingForDebugger", undefined, child).catch(() => {});
        })();
      }),
    );
    await cdp.send("Browser.setDownloadBehavior", { behavior: "deny", browserContextId }).catch(() => {});
    let agent = browserAgents.get(cdp);
    if (agent === undefined) {
      agent = cdp.send("Browser.getVersion").then((version) => version.userAgent);
      browserAgents.set(cdp, agent);
    }
    this.userAgent = `${await agent} ${productToken}`;
    const { targetId } = await cdp.send("Target.createTarget", { url: "about:blank", browserContextId });
    this.targetId = targetId;
    const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
    this.sessionId = sessionId;
    this.sessions.add(sessionId);
    await cdp.send("Network.setUserAgentOverride", { userAgent: this.userAgent }, sessionId);
    if (this.intercepts) await cdp.send("Fetch.enable", { patterns: [{ urlPattern: "*" }] }, sessionId);
    await cdp.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }, sessionId);
    await cdp.send("Page.enable", undefined, sessionId);
    await cdp.send("Page.addScriptToEvaluateOnNewDocument", { source: PAGE_PRELUDE }, sessionId);
  }
}

/** A tab being opened ahead on the browser behind `cdp`. */
interface Ahead {
  cdp: Cdp;
  tab: Promise<FreshTab>;
}

/** One crawl's tabs: opened ahead of its pages, each closed after its page, all closed by close(). */
export class CrawlTabs {
  private readonly ahead: Ahead[] = [];
  /** Tabs whose pages are done, closed at the crawl's next quiet moment (quiet()). */
  private readonly done: FreshTab[] = [];
  /** Tabs being closed (after their page, or unused). */
  private readonly closing = new Set<Promise<void>>();
  private closed = false;
  /** A tab is being opened ahead. */
  private opening = false;

  constructor(
    private readonly browser: Browser,
    /** "genapi/<version>": added to the browser's own User-Agent. */
    private readonly productToken: string,
  ) {}

  /** Tabs opened ahead and not yet taken (for tests). */
  get waiting(): number {
    return this.ahead.length;
  }

  /** A fresh tab on the browser behind `cdp`: the one opened ahead when there is one, else one opened now. */
  async take(cdp: Cdp): Promise<FreshTab> {
    if (this.closed) throw new Error("the crawl's tabs are closed");
    // Opened on a browser since retired or crashed: closed unused.
    for (const stale of this.ahead.filter((a) => a.cdp !== cdp)) this.discard(stale);
    const next = this.ahead.shift();
    if (next === undefined) return FreshTab.open(cdp, this.productToken, this.browser.options.intercept !== false);
    this.browser.releaseAhead();
    return next.tab;
  }

  /**
   * A page of the crawl is waiting out its quiet time: the browser's work for the crawl's other
   * pages is done now, not while a page navigates or runs its scripts: the tabs of pages done are
   * closed, the next pages' opened ahead.
   */
  quiet(cdp: Cdp): void {
    this.closeDone();
    this.openAhead(cdp);
  }

  /**
   * Opens tabs ahead on the browser behind `cdp`, up to the browser's share: one at a time, the
   * next once the last is open (opening is CPU in the browser, taken from the pages rendering).
   */
  openAhead(cdp: Cdp): void {
    if (this.opening || this.closed || cdp.isClosed || this.ahead.length >= this.browser.options.tabs) return;
    if (!this.browser.reserveAhead()) return;
    this.opening = true;
    const tab = FreshTab.open(cdp, this.productToken, this.browser.options.intercept !== false);
    this.ahead.push({ cdp, tab });
    // Its failure is heard by the page that takes it (or by nobody, when it is discarded).
    void tab.then(
      () => {
        this.opening = false;
        this.openAhead(cdp);
      },
      () => {
        this.opening = false;
      },
    );
  }

  /**
   * A tab's page is done: the tab is closed at the next quiet(), or at once when more than `tabs`
   * wait for one (pages that never go quiet keep no tabs open); close() closes the rest.
   */
  release(tab: FreshTab): void {
    tab.finish();
    this.done.push(tab);
    if (this.done.length > this.browser.options.tabs) this.track(this.done.shift()!.close());
  }

  /** Closes every tab opened ahead and every page's tab, and waits until every tab of the crawl is closed. */
  async close(): Promise<void> {
    this.closed = true;
    this.closeDone();
    for (const stale of [...this.ahead]) this.discard(stale);
    while (this.closing.size > 0) await Promise.all(this.closing);
  }

  private closeDone(): void {
    for (const tab of this.done.splice(0)) this.track(tab.close());
  }

  private discard(ahead: Ahead): void {
    this.ahead.splice(this.ahead.indexOf(ahead), 1);
    this.browser.releaseAhead();
    this.track(
      ahead.tab.then(
        (tab) => tab.close(),
        () => {},
      ),
    );
  }

  private track(closing: Promise<void>): void {
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
  }
}
