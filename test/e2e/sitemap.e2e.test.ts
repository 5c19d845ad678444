// POST /api/generate answered by the compiled executable, crawling fixture sites on loopback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createKey, generate, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { serveSite, type Site } from "../support/site.ts";
import { waitFor } from "../support/wait.ts";

const page = (title: string, links: string[]) =>
  `<!doctype html><html><head><title>${title}</title></head><body>${links.map((l) => `<a href="${l}">${l}</a>`).join("")}</body></html>`;

const json = async (res: Response) => (await res.json()) as any;

let site: Site;
beforeAll(async () => {
  site = await serveSite({
    "/": page("home", ["/about", "/blog/", "/private/x", "/gone", "https://elsewhere.invalid/"]),
    "/about": page("about", ["/", "/about#team"]),
    "/blog/": page("blog", ["post?id=1&lang=en", "/old"]),
    "/blog/post": page("post", ["/"]),
    "/old": new Response(null, { status: 301, headers: { location: "/about" } }),
    "/private/x": page("private", []),
    "/robots.txt": new Response("User-agent: *\nDisallow: /private/\n", { headers: { "content-type": "text/plain" } }),
  });
});
afterAll(() => site.stop());

describe("dist/genapi: sitemap of a fixture site (--allow-private-targets)", () => {
  let server: RunningBinary;
  let key: string;
  beforeAll(async () => {
    const dbPath = join(tempDir(), "genapi.db");
    key = await createKey(dbPath);
    server = await startBinary({ dbPath, args: ["--allow-private-targets"] });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  test("lists exactly the indexable pages, with the contract's data", async () => {
    const res = await generate(server, key, `${site.url}/`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.success).toBe(true);
    expect(body.message).toBe("Sitemap generated successfully.");
    expect(body.data.url).toBe(`${site.url}/`);
    const locs = [...body.data.sitemap.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m: RegExpMatchArray) => m[1]);
    expect(locs).toEqual([`${site.url}/`, `${site.url}/about`, `${site.url}/blog/`, `${site.url}/blog/post?id=1&amp;lang=en`]);
    expect(body.data.url_count).toBe(4);
    expect(body.data.truncated).toBe(false);
    // /, /about, /blog/, /blog/post, /gone (404), /old (301): robots.txt and /private/ not counted.
    expect(body.data.pages_crawled).toBe(6);
    expect(
      body.data.sitemap.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'),
    ).toBe(true);
    expect(site.requests.some((r) => r.includes("/private/"))).toBe(false);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  test("a start page that fails answers 502 naming the URL as sent", async () => {
    const res = await generate(server, key, `${site.url}/gone`);
    expect(res.status).toBe(502);
    expect(await json(res)).toEqual({ success: false, message: `Could not crawl ${site.url}/gone: HTTP 404` });
  });

  test("robots.txt that disallows the start URL answers 502", async () => {
    const res = await generate(server, key, `${site.url}/private/x`);
    expect(res.status).toBe(502);
    expect((await json(res)).message).toBe(`Could not crawl ${site.url}/private/x: robots.txt disallows it`);
  });

  test("the key never reaches the logs", async () => {
    await Bun.sleep(50);
    expect(server.stdout.join("\n")).not.toContain(key);
    expect(server.stdout.join("\n")).not.toContain(key.slice(7));
    expect(server.stderr()).not.toContain(key);
    const lines = server.stdout.map((l) => JSON.parse(l)).filter((l) => l.path === "/api/generate");
    expect(lines.map((l) => l.status)).toEqual([200, 502, 502]);
  });
});

describe("dist/genapi: quotas across restarts and processes", () => {
  test("counters survive a restart of the executable", async () => {
    const dbPath = join(tempDir(), "genapi.db");
    const key = await createKey(dbPath);
    const args = ["--allow-private-targets", "--free-daily-limit", "2"];
    const first = await startBinary({ dbPath, args });
    expect((await generate(first, key, `${site.url}/about`)).status).toBe(200);
    expect(await first.stop()).toBe(0);
    const second = await startBinary({ dbPath, args });
    expect((await generate(second, key, `${site.url}/about`)).status).toBe(200);
    const refused = await generate(second, key, `${site.url}/about`);
    expect(refused.status).toBe(429);
    expect((await json(refused)).message).toBe("API rate limit exceeded (2 requests per day). Please contact us for premium access.");
    expect(await second.stop()).toBe(0);
  });

  test("two processes on one database share the quota exactly", async () => {
    const dbPath = join(tempDir(), "genapi.db");
    const key = await createKey(dbPath, "--daily-limit", "7");
    const servers = await Promise.all([
      startBinary({ dbPath, args: ["--allow-private-targets"] }),
      startBinary({ dbPath, args: ["--allow-private-targets"] }),
    ]);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => generate(servers[i % 2]!, key, `${site.url}/about`).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(7);
    expect(statuses.filter((s) => s === 429)).toHaveLength(13);
    for (const server of servers) expect(await server.stop()).toBe(0);
  });

  test("X-Forwarded-For is ignored without --trust-proxy and honoured with it", async () => {
    const dbPath = join(tempDir(), "genapi.db");
    const key = await createKey(dbPath);
    const args = ["--allow-private-targets", "--free-daily-limit", "1"];
    const untrusting = await startBinary({ dbPath, args });
    expect((await generate(untrusting, key, `${site.url}/about`, { "x-forwarded-for": "198.51.100.1" })).status).toBe(200);
    // A spoofed address does not buy a fresh quota: the peer (127.0.0.1) is counted.
    expect((await generate(untrusting, key, `${site.url}/about`, { "x-forwarded-for": "198.51.100.2" })).status).toBe(429);
    expect(await untrusting.stop()).toBe(0);

    const trusting = await startBinary({ dbPath, args: [...args, "--trust-proxy", "127.0.0.1/32"] });
    const viaProxy = (xff: string) => generate(trusting, key, `${site.url}/about`, { "x-forwarded-for": xff });
    expect((await viaProxy("198.51.100.1")).status).toBe(200);
    expect((await viaProxy("198.51.100.1")).status).toBe(429);
    // The rightmost entry that is not a trusted proxy is the client: a forged left entry changes nothing.
    expect((await viaProxy("203.0.113.50, 198.51.100.1")).status).toBe(429);
    expect((await viaProxy("198.51.100.2")).status).toBe(200);
    const generateLines = () => trusting.stdout.map((l) => JSON.parse(l)).filter((l) => l.path === "/api/generate");
    await waitFor(() => generateLines().length >= 4, 2_000, "the log lines of the four /api/generate requests");
    const ips = generateLines().map((l) => l.ip);
    expect(ips).toEqual(["198.51.100.1", "198.51.100.1", "198.51.100.1", "198.51.100.2"]);
    expect(await trusting.stop()).toBe(0);
  });
});

describe("dist/genapi: graceful stop", () => {
  test("SIGTERM during a slow crawl: the crawl still answers 200, then the process exits 0", async () => {
    const slow = await serveSite({
      "/": page("slow home", ["/slow"]),
      "/slow": async () => {
        await Bun.sleep(1500);
        return new Response(page("slow", []), { headers: { "content-type": "text/html" } });
      },
    });
    const dbPath = join(tempDir(), "genapi.db");
    const key = await createKey(dbPath);
    const server = await startBinary({ dbPath, args: ["--allow-private-targets"] });
    const pending = generate(server, key, `${slow.url}/`);
    await waitFor(() => slow.requests.some((r) => r.endsWith("/slow")), 10_000, "the crawl's request for /slow");
    server.proc.kill("SIGTERM");
    const res = await pending;
    expect(res.status).toBe(200);
    expect((await json(res)).data.url_count).toBe(2);
    expect(await server.proc.exited).toBe(0);
    await slow.stop();
  });
});
