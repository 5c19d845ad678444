// Politeness toward crawled hosts, in one process: crawls through createCrawlNetwork (the address
// guard, the host gates, the HTTP client) against a loopback site that records what it sees.
// Several processes sharing a store are test/db/hosts.test.ts (the leases) and
// test/e2e/politeness.e2e.test.ts (the executables).
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import {
  type CrawlNetwork,
  type CrawlResult,
  crawlSite,
  createCrawlNetwork,
  defaultCrawlLimits,
  defaultCrawlOptions,
} from "../../../src/crawler/index.ts";
import { hostOf, retryAfterMsFor } from "../../../src/crawler/net/politeness.ts";
import { openDatabase } from "../../../src/db/sqlite/database.ts";
import { createSqliteHostLeases } from "../../../src/db/sqlite/hosts.ts";
import { sqliteMigrations } from "../../../src/db/sqlite/migrations.ts";
import { sqliteAccess } from "../../../src/db/sqlite/store.ts";
import { tempDir } from "../../support/binary.ts";
import { type PoliteSite, type PoliteSiteOptions, pagePath, servePoliteSite } from "../../support/polite-site.ts";

/** Timers may fire a little early or late; starts are compared with this much slack (ms). */
const JITTER_MS = 3;
const sites: PoliteSite[] = [];
afterEach(async () => {
  await Promise.all(sites.splice(0).map((site) => site.stop()));
});
const serve = (options: PoliteSiteOptions) => {
  const site = servePoliteSite(options);
  sites.push(site);
  return site;
};

const network = (hostConcurrency = 4, hostDelayMs = 0, coordinator?: Parameters<typeof createCrawlNetwork>[0]["coordinator"]) =>
  createCrawlNetwork({ policy: { allowPrivate: true, allowTargets: [] }, politeness: { hostConcurrency, hostDelayMs }, coordinator });

function crawl(site: PoliteSite, net: CrawlNetwork, options: Partial<ReturnType<typeof defaultCrawlOptions>> = {}, timeoutMs = 60_000) {
  const limits = { ...defaultCrawlLimits, maxPages: 1_000, timeoutMs };
  return crawlSite(`${site.url}/`, limits, { fetch: net, now: Date.now, userAgent: "genapi/0.1.0" }, undefined, {
    ...defaultCrawlOptions(1_000),
    ...options,
  });
}

/**
 * Starts `interval` apart as the site sees them. genapi spaces its starts a tenth wider than asked;
 * the site sees arrivals, and on a loaded machine a request now and then arrives late (a new
 * connection), which shortens the gap after it while the two around it add up. So: no gap under
 * half the interval, and no two consecutive gaps under twice the interval less JITTER_MS.
 */
function expectSpaced(site: PoliteSite, interval: number): void {
  const starts = site.visits.map((v) => v.start).sort((a, b) => a - b);
  const gaps = starts.slice(1).map((t, i) => Math.round(t - starts[i]!));
  expect(site.minStartGap(), `gaps: ${gaps.join(", ")}`).toBeGreaterThanOrEqual(interval / 2);
  const pairs = starts.slice(2).map((t, i) => t - starts[i]!);
  expect(Math.min(...pairs), `gaps: ${gaps.join(", ")}`).toBeGreaterThanOrEqual(2 * interval - JITTER_MS);
}

const listed = (result: CrawlResult) => result.entries.map((e) => new URL(e.loc).pathname).sort();
const allPages = (pages: number) => Array.from({ length: pages }, (_, i) => pagePath(i)).sort();

