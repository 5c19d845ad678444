// A hostile website against dist/genapi: a gigantic page, a gzip bomb, an endless redirect chain,
// a slow drip, 10,000 links on one page and binary junk served as HTML. The crawl stays within its
// limits, the server stays up, and its memory comes back down.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { createKey, generate, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { serveSite, type Site } from "../support/site.ts";
import { waitFor } from "../support/wait.ts";

const html = (body: string, headers: Record<string, string> = {}) =>
  new Response(body, { headers: { "content-type": "text/html", ...headers } });

/** Resident memory of a process, in MiB. */
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

let site: Site;
let server: RunningBinary;
let key: string;
beforeAll(async () => {
  const manyLinks = Array.from({ length: 10_000 }, (_, i) => `<a href="/many/${i}">${i}</a>`).join("");
  // 64 MiB of spaces compress to about 64 KiB.
  const bomb = Bun.gzipSync(new Uint8Array(64 * 1024 * 1024).fill(32));
  site = await serveSite({
    "/": html(["/huge", "/bomb", "/loop?n=0", "/drip", "/many", "/binary", "/fine"].map((l) => `<a href="${l}">x</a>`).join("")),
    "/fine": html("<p>fine</p>"),
    // Every hop names a new URL, forever.
    "/loop": (req) => {
      const n = Number(new URL(req.url).searchParams.get("n") ?? 0);
      return new Response(null, { status: 302, headers: { location: `/loop?n=${n + 1}` } });
    },
    // 40 MiB, streamed: the crawler stops reading at its 5 MiB cap.
    "/huge": () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            controller.enqueue(new TextEncoder().encode(`<p>${"x".repeat(1024 * 1024)}`));
          },
        }),
        { headers: { "content-type": "text/html" } },
      ),
    "/bomb": new Response(bomb, { headers: { "content-type": "text/html", "content-encoding": "gzip" } }),
    "/drip": () =>
      new Response(
        new ReadableStream({
          async pull(controller) {
            await Bun.sleep(200);
            controller.enqueue(new TextEncoder().encode("<"));
          },
        }),
        { headers: { "content-type": "text/html" } },
      ),
    "/many": html(manyLinks),
    "/binary": new Response(
      Uint8Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 256),
      { headers: { "content-type": "text/html; charset=x-no-such" } },
    ),
  });
  const dbPath = join(tempDir(), "genapi.db");
  key = await createKey(dbPath, "--daily-limit", "100");
  server = await startBinary({ dbPath, args: ["--allow-private-targets", "--crawl-timeout", "4", "--max-pages", "300"] });
});
afterAll(async () => {
  await server.stop();
  await site.stop();
});

describe("dist/genapi against a hostile site", () => {
  test("the crawl survives within its limits and memory returns", async () => {
    const before = rssMiB(server.proc.pid);
    const res = await generate(server, key, `${site.url}/`);
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as any;
    expect(data.truncated).toBe(true);
    expect(data.pages_crawled).toBeLessThanOrEqual(300);
    expect(data.duration_ms).toBeLessThan(4000 + 1500);
    const locs = [...data.sitemap.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m: RegExpMatchArray) => new URL(m[1]!).pathname);
    expect(locs).toContain("/");
    expect(locs).toContain("/fine");
    expect(locs).toContain("/many");
    expect(locs).not.toContain("/huge");
    expect(locs).not.toContain("/bomb");
    expect(locs).not.toContain("/drip");
    expect(locs.some((l) => l.startsWith("/loop"))).toBe(false);
    expect(site.requests.filter((r) => r.includes("/loop")).length).toBeLessThanOrEqual(11);
    await Bun.sleep(500);
    const after = rssMiB(server.proc.pid);
    console.log(`genapi RSS before ${before.toFixed(1)} MiB, after the hostile crawl ${after.toFixed(1)} MiB`);
    expect(after - before).toBeLessThan(100);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  test("an endless redirect chain at the start URL answers 502", async () => {
    const loop = await serveSite({
      "/loop": (req) => {
        const n = Number(new URL(req.url).searchParams.get("n") ?? 0);
        return new Response(null, { status: 302, headers: { location: `/loop?n=${n + 1}` } });
      },
    });
    const res = await generate(server, key, `${loop.url}/loop`);
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).message).toBe(`Could not crawl ${loop.url}/loop: too many redirects`);
    // robots.txt and at most --max-pages (300) hops: a chain longer than the page budget is refused.
    expect(loop.requests.length).toBe(301);
    await loop.stop();
  });
});

