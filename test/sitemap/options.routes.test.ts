// The crawl options at POST /api/generate's step 3: exact 400s naming the field, counted nowhere,
// and the accepted options handed to the crawl; the report in the success data.
import { expect, test } from "bun:test";
import { createKey } from "../../src/db/sqlite/keys.ts";
import { defaultCrawlOptions, type CrawlOptions } from "../../src/crawler/options.ts";
import { crawlResult, testApp } from "../support/app.ts";

function setup() {
  const seen: CrawlOptions[] = [];
  const ctx = testApp({
    maxPages: 300,
    crawl: async (url, _signal, options) => {
      seen.push(options);
      const result = crawlResult({ url, entries: [{ loc: url }], pagesCrawled: 3, truncated: false, durationMs: 5 });
      result.excluded.noindex = 2;
      return result;
    },
  });
  const key = createKey(ctx.db, { name: "free", dailyLimit: null }, ctx.state.now).key;
  const generate = (body: Record<string, unknown>) =>
    ctx.call("/api/generate", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify(body),
    });
  return { generate, seen };
}

const URL_ = "https://example.com/";

test.each([
  [{ max_pages: 301 }, "max_pages must be an integer from 1 to 300."],
  [{ max_pages: "10" }, "max_pages must be an integer from 1 to 300."],
  [{ max_depth: -1 }, "max_depth must be an integer of 0 or more."],
  [{ include: "/blog" }, "include must be an array of at most 50 patterns (strings)."],
  [{ exclude: ["admin"] }, "exclude[0] must be a pattern that starts with / and has at most 2048 characters."],
  [{ ignore_query_params: [""] }, "ignore_query_params[0] must be a parameter name of 1 to 256 characters."],
  [{ sitemaps_from_robots: "yes" }, "sitemaps_from_robots must be true or false."],
  [{ alternates: 1 }, "alternates must be true or false."],
  [{ images: null }, "images must be true or false."],
  [{ link_report: "true" }, 'link_report must be true, false or an object {"external": true|false, "resources": true|false}.'],
  [{ link_report: { external: "yes" } }, "link_report.external must be true or false."],
  [{ link_report: { external: true, pages: true } }, "link_report takes only external and resources (true or false each)."],
])("%j: 400 naming the field, before admission (nothing counted, no crawl)", async (fields, message) => {
  const { generate, seen } = setup();
  const res = await generate({ url: URL_, ...fields });
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({ success: false, message });
  expect(res.headers.get("x-ratelimit-remaining")).toBe("5");
  expect(seen).toEqual([]);
});

test("the URL is checked first: an invalid URL with an invalid option answers the URL's message", async () => {
  const { generate } = setup();
  const res = await generate({ url: "nope", max_pages: 0 });
  expect(((await res.json()) as { message: string }).message).toBe("Invalid URL. Provide a full URL that includes http:// or https://.");
});

test("accepted options reach the crawl; the default max_pages is the server's cap; the report is in data", async () => {
  const { generate, seen } = setup();
  const res = await generate({ url: URL_, max_depth: 2, exclude: ["/admin/"], images: true, unknown: "ignored" });
  expect(res.status).toBe(200);
  expect(res.headers.get("x-ratelimit-remaining")).toBe("4");
  expect(seen).toEqual([{ ...defaultCrawlOptions(300), max_depth: 2, exclude: ["/admin/"], images: true }]);
  const { data } = (await res.json()) as { data: Record<string, unknown> };
  expect(data.excluded).toEqual({
    robots: 0,
    noindex: 2,
    canonical: 0,
    redirect: 0,
    not_html: 0,
    http_error: 0,
    failed: 0,
    filtered: 0,
    invalid: 0,
  });
  expect(Object.keys(data.excluded_examples as object)).toEqual([
    "robots",
    "noindex",
    "canonical",
    "redirect",
    "not_html",
    "http_error",
    "failed",
    "filtered",
    "invalid",
  ]);
  await generate({ url: URL_, max_pages: 300 });
  expect(seen[1]!.max_pages).toBe(300);
});