describe("one process", () => {
  test("three crawls of one host never have more than --host-concurrency requests in flight together, and reach it", async () => {
    const site = serve({ pages: 40, latencyMs: 15 });
    const net = network(2);
    const results = await Promise.all([crawl(site, net), crawl(site, net), crawl(site, net)]);
    for (const result of results) expect(listed(result)).toEqual(allPages(40));
    expect(site.maxInFlight()).toBe(2);
  });

  test("--host-delay: request starts at least that far apart, across crawls", async () => {
    const site = serve({ pages: 6 });
    const net = network(4, 150);
    await Promise.all([crawl(site, net), crawl(site, net)]);
    expect(site.visits.length).toBe(2 * 7);
    expectSpaced(site, 150);
  });

  test("a request's time limit does not count its wait for the host", async () => {
    const site = serve({ pages: 4 });
    // Each request waits up to 3 x 300 ms for its start, longer than its own 200 ms limit.
    const result = await crawlSite(
      `${site.url}/`,
      { ...defaultCrawlLimits, requestTimeoutMs: 200 },
      { fetch: network(4, 300), now: Date.now, userAgent: "genapi/0.1.0" },
    );
    expect(listed(result)).toEqual(allPages(4));
    expect(result.excluded.failed).toBe(0);
  });

  test("robots.txt's Crawl-delay for genapi spaces the requests to the host; the report says it", async () => {
    const robots = "User-agent: *\nCrawl-delay: 5\n\nUser-agent: genapi\nCrawl-delay: 0.5\nAllow: /\n";
    const site = serve({ pages: 4, robots });
    const result = await crawl(site, network());
    expect(listed(result)).toEqual(allPages(4));
    const pages = site.visits.filter((v) => v.path !== "/robots.txt").map((v) => v.start);
    for (let i = 1; i < pages.length; i++) expect(pages[i]! - pages[i - 1]!).toBeGreaterThanOrEqual(500 - JITTER_MS);
    expect(result.politeness.crawl_delay_s).toBe(0.5);
  });

  test("a 429 with Retry-After pauses the host for every crawl; the URL is asked again and listed", async () => {
    const site = serve({
      pages: 8,
      latencyMs: 5,
      answer: (path, nth) =>
        path === "/p3" && nth === 1 ? new Response("slow down", { status: 429, headers: { "Retry-After": "1" } }) : undefined,
    });
    const net = network();
    const [one, two] = await Promise.all([crawl(site, net), crawl(site, net)]);
    for (const result of [one, two]) expect(listed(result)).toEqual(allPages(8));
    const throttled = site.visitsOf("/p3")[0]!;
    expect(throttled.status).toBe(429);
    // Requests already sent when the 429 arrived may still start a moment after it; none later,
    // until the pause is over.
    const during = site.visits.filter((v) => v.start > throttled.end + 20 && v.start < throttled.end + 1_000 - JITTER_MS);
    expect(during).toEqual([]);
    const reports = [one!.politeness, two!.politeness];
    expect(reports.map((p) => p.throttled).sort()).toEqual([0, 1]);
    expect(reports.map((p) => p.retries).sort()).toEqual([0, 1]);
    expect(reports.find((p) => p.throttled === 1)!.paused_ms).toBeGreaterThanOrEqual(990);
  });

  test("503 without Retry-After: 2 s, then 4 s; a success ends it", async () => {
    const site = serve({
      pages: 2,
      answer: (path, nth) => (path === "/p1" && nth <= 2 ? new Response("busy", { status: 503 }) : undefined),
    });
    const result = await crawl(site, network());
    expect(listed(result)).toEqual(allPages(2));
    const [first, second, third] = site.visitsOf("/p1");
    expect(second!.start - first!.end).toBeGreaterThanOrEqual(2_000 - JITTER_MS);
    expect(third!.start - second!.end).toBeGreaterThanOrEqual(4_000 - JITTER_MS);
    expect(result.politeness).toMatchObject({ throttled: 2, retries: 2 });
  }, 15_000);

  test("a URL that always answers 429 is asked 4 times, then counts as http_error", async () => {
    const site = serve({
      pages: 3,
      answer: (path) => (path === "/p2" ? new Response("no", { status: 429, headers: { "Retry-After": "0" } }) : undefined),
    });
    const result = await crawl(site, network());
    expect(site.visitsOf("/p2").length).toBe(4);
    expect(result.excluded.http_error).toBe(1);
    expect(result.excluded_examples.http_error).toEqual([`${site.url}/p2`]);
    expect(result.politeness).toMatchObject({ throttled: 4, retries: 3 });
  });

  test("a crawl whose time runs out while the host is paused ends truncated with what it found", async () => {
    const site = serve({
      pages: 6,
      answer: (path) => (path === "/p1" ? new Response("later", { status: 429, headers: { "Retry-After": "60" } }) : undefined),
    });
    const started = performance.now();
    const result = await crawl(site, network(), {}, 1_500);
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(result.truncated).toBe(true);
    expect(listed(result)).toContain("/");
  });

  test("max_concurrency and delay_ms lower one crawl below the host's limits", async () => {
    const site = serve({ pages: 20, latencyMs: 10 });
    const lone = await crawl(site, network(4), { max_concurrency: 1 });
    expect(site.maxInFlight()).toBe(1);
    expect(lone.politeness.max_concurrency).toBe(1);
    const spaced = serve({ pages: 5 });
    const result = await crawl(spaced, network(4), { delay_ms: 200 });
    expectSpaced(spaced, 200);
    expect(result.politeness.delay_ms).toBe(200);
  });
});

