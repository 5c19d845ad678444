// The system's Chromium, started and kept by genapi: headless, over the DevTools protocol, with no
// network of its own. Every request a rendered page makes is paused by the Fetch domain and
// answered by genapi (render.ts). What the Fetch domain does not pause goes to the browser's
// proxy, loopback included (`<-loopback>`): WebSockets, and Chromium's own services (a listener on
// the former proxy port 127.0.0.1:9 received 11 connections in one crawl: time, update and account
// services, a sandboxed srcdoc frame's requests, WebSockets). The proxy is a listener genapi owns
// on an ephemeral loopback port (RefusingProxy) that closes every connection unanswered and tells
// the crawls that listen; a closed port refused as well, but another process could take it, and
// nobody heard of what reached it.
//
// One browser per process, shared by every crawl; `tabs` pages render at once (withTab), and at
// most `tabs` more tabs are open ahead of their pages, rendering nothing (tab.ts). It is restarted
// every RESTART_EVERY_PAGES pages, when its processes pass MAX_BROWSER_RSS, and after a crash.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { Cdp, CdpError } from "./cdp.ts";

export const RESTART_EVERY_PAGES = 500;
export const MAX_BROWSER_RSS = 1024 * 1024 * 1024;
/** The longest a retired browser waits for its tabs before it is stopped under them. */
const RETIRE_WAIT_MS = 30_000;
/**
 * How long a starting browser has to say where DevTools listens. A browser that cannot start
 * (no sandbox, a missing library) exits at once and says why; this is for one that hangs. Under
 * load (a CI run with a booted systemd container beside it) a start took over 20 s, which was the
 * deadline, and the crawl failed with the browser's last harmless stderr line as its reason.
 */
const START_DEADLINE_MS = 60_000;
/** The browser's processes are measured every so many pages. */
const MEASURE_EVERY_PAGES = 25;
const CANDIDATES = ["chromium", "chromium-browser", "google-chrome-stable", "google-chrome"];
/**
 * Chromium features that reach the network by themselves, that would take requests around
 * interception, or that cost every page a renderer of the browser's own.
 */
const DISABLED_FEATURES = [
  "Translate",
  "OptimizationHints",
  "OptimizationHintsFetching",
  "OptimizationGuideModelDownloading",
  "MediaRouter",
  "DialMediaRouteProvider",
  "AutofillServerCommunication",
  "InterestFeedContentSuggestions",
  "CertificateTransparencyComponentUpdater",
  // The network time service (clients2.google.com/time).
  "NetworkTimeServiceQuerying",
  // A sandboxed frame in a process of its own: its requests were not paused (they met the proxy).
  "IsolateSandboxedIframes",
  // Each fresh context's page opens in a window of its own, and every window loaded its address
  // bar's suggestion popup as two WebUI pages (chrome://omnibox-popup.top-chrome/), each in a
  // renderer: at 4 tabs the same 120 pages rendered at 2.26-2.36 pages/s with them and 3.27-3.39
  // without (notes/bench-profile.md, section 17); test/crawler/render/tabs.test.ts finds none of
  // the browser's own pages. PreloadTopChromeWebUI: the window's other WebUI loaded ahead.
  "WebUIOmniboxPopup",
  "WebUIOmniboxAimPopup",
  "WebUIOmniboxFullPopup",
  "PreloadTopChromeWebUI",
];