describe("dist/genapi against oversized response headers", () => {
  test("a start page whose headers never end answers 502; Bun's fetch caps header size", async () => {
    // A raw TCP server: 4 MB of headers, more than any HTTP library should buffer.
    const raw = createServer((socket) => {
      socket.on("error", () => {});
      socket.once("data", () => {
        socket.write("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n");
        const line = `X-Junk: ${"a".repeat(8000)}\r\n`;
        let sent = 0;
        const pump = () => {
          while (sent < 4_000_000 && !socket.destroyed) {
            sent += line.length;
            if (!socket.write(line)) return void socket.once("drain", pump);
          }
          socket.end("\r\n<p>late</p>");
        };
        pump();
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/`;
    const res = await generate(server, key, url);
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).message).toStartWith(`Could not crawl ${url}: `);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    raw.close();
  });
});

describe("dist/genapi: crawls cannot hold the service hostage", () => {
  test("a client that disconnects frees its crawl slot at once", async () => {
    const quick = await serveSite({ "/": html("quick") });
    const dbPath = join(tempDir(), "genapi.db");
    const ownKey = await createKey(dbPath, "--daily-limit", "100");
    const single = await startBinary({ dbPath, args: ["--allow-private-targets", "--max-crawls", "1", "--crawl-queue", "0"] });
    // The crawl of this site waits 2 s for /p0.
    const slowSite = await serveSite({
      "/": html(`<a href="/p0">p0</a>`),
      "/p0": async () => {
        await Bun.sleep(2000);
        return html("slow");
      },
    });
    const send = (url: string, signal?: AbortSignal) => generate(single, ownKey, url, {}, signal);
    const abort = new AbortController();
    try {
      const first = send(`${slowSite.url}/`, abort.signal).catch((error: Error) => error);
      // Wait until the crawl is inside /p0: the only slot is taken and nothing may queue.
      await waitFor(() => slowSite.requests.some((r) => r.endsWith("/p0")), 10_000, "the crawl's request for /p0");
      expect((await send(`${quick.url}/`)).status).toBe(503);
      abort.abort();
      expect(await first).toBeInstanceOf(Error);
      await Bun.sleep(200);
      const next = await send(`${quick.url}/`);
      expect(next.status).toBe(200);
    } finally {
      await single.stop();
    }
    await Promise.all([quick.stop(), slowSite.stop()]);
  });

  test("while a hostile crawl runs, another crawl is answered first", async () => {
    const fine = await serveSite({ "/": html("<a href='/a'>a</a>"), "/a": html("a") });
    const order: string[] = [];
    const crawl = (name: string, url: string) =>
      generate(server, key, url).then(async (res) => {
        order.push(name);
        return { status: res.status, body: (await res.json()) as any };
      });
    const seenBefore = site.requests.length;
    const hostile = crawl("hostile", `${site.url}/`);
    // Wait until the hostile crawl is under way.
    await waitFor(() => site.requests.length >= seenBefore + 3, 10_000, "three requests of the hostile crawl at the site");
    const other = await crawl("fine", `${fine.url}/`);
    expect(other.status).toBe(200);
    expect(other.body.data.url_count).toBe(2);
    expect((await hostile).status).toBe(200);
    // The hostile crawl runs to its time budget; the other one did not wait for it.
    expect(order).toEqual(["fine", "hostile"]);
    await fine.stop();
  });
});
