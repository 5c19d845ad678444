// POST /api/generate through app.handle(): the contract's checks, in order, with exact texts.
import { describe, expect, test } from "bun:test";
import { createKey } from "../../src/db/sqlite/keys.ts";
import { CrawlSlots } from "../../src/sitemap/crawl-slots.ts";
import { CrawlFailedError, NothingListedError, TargetRefusedError } from "../../src/crawler/errors.ts";
import { crawlResult, testApp } from "../support/app.ts";
import { waitFor } from "../support/wait.ts";

const AUTH = "Authentication failed. Invalid or missing API key.";
const INVALID_URL = "Invalid URL. Provide a full URL that includes http:// or https://.";

function setup(...args: Parameters<typeof testApp>) {
  const ctx = testApp(...args);
  const free = createKey(ctx.db, { name: "free", dailyLimit: null }, ctx.state.now).key;
  const premium = createKey(ctx.db, { name: "premium", dailyLimit: 3 }, ctx.state.now).key;
  const generate = (key: string | null, body: unknown = { url: "https://example.com/" }, headers: Record<string, string> = {}) =>
    ctx.call("/api/generate", {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { "x-api-key": key } : {}), ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return { ...ctx, free, premium, generate };
}

const json = async (res: Response) => (await res.json()) as any;

describe("POST /api/generate: step 1, the key", () => {
  test.each([
    ["missing", null],
    ["malformed", "nope"],
    ["bad checksum", `genapi_${"A".repeat(38)}`],
  ])("%s key: 401 with the exact message and no rate-limit headers", async (_, key) => {
    const { generate } = setup();
    const res = await generate(key);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ success: false, message: AUTH });
    expect(res.headers.get("x-ratelimit-limit")).toBeNull();
  });

  test("a revoked key is refused; the key check comes before the body check", async () => {
    const { db, generate, free, state } = setup();
    db.query("UPDATE api_keys SET revoked_at = ? WHERE prefix = ?").run(state.now.toISOString(), free.slice(0, 12));
    const res = await generate(free, "not json");
    expect(res.status).toBe(401);
    expect((await json(res)).message).toBe(AUTH);
  });

  test("a valid key sets last_used_at", async () => {
    const { db, generate, free } = setup();
    await generate(free);
    const row = db.query("SELECT last_used_at FROM api_keys WHERE prefix = ?").get(free.slice(0, 12)) as { last_used_at: string };
    expect(row.last_used_at).toBe("2026-11-21T10:00:00.000Z");
  });
});

describe("POST /api/generate: steps 2-4, body, URL and target (never counted)", () => {
  test.each([
    ["not JSON", "{url:", 400, 'Request body must be JSON: {"url": "https://..."}.'],
    ["JSON but not an object", "[1]", 400, 'Request body must be a JSON object: {"url": "https://..."}.'],
    ["empty", "", 400, 'Request body must be JSON: {"url": "https://..."}.'],
    [
      "over 16 KiB",
      JSON.stringify({ url: "https://example.com/", pad: "x".repeat(17 * 1024) }),
      413,
      "Request body is larger than 16 KiB.",
    ],
    ["url missing", "{}", 400, INVALID_URL],
    ["url not a string", '{"url": 42}', 400, INVALID_URL],
    ["url relative", '{"url": "/about"}', 400, INVALID_URL],
    ["url ftp", '{"url": "ftp://example.com/"}', 400, INVALID_URL],
    ["url with credentials", '{"url": "https://user:pw@example.com/"}', 400, INVALID_URL],
    ["url over 2,048 characters", JSON.stringify({ url: `https://example.com/${"a".repeat(2030)}` }), 400, INVALID_URL],
  ])("%s: %i", async (_, body, status, message) => {
    const { generate, free } = setup();
    const res = await generate(free, body);
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ success: false, message });
    // Authenticated: the headers show the quota, untouched.
    expect(res.headers.get("x-ratelimit-remaining")).toBe("5");
  });

  test("a refused target answers 400 with the guard's reason and uses no quota", async () => {
    const { generate, free } = setup({
      checkTarget: async () => {
        throw new TargetRefusedError("Target address not allowed: 127.0.0.1 is a loopback address.");
      },
    });
    for (let i = 0; i < 7; i++) {
      const res = await generate(free, { url: "http://127.0.0.1/" });
      expect(res.status).toBe(400);
      expect((await json(res)).message).toBe("Target address not allowed: 127.0.0.1 is a loopback address.");
      expect(res.headers.get("x-ratelimit-remaining")).toBe("5");
    }
  });
});