describe("processes sharing an SQLite store", () => {
  test("two networks on one file (two processes) keep one host's cap together, and reach it", async () => {
    const path = join(tempDir(), "genapi.db");
    const coordinator = (owner: string) => createSqliteHostLeases(sqliteAccess(openDatabase(path, sqliteMigrations)), owner);
    const site = serve({ pages: 60, latencyMs: 20 });
    const [a, b] = [network(3, 0, coordinator("a")), network(3, 0, coordinator("b"))];
    const results = await Promise.all([crawl(site, a), crawl(site, b), crawl(site, a), crawl(site, b)]);
    for (const result of results) expect(listed(result)).toEqual(allPages(60));
    expect(site.maxInFlight()).toBeLessThanOrEqual(3);
    expect(site.maxInFlight()).toBe(3);
  });

  test("with --host-delay, the two processes' starts are that far apart", async () => {
    const path = join(tempDir(), "genapi.db");
    const coordinator = (owner: string) => createSqliteHostLeases(sqliteAccess(openDatabase(path, sqliteMigrations)), owner);
    const site = serve({ pages: 5 });
    await Promise.all([crawl(site, network(4, 150, coordinator("a"))), crawl(site, network(4, 150, coordinator("b")))]);
    expect(site.visits.length).toBe(2 * 6);
    expectSpaced(site, 150);
  });
});

test("a host idle past its release time leaves nothing running: a process that crawled through a shared store exits", async () => {
  // The gate released its slots and then set its release timer again, due at once, for ever: a
  // timer a millisecond for every host a server had crawled, and a process that never ended.
  const src = join(import.meta.dir, "../../../src");
  const script = join(tempDir(), "crawl-once.ts");
  await Bun.write(
    script,
    `import { crawlSite, createCrawlNetwork, defaultCrawlLimits, defaultCrawlOptions } from "${src}/crawler/index.ts";
import { openDatabase } from "${src}/db/sqlite/database.ts";
import { createSqliteHostLeases } from "${src}/db/sqlite/hosts.ts";
import { sqliteMigrations } from "${src}/db/sqlite/migrations.ts";
import { sqliteAccess } from "${src}/db/sqlite/store.ts";
const db = openDatabase(process.argv[3], sqliteMigrations);
const coordinator = createSqliteHostLeases(sqliteAccess(db), "a");
const net = createCrawlNetwork({ policy: { allowPrivate: true, allowTargets: [] }, coordinator });
const result = await crawlSite(process.argv[2], { ...defaultCrawlLimits, maxPages: 10 }, { fetch: net, now: Date.now, userAgent: "genapi/0.1.0" }, undefined, defaultCrawlOptions(10));
console.log(result.entries.length);
`,
  );
  const site = serve({ pages: 3 });
  const child = Bun.spawn([process.execPath, script, `${site.url}/`, join(tempDir(), "genapi.db")], { stdout: "pipe", stderr: "pipe" });
  const ended = await Promise.race([child.exited.then(() => true), Bun.sleep(15_000).then(() => false)]);
  if (!ended) child.kill("SIGKILL");
  expect({ ended, stdout: await new Response(child.stdout).text(), stderr: await new Response(child.stderr).text() }).toEqual({
    ended: true,
    stdout: "3\n",
    stderr: "",
  });
}, 30_000);

test("a host is its lower-cased name and port, the default port written out", () => {
  expect(hostOf("https://203.0.113.7/x", { Host: "Example.COM" })).toBe("example.com:443");
  expect(hostOf("http://203.0.113.7:8080/x", { Host: "example.com:8080" })).toBe("example.com:8080");
  expect(hostOf("http://[2001:db8::1]/", { Host: "[2001:db8::1]" })).toBe("[2001:db8::1]:80");
  expect(hostOf("http://[2001:db8::1]:81/", { Host: "[2001:db8::1]:81" })).toBe("[2001:db8::1]:81");
});

test("Retry-After in seconds or as an HTTP date, at most 120 s", () => {
  const now = Date.UTC(2026, 10, 24, 12, 0, 0);
  expect(retryAfterMsFor("3", now)).toBe(3_000);
  expect(retryAfterMsFor("Tue, 24 Nov 2026 12:00:05 GMT", now)).toBe(5_000);
  expect(retryAfterMsFor("Tue, 24 Nov 2026 11:59:00 GMT", now)).toBe(0);
  expect(retryAfterMsFor("3600", now)).toBe(120_000);
  expect(retryAfterMsFor("soon", now)).toBeUndefined();
});