/** The first of the usual Chromium names on PATH, or the path given; null when there is none. */
export function findChromium(given: string | null, path = process.env.PATH ?? ""): string | null {
  if (given !== null) return existsSync(given) ? given : null;
  for (const name of CANDIDATES) {
    for (const dir of path.split(delimiter)) {
      if (dir !== "" && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  return null;
}

/** Chromium could not be started (or started again after it died): the crawls that need it fail. */
export class BrowserStartError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "BrowserStartError";
  }
}

/** A request that escaped interception and reached the browser's proxy: its first line. */
export type ProxyRefusal = (requestLine: string) => void;

export interface BrowserOptions {
  executable: string;
  /** Pages rendered at once. */
  tabs: number;
  /**
   * Chromium's sandbox off: only where the process runs as root (tests in a root container),
   * where Chromium refuses to start with it. Never in the service (it runs as its own user).
   */
  noSandbox: boolean;
  log: (message: string) => void;
  /**
   * For tests only (GENAPI_RENDER_TEST_NO_INTERCEPT=1): pages are not intercepted, so a test can
   * show that a request escaping genapi meets the refusing proxy instead of the network.
   */
  intercept?: boolean;
  /** Pages a browser renders before it is restarted (RESTART_EVERY_PAGES; lower in tests). */
  restartEveryPages?: number;
}

/** One browser process and its DevTools connection. */
interface Running {
  proc: Bun.Subprocess;
  cdp: Cdp;
  userDataDir: string;
  pages: number;
  /** Tabs rendering on this browser now; a retired browser is stopped when they are done. */
  inFlight: number;
  /** Called when inFlight drops to 0 (set while the browser is being retired). */
  onDrained: (() => void) | null;
}

export class Browser {
  private running: Promise<Running> | null = null;
  /** The browser `running` resolved to, once it has started. */
  private current: Running | null = null;
  /** Browsers being retired: stopped when their tabs are done, or at close(). */
  private readonly retiring = new Set<Running>();
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** Tabs opened ahead of their pages by every crawl (tab.ts): at most `tabs`. */
  private ahead = 0;
  /** Browser starts, for tests and the report. */
  starts = 0;
  /** Time spent starting browsers, ms (from spawn to the DevTools connection), for the bench. */
  startMs = 0;
  private proxy: RefusingProxy | null = null;
  private readonly proxyListeners = new Set<ProxyRefusal>();

  constructor(readonly options: BrowserOptions) {}

  /** Connections refused at the browser's proxy since this keeper started (requests that escaped interception). */
  get proxyRefusals(): number {
    return this.proxy?.refused ?? 0;
  }

  /** The proxy's port once a browser has started (for tests), else null. */
  get proxyPort(): number | null {
    return this.proxy?.port ?? null;
  }

  /** Hears of each connection refused at the proxy while it is registered; returns the removal. */
  onProxyRefusal(listener: ProxyRefusal): () => void {
    this.proxyListeners.add(listener);
    return () => this.proxyListeners.delete(listener);
  }

  private get restartEvery(): number {
    return this.options.restartEveryPages ?? RESTART_EVERY_PAGES;
  }

  /** Runs `use` with a tab's worth of the browser: waits for one of `tabs` slots, starts the browser if needed. */
  async withTab<T>(signal: AbortSignal, use: (cdp: Cdp) => Promise<T>): Promise<T> {
    await this.slot(signal);
    try {
      const running = await this.ensure();
      running.pages++;
      running.inFlight++;
      try {
        return await use(running.cdp);
      } finally {
        running.inFlight--;
        if (running.inFlight === 0) running.onDrained?.();
        if (running.pages % MEASURE_EVERY_PAGES === 0 || running.pages >= this.restartEvery) this.checkHealth(running);
      }
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  /** Takes one of the `tabs` places for a tab opened ahead of its page; false when none is left. */
  reserveAhead(): boolean {
    if (this.ahead >= this.options.tabs) return false;
    this.ahead++;
    return true;
  }

  /** Gives back a place taken by reserveAhead (the tab was taken by a page, or discarded). */
  releaseAhead(): void {
    this.ahead--;
  }

  /** The browser contexts open in the running browser, as it lists them (Target.getBrowserContexts); [] when none runs. */
  async openContexts(): Promise<string[]> {
    const running = await this.running?.catch(() => null);
    if (!running || running.cdp.isClosed) return [];
    return (await running.cdp.send("Target.getBrowserContexts")).browserContextIds;
  }

  /** The URLs of the browser's targets (pages, frames, workers), its own pages included. */
  async targetUrls(): Promise<string[]> {
    const running = await this.running?.catch(() => null);
    if (!running || running.cdp.isClosed) return [];
    return (await running.cdp.send("Target.getTargets")).targetInfos.map((target) => target.url);
  }

  /** The browser's processes' resident memory, bytes (Linux /proc), or null when unknown. */
  async memory(): Promise<number | null> {
    const running = await this.running?.catch(() => null);
    return running ? treeRss(running.proc.pid) : null;
  }

  /** Kills the browser (a crash, for tests): the next page starts another. */
  async kill(): Promise<void> {
    const running = await this.running?.catch(() => null);
    running?.proc.kill("SIGKILL");
  }

  /** Stops the browser, and any being retired without waiting for their tabs. */
  async close(): Promise<void> {
    const running = this.running;
    this.running = null;
    this.current = null;
    const retiring = [...this.retiring];
    this.retiring.clear();
    const r = await running?.catch(() => null);
    await Promise.all([...(r ? [r] : []), ...retiring].map(stop));
    this.proxy?.stop();
    this.proxy = null;
  }

  private slot(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.active < this.options.tabs) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const go = () => {
        signal.removeEventListener("abort", onAbort);
        this.active++;
        resolve();
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(go);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(go);
    });
  }

  private ensure(): Promise<Running> {
    if (this.running === null) {
      this.running = this.launch();
      // A failed start is not kept: the next page tries again.
      this.running.catch(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  /** After a page: restart a browser that has rendered its share of pages or grown too large (pages in flight finish first). */
  private checkHealth(running: Running): void {
    const rss = treeRss(running.proc.pid);
    const why =
      running.pages >= this.restartEvery
        ? `${running.pages} pages rendered`
        : rss !== null && rss > MAX_BROWSER_RSS
          ? `its processes use ${Math.round(rss / 2 ** 20)} MiB`
          : null;
    if (why === null) return;
    if (this.current !== running) return;
    // At once, so that no tab waiting for a slot starts on the browser being retired.
    this.running = null;
    this.current = null;
    this.options.log(`restarting the browser: ${why}`);
    void this.retire(running);
  }

  private async retire(running: Running): Promise<void> {
    this.retiring.add(running);
    // Tabs still rendering on it finish first (they hold the old connection); new ones start another
    // browser and are not waited for. A tab is bounded by the render timeout; 30 s is a backstop.
    if (running.inFlight > 0) {
      const drained = Promise.withResolvers<void>();
      running.onDrained = drained.resolve;
      const backstop = setTimeout(drained.resolve, RETIRE_WAIT_MS);
      await drained.promise;
      clearTimeout(backstop);
    }
    // close() may have stopped it meanwhile.
    if (this.retiring.delete(running)) await stop(running);
  }

  private async launch(): Promise<Running> {
    this.starts++;
    const began = performance.now();
    this.proxy ??= new RefusingProxy((line) => {
      for (const listener of this.proxyListeners) listener(line);
    });
    const userDataDir = mkdtempSync(join(tmpdir(), "genapi-chromium-"));
    const args = [
      "--headless=new",
      "--remote-debugging-port=0",
      `--user-data-dir=${userDataDir}`,
      // No network of its own: whatever is not intercepted meets genapi's refusing proxy, loopback included.
      `--proxy-server=http://127.0.0.1:${this.proxy.port}`,
      "--proxy-bypass-list=<-loopback>",
      // Chromium's own services. Chromium 156 still asks update.googleapis.com for one component
      // ("Optimization Guide On Device Model", on demand) and connects to accounts.google.com at
      // start with every switch tried (OptimizationGuideOnDeviceModel, --dns-prefetch-disable,
      // preconnect features, signin prefs): they meet the refusing proxy like any other escape.
      "--disable-background-networking",
      // WebRTC would reach the network over UDP, around the proxy: no UDP but through it (none).
      "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
      "--webrtc-ip-handling-policy=disable_non_proxied_udp",
      "--disable-component-update",
      "--disable-sync",
      "--disable-default-apps",
      "--disable-extensions",
      "--disable-domain-reliability",
      "--disable-client-side-phishing-detection",
      "--safebrowsing-disable-auto-update",
      "--no-pings",
      "--disable-breakpad",
      `--disable-features=${DISABLED_FEATURES.join(",")}`,
      "--no-first-run",
      "--no-default-browser-check",
      "--metrics-recording-only",
      "--mute-audio",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      ...(this.options.noSandbox ? ["--no-sandbox"] : []),
      "about:blank",
    ];
    const proc = Bun.spawn([this.options.executable, ...args], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
    try {
      const url = await devtoolsUrl(proc);
      const cdp = await Cdp.connect(url);
      // Shared workers start paused and attached here; the page of their context intercepts them (render.ts).
      await cdp.send("Target.setAutoAttach", {
        autoAttach: true,
        waitForDebuggerOnStart: true,
        flatten: true,
        filter: [{ type: "shared_worker", exclude: false }],
      });
      const running: Running = { proc, cdp, userDataDir, pages: 0, inFlight: 0, onDrained: null };
      this.current = running;
      this.startMs += performance.now() - began;
      cdp.onClose(() => {
        // A crash or a kill: forget this browser; the next page starts another.
        if (this.current === running) {
          this.current = null;
          this.running = null;
        }
        proc.kill("SIGKILL");
        rmSync(userDataDir, { recursive: true, force: true });
      });
      return running;
    } catch (error) {
      proc.kill("SIGKILL");
      rmSync(userDataDir, { recursive: true, force: true });
      throw new BrowserStartError(this.withAdvice((error as Error).message));
    }
  }

  /** Chromium's reason, and the way out where it runs as root with its sandbox on. */
  private withAdvice(reason: string): string {
    if (process.getuid?.() !== 0 || this.options.noSandbox) return reason;
    return `${reason} (as root, Chromium needs its sandbox off: set GENAPI_CHROMIUM_NO_SANDBOX=1, or run genapi as another user)`;
  }
}

/**
 * The browser's proxy: a loopback listener on an ephemeral port that answers nothing. Each
 * connection is counted and closed once its first bytes (a CONNECT or an absolute-URI request
 * line) arrive, or after a second of silence; its first line goes to `onRefused`.
 */
class RefusingProxy {
  refused = 0;
  private readonly listener: Bun.TCPSocketListener<{ told: boolean }>;

  constructor(onRefused: ProxyRefusal) {
    this.listener = Bun.listen<{ told: boolean }>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open: (socket) => {
          this.refused++;
          socket.data = { told: false };
          socket.timeout(1);
        },
        data: (socket, data) => {
          if (!socket.data.told) {
            socket.data.told = true;
            const text = new TextDecoder().decode(data.subarray(0, 300));
            onRefused(text.split("\r\n")[0]!.slice(0, 200));
          }
          socket.end();
        },
        timeout: (socket) => {
          if (!socket.data.told) {
            socket.data.told = true;
            onRefused("(a connection that sent nothing)");
          }
          socket.end();
        },
        error: () => {},
      },
    });
  }

  get port(): number {
    return this.listener.port;
  }

  stop(): void {
    this.listener.stop(true);
  }
}

async function stop(running: Running): Promise<void> {
  try {
    await Promise.race([running.cdp.send("Browser.close"), Bun.sleep(2_000)]);
  } catch {
    // Gone already.
  }
  running.cdp.close();
  running.proc.kill("SIGKILL");
  await running.proc.exited;
  rmSync(running.userDataDir, { recursive: true, force: true });
}

/** Reads "DevTools listening on ws://..." from the browser's stderr. */
async function devtoolsUrl(proc: Bun.Subprocess): Promise<string> {
  const stderr = proc.stderr as ReadableStream<Uint8Array>;
  const reader = stderr.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).getReader();
  let text = "";
  let late = false;
  const deadline = setTimeout(() => {
    late = true;
    reader.cancel().catch(() => {});
  }, START_DEADLINE_MS);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
      if (match) {
        // Keep draining stderr, or the browser blocks once the pipe is full.
        void (async () => {
          while (!(await reader.read().catch(() => ({ done: true }))).done) {}
        })();
        return match[1]!;
      }
      if (text.length > 64 * 1024) text = text.slice(-8 * 1024);
    }
  } finally {
    clearTimeout(deadline);
  }
  // Chromium says why on a FATAL or ERROR line (a sandbox it cannot use, a missing library); else its last line.
  const lines = text.trim().split("\n");
  const why = lines.find((line) => /FATAL|ERROR/.test(line)) ?? lines.at(-1) ?? "";
  const within = late ? ` within ${START_DEADLINE_MS / 1000} s` : "";
  throw new CdpError(`Chromium did not start${within}${why ? `: ${why.replace(/^\[[^\]]*\]\s*/, "").slice(0, 300)}` : ""}`);
}