describe("POST /api/generate: step 5, the daily quota", () => {
  test("free keys: 5 per client address per UTC day, the 6th answers 429 with Retry-After", async () => {
    const { generate, free } = setup();
    for (let i = 1; i <= 5; i++) {
      const res = await generate(free);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(5 - i));
    }
    const refused = await generate(free);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      success: false,
      message: "API rate limit exceeded (5 requests per day). Please contact us for premium access.",
    });
    // 10:00:00 UTC: 14 hours to midnight.
    expect(refused.headers.get("retry-after")).toBe("50400");
    expect(refused.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2026-11-22T00:00:00Z") / 1000));
    expect(refused.headers.get("ratelimit-policy")).toBe('"daily";q=5;w=86400');
    expect(refused.headers.get("ratelimit")).toBe('"daily";r=0;t=50400');
  });

  test("free keys share the address's quota; another address has its own", async () => {
    const ctx = setup();
    const other = createKey(ctx.db, { name: "second free", dailyLimit: null }, ctx.state.now).key;
    for (let i = 0; i < 3; i++) await ctx.generate(ctx.free);
    for (let i = 0; i < 2; i++) expect((await ctx.generate(other)).status).toBe(200);
    expect((await ctx.generate(other)).status).toBe(429);
    ctx.state.ip = "2001:db8:1:2::99";
    expect((await ctx.generate(other)).status).toBe(200);
    ctx.state.ip = "2001:db8:1:2:ffff::1"; // same /64
    expect((await ctx.generate(other)).headers.get("x-ratelimit-remaining")).toBe("3");
  });

  test("premium keys: their own limit, from any address, in the 429 message", async () => {
    const ctx = setup();
    for (const ip of ["198.51.100.1", "198.51.100.2", "2001:db8::1"]) {
      ctx.state.ip = ip;
      expect((await ctx.generate(ctx.premium)).status).toBe(200);
    }
    const refused = await ctx.generate(ctx.premium);
    expect(refused.status).toBe(429);
    expect((await json(refused)).message).toBe("API rate limit exceeded (3 requests per day). Please contact us for premium access.");
    expect(refused.headers.get("ratelimit-policy")).toBe('"daily";q=3;w=86400');
  });

  test("the quota resets at 00:00 UTC", async () => {
    const ctx = setup();
    ctx.state.now = new Date("2026-11-21T23:59:59.000Z");
    for (let i = 0; i < 5; i++) await ctx.generate(ctx.free);
    const last = await ctx.generate(ctx.free);
    expect(last.status).toBe(429);
    expect(last.headers.get("retry-after")).toBe("1");
    ctx.state.now = new Date("2026-11-22T00:00:00.000Z");
    const next = await ctx.generate(ctx.free);
    expect(next.status).toBe(200);
    expect(next.headers.get("x-ratelimit-remaining")).toBe("4");
    expect(next.headers.get("ratelimit")).toBe('"daily";r=4;t=86400');
  });

  test("30 concurrent requests with 5 left admit exactly 5", async () => {
    const ctx = setup({
      crawl: async (url) => {
        await Bun.sleep(5);
        return crawlResult({ url, entries: [], pagesCrawled: 1, truncated: false, durationMs: 5 });
      },
    });
    const statuses = await Promise.all(Array.from({ length: 30 }, () => ctx.generate(ctx.free).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(25);
  });
});

describe("POST /api/generate: step 6, capacity", () => {
  test("beyond the running and queued crawls: 503 with Retry-After, and the admission is given back", async () => {
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const slots = new CrawlSlots(1, 1);
    const ctx = setup({
      slots,
      crawl: async (url) => {
        await gate;
        return crawlResult({ url, entries: [], pagesCrawled: 1, truncated: false, durationMs: 1 });
      },
    });
    const running = ctx.generate(ctx.free);
    const queued = ctx.generate(ctx.free);
    await waitFor(() => slots.active === 1 && slots.queued === 1, 2_000, "one crawl running and one queued");
    const busy = await ctx.generate(ctx.free);
    expect(busy.status).toBe(503);
    expect(busy.headers.get("retry-after")).toBe("30");
    expect((await json(busy)).message).toBe("The service is busy: too many sitemap crawls are running. Try again shortly.");
    // Two admitted and running/queued; the refused one gave its admission back.
    expect(busy.headers.get("x-ratelimit-remaining")).toBe("3");
    finish();
    expect((await running).status).toBe(200);
    expect((await queued).status).toBe(200);
    expect((await ctx.generate(ctx.free)).headers.get("x-ratelimit-remaining")).toBe("2");
  });
});

