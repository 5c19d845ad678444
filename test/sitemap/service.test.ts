// The crawler as the server wires it: real clock, guarded fetch, configured limits.
import { describe, expect, test } from "bun:test";
import { defaultCrawlOptions } from "../../src/crawler/options.ts";
import { TargetRefusedError } from "../../src/crawler/errors.ts";
import { createSitemapService } from "../../src/sitemap/service.ts";
import { serveSite } from "../support/site.ts";

const config = { maxPages: 20, crawlTimeoutSeconds: 5, allowPrivateTargets: true, allowTargets: [] };

describe("createSitemapService", () => {
  test("lists lastmod from Last-Modified (checked against the wall clock)", async () => {
    const site = await serveSite({
      "/": new Response("<a href='/b'>b</a>", {
        headers: { "content-type": "text/html", "last-modified": "Tue, 20 Oct 2026 08:00:00 GMT" },
      }),
      "/b": "<p>b</p>",
    });
    try {
      const result = await createSitemapService(config).crawl(
        `${site.url}/`,
        new AbortController().signal,
        defaultCrawlOptions(config.maxPages),
      );
      expect(result.entries).toEqual([
        { loc: `${site.url}/`, lastmod: "2026-10-20T08:00:00Z" },
        { loc: `${site.url}/b`, lastmod: undefined },
      ]);
    } finally {
      await site.stop();
    }
  });

  test("checkTarget refuses private targets by default, and leaves unresolvable names to the crawl", async () => {
    const strict = createSitemapService(
      { ...config, allowPrivateTargets: false },
      {
        resolve: async (host) => {
          if (host === "nowhere.test") throw new Error("ENOTFOUND");
          return [{ address: "10.1.2.3", family: 4 }];
        },
      },
    );
    await expect(strict.checkTarget(new URL("http://intranet.test/"))).rejects.toThrow(TargetRefusedError);
    await expect(strict.checkTarget(new URL("http://nowhere.test/"))).resolves.toBeUndefined();
  });
});
