// Helpers of the job tests: sites generated on the fly (no files), a WHATWG server-sent events
// parser, and small calls against a running genapi.
import { createHmac } from "node:crypto";
import type { RunningBinary } from "../support/binary.ts";

export const json = async (res: Response) => (await res.json()) as any;

export interface GeneratedSite {
  url: string;
  /** Page requests so far (robots.txt and the callback hook excluded). */
  pages: () => number;
  /** Every path requested, in order. */
  requests: string[];
  /** Callbacks received: body text and signature header. */
  callbacks: { body: string; signature: string | null }[];
  /** The URLs an uninterrupted crawl lists. */
  expected: string[];
  stop: () => Promise<void>;
}

/**
 * A site of `size` pages: `/` is page 0; page i links to pages fanout*i+1 .. fanout*i+fanout (a
 * tree, so breadth first reaches every page) and back to the root. Each page answers after
 * `delayMs`. `/hook` records callbacks (answering `hookStatus()`).
 */
export function generatedSite(size: number, options: { fanout?: number; delayMs?: number; hookStatus?: () => number } = {}): GeneratedSite {
  const fanout = options.fanout ?? 10;
  const requests: string[] = [];
  const callbacks: { body: string; signature: string | null }[] = [];
  let pages = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const { pathname } = new URL(req.url);
      if (pathname === "/hook") {
        callbacks.push({ body: await req.text(), signature: req.headers.get("x-genapi-signature") });
        return new Response("ok", { status: options.hookStatus?.() ?? 200 });
      }
      if (pathname === "/robots.txt") return new Response("User-agent: *\nAllow: /\n");
      requests.push(pathname);
      pages++;
      const i = pathname === "/" ? 0 : Number(/^\/p(\d+)$/.exec(pathname)?.[1] ?? -1);
      if (!(i >= 0 && i < size)) return new Response("not found", { status: 404 });
      if (options.delayMs) await Bun.sleep(options.delayMs);
      let links = '<a href="/">home</a>';
      for (let c = fanout * i + 1; c <= fanout * i + fanout && c < size; c++) links += `<a href="/p${c}">${c}</a>`;
      return new Response(`<!doctype html><html><head><title>${i}</title></head><body>${links}</body></html>`, {
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  const expected = [`${url}/`, ...Array.from({ length: size - 1 }, (_, i) => `${url}/p${i + 1}`)].sort();
  return { url, pages: () => pages, requests, callbacks, expected, stop: () => server.stop(true) };
}

export interface HangingSite {
  url: string;
  /** Paths requested, in order (robots.txt excluded). */
  requests: string[];
  /** Requests of a hanging page that the client gave up (the connection closed), with when. */
  abortedAt: number[];
  stop: () => Promise<void>;
}

/**
 * A site whose `/` links to `/a`, `/b`, `/c` (answered at once) and `/slow`, which never answers
 * until the client gives up (or 30 s pass). With `startHangs`, `/` itself hangs: nothing is ever listed.
 */
export function hangingSite(options: { startHangs?: boolean } = {}): HangingSite {
  const requests: string[] = [];
  const abortedAt: number[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 60,
    async fetch(req) {
      const { pathname } = new URL(req.url);
      if (pathname === "/robots.txt") return new Response("User-agent: *\nAllow: /\n");
      requests.push(pathname);
      if (pathname === "/slow" || (options.startHangs && pathname === "/")) {
        const aborted = await new Promise<boolean>((resolve) => {
          req.signal.addEventListener("abort", () => resolve(true), { once: true });
          setTimeout(() => resolve(false), 30_000);
        });
        if (aborted) abortedAt.push(Date.now());
        return new Response("<!doctype html><title>late</title>", { headers: { "content-type": "text/html; charset=utf-8" } });
      }
      const links = pathname === "/" ? '<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a><a href="/slow">slow</a>' : "";
      return new Response(`<!doctype html><html><head><title>${pathname}</title></head><body>${links}</body></html>`, {
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, abortedAt, stop: () => server.stop(true) };
}

export function createJob(server: Pick<RunningBinary, "url">, key: string, body: Record<string, unknown>) {
  return fetch(`${server.url}/api/jobs`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify(body),
  });
}

export function call(server: Pick<RunningBinary, "url">, key: string, path: string, init: RequestInit & { decompress?: boolean } = {}) {
  return fetch(`${server.url}${path}`, { ...init, headers: { "x-api-key": key, ...(init.headers as Record<string, string>) } });
}

/** Polls the job until `done(job)` holds (default: finished), within `timeoutMs`. */
export async function waitForJob(
  server: Pick<RunningBinary, "url">,
  key: string,
  id: string,
  done = (job: any) => ["succeeded", "failed", "cancelled"].includes(job.status),
  timeoutMs = 60_000,
) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = (await json(await call(server, key, `/api/jobs/${id}`))).data;
    if (done(job)) return job;
    if (Date.now() > until) throw new Error(`job ${id} still ${job.status}: ${JSON.stringify(job.progress)}`);
    await Bun.sleep(100);
  }
}

/** Every <loc> of an XML document. */
export function locs(xml: string): string[] {
  return [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));
}

export function hmac(body: string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export interface ServerSentEvent {
  type: string;
  data: string;
  lastEventId: string;
}

/**
 * Reads a text/event-stream as the WHATWG HTML standard's "event stream interpretation" does:
 * lines end in CRLF, LF or CR; a line starting with ":" is a comment; "field: value" with one
 * leading space stripped; `data` lines join with LF; a blank line dispatches the event (not when
 * its data is empty), whose type defaults to "message".
 */
export async function readEventStream(body: ReadableStream<Uint8Array>, onEvent: (event: ServerSentEvent) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data = "";
  let type = "";
  let lastEventId = "";
  const line = (text: string) => {
    if (text === "") {
      if (data !== "") onEvent({ type: type || "message", data: data.endsWith("\n") ? data.slice(0, -1) : data, lastEventId });
      data = "";
      type = "";
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") type = value;
    else if (field === "data") data += `${value}\n`;
    else if (field === "id" && !value.includes("\0")) lastEventId = value;
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (;;) {
      const match = /\r\n|\r|\n/.exec(buffer);
      if (match === null) break;
      // A CR at the very end may be the first half of a CRLF: wait for more.
      if (match[0] === "\r" && match.index === buffer.length - 1) break;
      line(buffer.slice(0, match.index));
      buffer = buffer.slice(match.index + match[0].length);
    }
  }
}