describe("POST /api/generate: step 7, the crawl", () => {
  test("success: the contract's data fields and the sitemap XML", async () => {
    const ctx = setup({
      crawl: async () =>
        crawlResult({
          url: "https://example.com/home",
          entries: [{ loc: "https://example.com/a?x=1&y=2" }, { loc: "https://example.com/home", lastmod: "2026-11-20T08:00:00Z" }],
          pagesCrawled: 7,
          truncated: true,
          durationMs: 1830.4,
        }),
    });
    const res = await ctx.generate(ctx.free, { url: "https://example.com/" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      success: true,
      message: "Sitemap generated successfully.",
      data: {
        url: "https://example.com/home",
        sitemap:
          '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
          "<url><loc>https://example.com/a?x=1&amp;y=2</loc></url>" +
          "<url><loc>https://example.com/home</loc><lastmod>2026-11-20T08:00:00Z</lastmod></url>" +
          "</urlset>\n",
        url_count: 2,
        pages_crawled: 7,
        truncated: true,
        duration_ms: 1830,
        generated_at: "2026-11-21T10:00:00.000Z",
        excluded: { robots: 0, noindex: 0, canonical: 0, redirect: 0, not_html: 0, http_error: 0, failed: 0, filtered: 0, invalid: 0 },
        excluded_examples: {
          robots: [],
          noindex: [],
          canonical: [],
          redirect: [],
          not_html: [],
          http_error: [],
          failed: [],
          filtered: [],
          invalid: [],
        },
        politeness: { max_concurrency: 4, delay_ms: 0, crawl_delay_s: null, throttled: 0, retries: 0, paused_ms: 0 },
        render: { mode: "never", rendered: false, pages_rendered: 0 },
      },
    });
    expect(res.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  test("a start page that cannot be crawled: 502 naming the URL as sent, and it counts", async () => {
    const ctx = setup({
      crawl: async () => {
        throw new CrawlFailedError("HTTP 404");
      },
    });
    const res = await ctx.generate(ctx.free, { url: "HTTPS://Example.com" });
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ success: false, message: "Could not crawl HTTPS://Example.com: HTTP 404" });
    expect(res.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  test("a crawl that lists nothing: 422 naming the URL as sent and the reason, and it counts", async () => {
    const ctx = setup({
      crawl: async () => {
        throw new NothingListedError("the start page is noindex");
      },
    });
    const res = await ctx.generate(ctx.free, { url: "https://example.com" });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      success: false,
      message: "Could not crawl https://example.com: no indexable page found (the start page is noindex)",
    });
    expect(res.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  test("a redirect of the start URL to a forbidden address: 400, and it counts", async () => {
    const ctx = setup({
      crawl: async () => {
        throw new TargetRefusedError("Target address not allowed: 10.0.0.1 is a private address.");
      },
    });
    const res = await ctx.generate(ctx.free);
    expect(res.status).toBe(400);
    expect((await json(res)).message).toBe("Target address not allowed: 10.0.0.1 is a private address.");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("4");
  });
});

describe("POST /api/generate: unexpected failures", () => {
  test("an internal error answers a JSON 500 that still carries the quota headers", async () => {
    const errors: string[] = [];
    const ctx = setup({
      log: (message) => errors.push(message),
      crawl: async () => {
        throw new Error("disk on fire");
      },
    });
    const res = await ctx.generate(ctx.free);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ success: false, message: "Internal server error." });
    expect(res.headers.get("x-ratelimit-remaining")).toBe("4");
    // Told once, through the injected log, with what failed.
    expect(errors).toHaveLength(1);
    expect(errors[0]).toStartWith("POST /api/generate failed: Error: disk on fire");
  });
});
