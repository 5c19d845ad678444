// The link report (the README's link report) through the executable: POST /api/generate's
// data.links and `genapi crawl --link-report FILE` give exactly what the fixture site holds (jobs:
// test/jobs/e2e-suite.ts), and a site with more broken links than a list holds is cut at 1,000 with
// `truncated` in data.links while FILE keeps them all. The site's /refused resets its connection
// (an in-scope refused connection cannot be served: the scope is one host and port); the engine
// tests reroute it to a closed port (test/crawler/links.site.test.ts). /slow never answers: each
// crawl waits out the 10 s request timeout, so the three crawls of the site run at once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createKey, runBinary, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { serveLinkSite, serveManyBroken, type LinkSite } from "../support/link-site.ts";
import { stopRawServers } from "../support/raw-http-server.ts";

let server: RunningBinary;
let key: string;

beforeAll(async () => {
  const dbPath = join(tempDir(), "genapi.db");
  key = await createKey(dbPath, "--daily-limit", "100");
  server = await startBinary({ dbPath, args: ["--allow-private-targets", "--max-pages", "2000"] });
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
  stopRawServers();
});

const generate = async (body: Record<string, unknown>) => {
  const res = await fetch(`${server.url}/api/generate`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe("the link report through the executable", () => {
  let site: LinkSite;
  beforeAll(() => {
    site = serveLinkSite({ fillers: 9 });
  });

  test("/api/generate and genapi crawl report exactly what the site holds", async () => {
    const dir = tempDir();
    const file = join(dir, "links.json");
    const [api, plain, cli] = await Promise.all([
      generate({ url: `${site.url}/`, link_report: true, sitemaps_from_robots: true }),
      generate({ url: `${site.url}/`, sitemaps_from_robots: true }),
      runBinary(["crawl", `${site.url}/`, "--sitemaps-from-robots", "--link-report", file, "--output", join(dir, "sitemap.xml"), "--json"]),
    ]);
    const expected = site.expected("connection reset");
    expect(api.status).toBe(200);
    expect(api.body.data.links).toEqual(expected);
    // Without the option, no `links`, and the same sitemap.
    expect(plain.status).toBe(200);
    expect(plain.body.data.links).toBeUndefined();
    expect(plain.body.data.sitemap).toBe(api.body.data.sitemap);

    expect(cli.code).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(expected);
    const report = JSON.parse(cli.stderr);
    expect(report.links).toEqual(expected);
    const { sitemap: _, links: __, generated_at: ___, duration_ms: ____, ...apiReport } = api.body.data;
    expect(report).toMatchObject(apiReport);
    for (const path of ["/private/x", "/private/y", "/nofollowed", "/never"]) expect(site.requests).not.toContain(path);
  }, 60_000);

  test("genapi crawl without --json: the summary line counts the lists and names the file", async () => {
    const file = join(tempDir(), "links.json");
    const cli = await runBinary(["crawl", `${site.url}/`, "--link-report", file, "--output", join(tempDir(), "sitemap.xml")]);
    expect(cli.code).toBe(0);
    expect(cli.stderr).toContain(`; link report: 7 broken links, 4 redirects, 0 sitemap errors written to ${file}\n`);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ ...site.expected("connection reset"), sitemap_errors: [] });
    const bad = await runBinary(["crawl", `${site.url}/`, "--link-report", "/nonexistent-dir/links.json"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('genapi: --link-report: cannot write in directory "/nonexistent-dir"\n');
  }, 60_000);

  test("link_report must be a boolean or the object of its checks: 400 naming it", async () => {
    const res = await generate({ url: `${site.url}/`, link_report: "yes" });
    expect(res).toEqual({
      status: 400,
      body: { success: false, message: 'link_report must be true, false or an object {"external": true|false, "resources": true|false}.' },
    });
  });
});

test("1,003 broken links: data.links holds the first 1,000 by url and says truncated; --link-report FILE holds them all", async () => {
  const site = serveManyBroken(1_003);
  try {
    const file = join(tempDir(), "links.json");
    const [api, cli] = await Promise.all([
      generate({ url: `${site.url}/`, link_report: true }),
      runBinary(["crawl", `${site.url}/`, "--link-report", file, "--json"]),
    ]);
    expect(api.status).toBe(200);
    const links = api.body.data.links;
    expect(links.truncated).toBe(true);
    expect(links.broken).toHaveLength(1_000);
    expect(links.broken.map((b: { url: string }) => b.url)).toEqual(
      Array.from({ length: 1_000 }, (_, i) => `${site.url}/broken/${String(i).padStart(5, "0")}`),
    );
    expect(cli.code).toBe(0);
    const full = JSON.parse(readFileSync(file, "utf8"));
    expect(full.truncated).toBe(false);
    expect(full.broken).toHaveLength(1_003);
    expect(full.broken.slice(0, 1_000)).toEqual(links.broken);
    expect(JSON.parse(cli.stderr).links).toEqual(links);
  } finally {
    site.stop();
  }
}, 60_000);
