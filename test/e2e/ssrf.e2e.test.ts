// The address guard end to end: dist/genapi with default settings refuses every spelling of
// loopback, and the fixture (on loopback) never sees a request. No traffic leaves the machine.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createKey, generate, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { serveSite, type Site } from "../support/site.ts";

const INVALID_URL = "Invalid URL. Provide a full URL that includes http:// or https://.";
const html = (body: string) => new Response(body, { headers: { "content-type": "text/html" } });

describe("dist/genapi, default settings: loopback in every spelling is refused", () => {
  let site: Site;
  let server: RunningBinary;
  let key: string;
  beforeAll(async () => {
    site = await serveSite({ "/": html("<a href='/a'>a</a>"), "/a": html("a") });
    const dbPath = join(tempDir(), "genapi.db");
    key = await createKey(dbPath);
    server = await startBinary({ dbPath });
  });
  afterAll(async () => {
    await server.stop();
    await site.stop();
  });

  const spellings = (port: number) => [
    `http://127.0.0.1:${port}/`,
    `http://localhost:${port}/`,
    `http://localhost.:${port}/`,
    `http://LOCALHOST:${port}/`,
    `http://app.localhost:${port}/`,
    `http://2130706433:${port}/`,
    `http://0x7f000001:${port}/`,
    `http://0177.0.0.1:${port}/`,
    `http://127.1:${port}/`,
    `http://0x7f.1:${port}/`,
    `http://[::1]:${port}/`,
    `http://[::ffff:127.0.0.1]:${port}/`,
    `http://[::ffff:7f00:1]:${port}/`,
    `http://[::127.0.0.1]:${port}/`,
    `http://0.0.0.0:${port}/`,
    `http://0:${port}/`,
    `http://127.0.0.1.:${port}/`,
  ];

  test("each spelling: 400 naming the reason; the fixture sees no request; no quota used", async () => {
    for (const url of spellings(site.port)) {
      const res = await generate(server, key, url);
      expect(res.status, url).toBe(400);
      const body = (await res.json()) as any;
      expect(body.success).toBe(false);
      expect(body.message, url).toMatch(/^Target address not allowed: .*(loopback|unspecified|IPv4-compatible)/);
      expect(res.headers.get("x-ratelimit-remaining")).toBe("5");
    }
    expect(site.requests).toEqual([]);
  });

  test("userinfo forms are invalid URLs (400, step 3)", async () => {
    for (const url of [
      `http://user:pw@127.0.0.1:${site.port}/`,
      `http://user@localhost:${site.port}/`,
      `http://@127.0.0.1:${site.port}/`,
      `http://example.com@127.0.0.1:${site.port}/`,
    ]) {
      const res = await generate(server, key, url);
      expect(res.status, url).toBe(400);
      expect(((await res.json()) as any).message).toBe(INVALID_URL);
    }
    expect(site.requests).toEqual([]);
  });

  test("ports outside 80, 443 and 1024-65535 are refused", async () => {
    const res = await generate(server, key, "http://example.com:22/");
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).message).toBe("Target port 22 not allowed: only 80, 443 and 1024-65535.");
  });
});

describe("dist/genapi --allow-target: an exception for one host and port only", () => {
  test("a redirect from the allowed fixture to a second fixture on another port is refused at the hop", async () => {
    const second = await serveSite({ "/": html("second") });
    const first = await serveSite({
      "/": html(`<a href="/hop">hop</a>`),
      "/start": new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${second.port}/` } }),
      "/hop": new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${second.port}/` } }),
    });
    const dbPath = join(tempDir(), "genapi.db");
    const key = await createKey(dbPath);
    const server = await startBinary({ dbPath, args: ["--allow-target", `127.0.0.1:${first.port}`] });
    try {
      // The start URL redirects to a forbidden address: 400, and it counts (it was admitted).
      const start = await generate(server, key, `http://127.0.0.1:${first.port}/start`);
      expect(start.status).toBe(400);
      expect(((await start.json()) as any).message).toMatch(/^Target address not allowed: 127\.0\.0\.1 is a loopback address/);
      expect(start.headers.get("x-ratelimit-remaining")).toBe("4");
      // A link whose redirect hop is forbidden is skipped; the crawl goes on.
      const crawl = await generate(server, key, `http://127.0.0.1:${first.port}/`);
      expect(crawl.status).toBe(200);
      const data = ((await crawl.json()) as any).data;
      expect(data.url_count).toBe(1);
      expect(second.requests).toEqual([]);
      expect(first.requests.map((r) => new URL(r).pathname)).toContain("/hop");
    } finally {
      await server.stop();
      await first.stop();
      await second.stop();
    }
  });
});