/**
 * Memory of a process and its descendants (Linux /proc): the proportional set size, so that pages
 * the browser's processes share count once (their RSS summed counts them in every process, and
 * passed 1 GiB on a few tabs). Only the tree is read: its members are found through
 * /proc/PID/task/TID/children, or, on a kernel without that file, through every process's parent
 * in /proc/PID/stat; smaps_rollup is read for the tree's processes alone. Null where /proc is not
 * readable.
 */
export function treeRss(root: number): number | null {
  const members = descendants(root);
  if (members === null) return null;
  let total = 0;
  for (const pid of members) total += processMemory(pid);
  return total;
}

/** The process and its descendants, or null where /proc is not readable. */
function descendants(root: number): number[] | null {
  if (!existsSync(`/proc/${root}`)) return existsSync("/proc/self") ? [] : null;
  if (existsSync(`/proc/${root}/task/${root}/children`)) {
    const found: number[] = [];
    const stack = [root];
    while (stack.length > 0) {
      const pid = stack.pop()!;
      found.push(pid);
      for (const task of safeList(`/proc/${pid}/task`)) {
        const text = safeRead(`/proc/${pid}/task/${task}/children`);
        for (const child of text.split(" ")) if (child.trim() !== "") stack.push(Number(child));
      }
    }
    return found;
  }
  const children = new Map<number, number[]>();
  for (const name of safeList("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = safeRead(`/proc/${name}/stat`);
    if (stat === "") continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(name));
    children.set(ppid, list);
  }
  const found: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    found.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** A process's PSS in bytes (its RSS where smaps_rollup is missing); 0 once it has ended. */
function processMemory(pid: number): number {
  const rollup = /^Pss:\s+(\d+) kB/m.exec(safeRead(`/proc/${pid}/smaps_rollup`));
  if (rollup) return Number(rollup[1]) * 1024;
  const stat = safeRead(`/proc/${pid}/stat`);
  if (stat === "") return 0;
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[21]) * 4096;
}

/** A /proc file's text, or "" when the process ended meanwhile or it cannot be read. */
function safeRead(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function safeList(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
