// The browser keeper (src/crawler/render/browser.ts) with a real Chromium: a browser retired after
// its share of pages is stopped as soon as its own tabs are done, not when every tab of the new
// browser is done too; its memory is the PSS of its own process tree; its proxy is genapi's own
// refusing listener. Needs Debian's chromium;
// skipped with the reason when it cannot be had. Runs as root in CI, so the sandbox is off here.
import { describe, expect, test } from "bun:test";
import { Browser, treeRss } from "../../../src/crawler/render/browser.ts";
import type { Cdp } from "../../../src/crawler/render/cdp.ts";
import { renderPage } from "../../../src/crawler/render/render.ts";
import { program } from "../../support/requires.ts";
import { waitFor, within } from "../../support/wait.ts";

const chromium = program(import.meta.path, "chromium");

function newBrowser(restartEveryPages: number, logs: string[]) {
  return new Browser({
    executable: chromium!,
    tabs: 2,
    noSandbox: process.getuid?.() === 0,
    log: (line) => logs.push(line),
    restartEveryPages,
  });
}

/** A promise and the function that settles it. */
function gate() {
  return Promise.withResolvers<void>();
}

describe.skipIf(chromium === null)("Browser", () => {
  test("a retired browser is stopped when its own tabs end, while a tab of the new browser still renders", async () => {
    const logs: string[] = [];
    const browser = newBrowser(2, logs);
    const never = new AbortController().signal;
    try {
      const releaseA = gate();
      const startedA = gate();
      let cdpA: Cdp | undefined;
      // Tab A holds the first browser open; tab B is its second page, which retires it.
      const tabA = browser.withTab(never, async (cdp) => {
        cdpA = cdp;
        startedA.resolve();
        await releaseA.promise;
      });
      await startedA.promise;
      await browser.withTab(never, async () => {});
      expect(logs).toEqual(["restarting the browser: 2 pages rendered"]);

      // Tab C renders on a new browser and stays open until the end of the test.
      const releaseC = gate();
      const startedC = gate();
      let cdpC: Cdp | undefined;
      const tabC = browser.withTab(never, async (cdp) => {
        cdpC = cdp;
        startedC.resolve();
        await releaseC.promise;
      });
      await startedC.promise;
      expect(browser.starts).toBe(2);
      expect(cdpC).not.toBe(cdpA);

      const closedA = new Promise<number>((resolve) => cdpA!.onClose(() => resolve(performance.now())));
      const endedA = performance.now();
      releaseA.resolve();
      await tabA;
      const closedAt = await within(closedA, 10_000, "the browser to close after its last tab");
      // Browser.close, then the process ends: seconds at most, against the 30 s backstop before.
      expect(closedAt - endedA).toBeLessThan(5_000);

      // The new browser is untouched: tab C still talks to it.
      const version = await cdpC!.send("Browser.getVersion");
      expect(version.product).toContain("Chrome");
      releaseC.resolve();
      await tabC;
    } finally {
      await browser.close();
    }
  }, 60_000);

  test("close() stops a browser being retired at once, its tabs still open (no browser outlives the process)", async () => {
    const logs: string[] = [];
    const browser = newBrowser(2, logs);
    const never = new AbortController().signal;
    const release = gate();
    const started = gate();
    let held: Cdp | undefined;
    const tab = browser.withTab(never, async (cdp) => {
      held = cdp;
      started.resolve();
      await release.promise;
    });
    await started.promise;
    await browser.withTab(never, async () => {});
    expect(logs).toEqual(["restarting the browser: 2 pages rendered"]);
    const closed = new Promise<number>((resolve) => held!.onClose(() => resolve(performance.now())));
    const closing = performance.now();
    await browser.close();
    const closedAt = await within(closed, 10_000, "the browser to close");
    expect(closedAt - closing).toBeLessThan(5_000);
    release.resolve();
    await tab;
  }, 60_000);
});

describe("treeRss", () => {
  test("treeRss is the PSS of the process and its descendants only", async () => {
    // A shell with one child (started in the background, so the shell forks) that touches 64 MiB.
    const script = "const b = Buffer.alloc(64 * 2 ** 20, 1); await Bun.sleep(60_000); b[0]";
    const proc = Bun.spawn(["sh", "-c", `"${process.execPath}" -e '${script}' & wait`], { stdout: "ignore", stderr: "ignore" });
    try {
      const memory = await waitFor(
        () => {
          const now = treeRss(proc.pid) ?? 0;
          return now >= 64 * 2 ** 20 ? now : 0;
        },
        10_000,
        "the child's 64 MiB in the tree's PSS",
        100,
      );
      expect(memory).toBeGreaterThan(64 * 2 ** 20);
      // Not the machine: the test process itself (and everything else) is left out.
      expect(memory).toBeLessThan(64 * 2 ** 20 + 200 * 2 ** 20);
    } finally {
      proc.kill("SIGKILL");
      await proc.exited;
    }
    expect(treeRss(proc.pid)).toBe(0);
  }, 30_000);
});

describe.skipIf(chromium === null)("the browser's proxy", () => {
  test("is genapi's own listener on an ephemeral loopback port: it counts and refuses what escapes interception (a page's WebSocket)", async () => {
    let upgrades = 0;
    const site = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req, server) {
        if (server.upgrade(req)) {
          upgrades++;
          return undefined;
        }
        return new Response("ok");
      },
      websocket: { message() {} },
    });
    const browser = newBrowser(500, []);
    const refused: string[] = [];
    browser.onProxyRefusal((line) => refused.push(line));
    const page = `<!doctype html><body><script>new WebSocket("ws://127.0.0.1:${site.port}/ws");</script></body>`;
    try {
      const rendered = await renderPage(browser, {
        url: `http://127.0.0.1:${site.port}/`,
        userAgent: "genapi/test",
        maxDomBytes: 1024 * 1024,
        document: { status: 200, headers: new Headers({ "content-type": "text/html" }), body: new TextEncoder().encode(page) },
        fetch: (url, init) => fetch(url, { method: init.method, headers: init.headers, signal: init.signal }),
        timeoutMs: 10_000,
        signal: new AbortController().signal,
      });
      expect(rendered.html).toContain("WebSocket");
      expect(browser.proxyPort).not.toBeNull();
      expect(browser.proxyPort).not.toBe(9);
      const until = Date.now() + 5_000;
      while (!refused.includes(`CONNECT 127.0.0.1:${site.port} HTTP/1.1`)) {
        if (Date.now() > until) throw new Error(`the WebSocket's CONNECT never reached the proxy: ${JSON.stringify(refused)}`);
        await Bun.sleep(50);
      }
      expect(browser.proxyRefusals).toBeGreaterThanOrEqual(1);
      expect(upgrades).toBe(0);
    } finally {
      await browser.close();
      site.stop(true);
    }
  }, 60_000);
});
