// Headless Chromium driven over the Chrome DevTools Protocol with Bun's built-in WebSocket, so
// browser tests need no npm package. Only loopback names resolve inside it.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./binary.ts";

type Params = Record<string, unknown>;
export interface CdpEvent {
  method: string;
  params: Params;
}

/** One page's DevTools session: send commands, watch events. */
export class CdpPage {
  private nextId = 1;
  private pending = new Map<number, { resolve: (value: Params) => void; reject: (error: Error) => void }>();
  readonly events: CdpEvent[] = [];

  private constructor(private socket: WebSocket) {
    socket.addEventListener("message", (message) => {
      const data = JSON.parse(String(message.data));
      if (data.id === undefined) {
        this.events.push({ method: data.method, params: data.params ?? {} });
        return;
      }
      const waiter = this.pending.get(data.id);
      this.pending.delete(data.id);
      if (data.error) waiter?.reject(new Error(`${data.error.message} (${data.error.code})`));
      else waiter?.resolve(data.result ?? {});
    });
  }

  static async connect(url: string): Promise<CdpPage> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.addEventListener("open", resolve, { once: true });
      socket.addEventListener("error", () => reject(new Error(`cannot connect to ${url}`)), { once: true });
    });
    return new CdpPage(socket);
  }

  send(method: string, params: Params = {}): Promise<Params> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  /** Evaluates an expression in the page and returns its (JSON-serialisable) value. */
  async evaluate<T>(expression: string): Promise<T> {
    const result = (await this.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true })) as {
      result: { value: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (result.exceptionDetails) {
      throw new Error(`page threw: ${result.exceptionDetails.exception?.description ?? result.exceptionDetails.text}`);
    }
    return result.result.value;
  }

  /** Polls an expression until it is truthy; fails with `what` after the deadline. */
  async waitFor<T>(expression: string, what: string, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await this.evaluate<T>(expression);
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await Bun.sleep(50);
    }
  }

  /** A real mouse click in the middle of the element an expression finds, after scrolling to it. */
  async click(elementExpression: string, what: string): Promise<void> {
    const box = await this.waitFor<{ x: number; y: number }>(
      `(() => { const el = ${elementExpression}; if (!el) return null; el.scrollIntoView({ block: "center" });
        const r = el.getBoundingClientRect(); return r.width > 0 ? { x: r.x + r.width / 2, y: r.y + r.height / 2 } : null; })()`,
      what,
    );
    for (const type of ["mousePressed", "mouseReleased"]) {
      await this.send("Input.dispatchMouseEvent", { type, x: box.x, y: box.y, button: "left", clickCount: 1 });
    }
  }

  close(): void {
    this.socket.close();
  }
}

export interface Browser {
  page: CdpPage;
  close: () => Promise<void>;
}

/** Starts headless Chromium with a throwaway profile and opens a DevTools session on its first page. */
export async function launchChromium(executable: string): Promise<Browser> {
  const profile = tempDir("genapi-chromium-");
  const proc = Bun.spawn(
    [
      executable,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-domain-reliability",
      "--no-pings",
      // Every name but the loopback ones fails to resolve: the page cannot reach out by name.
      "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
      "--window-size=1280,1600",
      `--user-data-dir=${profile}`,
      "--remote-debugging-port=0",
      "about:blank",
    ],
    { stdin: "ignore", stdout: "ignore", stderr: "pipe" },
  );
  const close = async () => {
    // SIGTERM lets Chromium reap its own helper processes; SIGKILL would orphan them.
    proc.kill("SIGTERM");
    const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
    if (!exited) proc.kill("SIGKILL");
    await proc.exited;
    rmSync(profile, { recursive: true, force: true });
  };
  try {
    // Chromium writes its DevTools port and browser path here once it listens.
    const portFile = join(profile, "DevToolsActivePort");
    const deadline = Date.now() + 15_000;
    while (!existsSync(portFile) || !readFileSync(portFile, "utf8").includes("\n")) {
      if (proc.exitCode !== null) throw new Error(`chromium exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
      if (Date.now() > deadline) throw new Error("chromium did not open its DevTools port within 15 s");
      await Bun.sleep(50);
    }
    const port = readFileSync(portFile, "utf8").split("\n")[0]!;
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
      type: string;
      webSocketDebuggerUrl: string;
    }[];
    const target = targets.find((t) => t.type === "page");
    if (!target) throw new Error("chromium has no page target");
    const page = await CdpPage.connect(target.webSocketDebuggerUrl);
    return {
      page,
      close: async () => {
        page.close();
        await close();
      },
    };
  } catch (error) {
    await close();
    throw error;
  }
}
