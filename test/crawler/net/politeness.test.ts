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
import { hostOf, politeHost, retryAfterMsFor } from "../../../src/crawler/net/politeness.ts";
import { openDatabase } from "../../../src/db/sqlite/database.ts";
import { createSqliteHostLeases } from "../../../src/db/sqlite/hosts.ts";
import { sqliteMigrations } from "../../../src/db/sqlite/migrations.ts";
import { sqliteAccess } from "../../../src/db/sqlite/store.ts";
import { Database } from "bun:sqlite";
import { tempDir } from "../../support/binary.ts";
import { waitFor } from "../../support/wait.ts";
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

function crawl(
  site: PoliteSite | string,
  net: CrawlNetwork,
  options: Partial<ReturnType<typeof defaultCrawlOptions>> = {},
  timeoutMs = 60_000,
  signal?: AbortSignal,
  requestTimeoutMs = defaultCrawlLimits.requestTimeoutMs,
) {
  const limits = { ...defaultCrawlLimits, maxPages: 1_000, timeoutMs, requestTimeoutMs };
  const url = typeof site === "string" ? site : `${site.url}/`;
  return crawlSite(url, limits, { fetch: net, now: Date.now, userAgent: "genapi/0.1.0" }, signal, {
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

  test("Crawl-delay in other spellings: .5 spaces the requests half a second apart, 1e400 counts as 30 s", async () => {
    const site = serve({ pages: 3, robots: "User-agent: genapi\nCrawl-delay: .5\n" });
    const result = await crawl(site, network());
    expect(listed(result)).toEqual(allPages(3));
    expect(result.politeness.crawl_delay_s).toBe(0.5);
    const pages = site.visits.filter((v) => v.path !== "/robots.txt").map((v) => v.start);
    for (let i = 1; i < pages.length; i++) expect(pages[i]! - pages[i - 1]!).toBeGreaterThanOrEqual(500 - JITTER_MS);
    // One page only: a second would come 30 s later.
    for (const value of ["1e400", "+31", "1e9"]) {
      const huge = serve({ pages: 2, robots: `User-agent: genapi\nCrawl-delay: ${value}\n` });
      const one = await crawl(huge, network(), { max_pages: 1 });
      expect(one.politeness.crawl_delay_s, value).toBe(30);
    }
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
    // About 4 s on 2 cores (4 crawls of 60 pages of 20 ms at 3 at once), past bun's 5 s default under load.
  }, 15_000);

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

describe("the report", () => {
  test("delay_ms is the interval kept between starts: --host-delay when the crawl asks for less", async () => {
    const site = serve({ pages: 3 });
    const result = await crawl(site, network(4, 300));
    expect(listed(result)).toEqual(allPages(3));
    expect(result.politeness.delay_ms).toBe(300);
    expectSpaced(site, 300);
    const slower = serve({ pages: 2 });
    expect((await crawl(slower, network(4, 300), { delay_ms: 400 })).politeness.delay_ms).toBe(400);
  });

  test("paused_ms counts a pause another crawl met while this one waited on it, and never more than the crawl lasted", async () => {
    // One slot (cap 1): the crawl of /p3 (which links to /p7 and /p8) always has a request queued for
    // it. /p1, of the other crawl, answers 429 with Retry-After 2 once: the requests of /p3's crawl
    // that were queued before it then wait on that pause without meeting a 429 themselves.
    const site = serve({
      pages: 9,
      latencyMs: 100,
      answer: (path, nth) =>
        path === "/p1" && nth === 1 ? new Response("later", { status: 429, headers: { "Retry-After": "2" } }) : undefined,
    });
    const net = network(1);
    const began = performance.now();
    const [throttled, waiting] = await Promise.all([crawl(site, net), crawl(`${site.url}/p3`, net)]);
    const tookMs = performance.now() - began;
    console.log(
      `paused_ms: ${waiting.politeness.paused_ms} ms for the crawl that waited (${Math.round(tookMs)} ms long), ${throttled.politeness.paused_ms} for the one throttled`,
    );
    expect(waiting.politeness.throttled).toBe(0);
    expect(waiting.politeness.paused_ms).toBeGreaterThan(1_500);
    expect(waiting.politeness.paused_ms).toBeLessThanOrEqual(tookMs);
    expect(throttled.politeness.throttled).toBe(1);
    expect(throttled.politeness.paused_ms).toBeGreaterThanOrEqual(2_000 - JITTER_MS);

    // A crawl whose time runs out 1 s into a 60 s pause waited 1 s, not 60.
    const paused = serve({
      pages: 4,
      answer: (path) => (path === "/p1" ? new Response("later", { status: 429, headers: { "Retry-After": "60" } }) : undefined),
    });
    const started = performance.now();
    const cut = await crawl(paused, network(), {}, 1_000);
    const lasted = performance.now() - started;
    console.log(`paused_ms of a 1 s crawl in a 60 s pause: ${cut.politeness.paused_ms} ms (it lasted ${Math.round(lasted)} ms)`);
    expect(cut.truncated).toBe(true);
    expect(cut.politeness.paused_ms).toBeGreaterThan(0);
    expect(cut.politeness.paused_ms).toBeLessThanOrEqual(lasted);
  }, 20_000);
});

describe("a host is its normalised name and port", () => {
  test("politeHost: trailing dots dropped, IPv4-mapped IPv6 written as IPv4", () => {
    expect(politeHost("localhost.:8005")).toBe("localhost:8005");
    expect(politeHost("localhost..:8005")).toBe("localhost:8005");
    expect(politeHost("example.com.:443")).toBe("example.com:443");
    expect(politeHost("[::ffff:7f00:1]:8005")).toBe("127.0.0.1:8005");
    expect(politeHost("[::ffff:c000:221]:80")).toBe("192.0.2.33:80");
    expect(politeHost("[2001:db8::1]:80")).toBe("[2001:db8::1]:80");
    expect(politeHost("example.com:443")).toBe("example.com:443");
  });

  test("crawls of one host under several spellings share its cap, counted by the site", async () => {
    const site = serve({ pages: 30, latencyMs: 25 });
    const port = new URL(site.url).port;
    const net = network(2);
    const spellings = [`127.0.0.1:${port}`, `[::ffff:7f00:1]:${port}`, `[::ffff:127.0.0.1]:${port}`];
    const named = [`localhost:${port}`, `localhost.:${port}`, `LOCALHOST..:${port}`];
    const results = await Promise.all([...spellings, ...named].map((host) => crawl(`http://${host}/`, net)));
    for (const result of results) expect(result.entries.length).toBe(30);
    const numeric = site.maxInFlight((v) => !v.host.startsWith("localhost"));
    const byName = site.maxInFlight((v) => v.host.startsWith("localhost"));
    const perSpelling = [...new Set(site.visits.map((v) => v.host))].map((host) => `${host} ${site.maxInFlight((v) => v.host === host)}`);
    console.log(
      `spellings, cap 2: 127.0.0.1 as IPv4 and IPv4-mapped ${numeric}, localhost with and without dots ${byName}; each: ${perSpelling.join(", ")}`,
    );
    expect(numeric).toBe(2);
    expect(byName).toBe(2);
  }, 30_000);
});

describe("a request the crawl abandons", () => {
  test("is aborted at once but keeps its slot to its 10 s limit: a stopped crawl's requests still count for the next crawl", async () => {
    // Pages take 1.5 s; the first crawl is stopped while its two requests (the cap) are at the site.
    const site = serve({
      pages: 20,
      answer: async (path) => (path === "/robots.txt" ? undefined : Bun.sleep(1_500).then(() => undefined)),
    });
    const net = network(2);
    const stop = new AbortController();
    const first = crawl(site, net, {}, 60_000, stop.signal).catch((error) => error);
    await waitFor(() => site.visits.filter((v) => v.path !== "/robots.txt" && v.end === 0).length === 2, 10_000, "two pages in flight");
    stop.abort();
    await first;
    const stoppedAt = performance.now();
    const second = crawl(site, net, { max_pages: 2 });
    await waitFor(
      () => site.visits.filter((v) => v.start > stoppedAt && v.path !== "/robots.txt").length > 0,
      10_000,
      "the next crawl's first page",
    );
    await second;
    const abandoned = site.visits.filter((v) => v.start < stoppedAt && v.path !== "/robots.txt");
    const abandonedEnd = Math.max(...abandoned.map((v) => v.end));
    const lastSent = Math.max(...abandoned.map((v) => v.start));
    const next = site.visits.find((v) => v.start > stoppedAt && v.path !== "/robots.txt")!;
    console.log(
      `abandoned requests: max in flight ${site.maxInFlight()} (cap 2); the next crawl's first page ${Math.round(next.start - lastSent)} ms after they were sent`,
    );
    expect(site.maxInFlight()).toBe(2);
    expect(next.start).toBeGreaterThanOrEqual(abandonedEnd - JITTER_MS);
    // Aborted, the requests give no sign of their end: their slots come back at the request timeout (10 s).
    expect(next.start - lastSent).toBeGreaterThanOrEqual(10_000 - JITTER_MS);
  }, 30_000);

  test("past its per-request timeout, an abandoned request gives its slot back though the site still works", async () => {
    const site = serve({
      pages: 20,
      answer: async (path) => (path === "/robots.txt" ? undefined : Bun.sleep(3_000).then(() => undefined)),
    });
    const net = network(1);
    const stop = new AbortController();
    const first = crawl(site, net, {}, 60_000, stop.signal, 1_000).catch((error) => error);
    await waitFor(() => site.visits.some((v) => v.path === "/" && v.end === 0), 10_000, "the start page in flight");
    const sent = site.visits.find((v) => v.path === "/")!.start;
    stop.abort();
    await first;
    // Its own start page times out too (3 s pages, 1 s limit): only when it was sent matters.
    const second = crawl(site, net, { max_pages: 1 }, 10_000, undefined, 1_000).catch((error) => error);
    await waitFor(() => site.visits.filter((v) => v.path === "/").length === 2, 10_000, "the next crawl's start page");
    await second;
    const gap = site.visits.filter((v) => v.path === "/")[1]!.start - sent;
    console.log(`an abandoned request past its 1 s timeout: the next request ${Math.round(gap)} ms after it was sent`);
    expect(gap).toBeGreaterThanOrEqual(1_000 - JITTER_MS);
    expect(gap).toBeLessThan(2_500);
  }, 30_000);
});

describe("a store that does not answer", () => {
  test("a process that cannot reach the store waits for it: no slot beyond the grants, with an odd cap", async () => {
    // Process a holds the 3 slots of a host with pages of 2.5 s; the file is then write-locked by a
    // third connection for 12 s, longer than a lease (10 s). b comes to the host meanwhile; a cannot
    // renew. Once the lock goes, the store hands the slots out again.
    const path = join(tempDir(), "genapi.db");
    // As the server opens it: no wait inside SQLite (which would stop this process's event loop,
    // the site's with it); the store retries a busy statement for 1.5 s, then fails.
    const coordinator = (owner: string) => {
      const db = openDatabase(path, sqliteMigrations);
      db.exec("PRAGMA busy_timeout = 0");
      return createSqliteHostLeases(sqliteAccess(db), owner);
    };
    const site = serve({ pages: 40, answer: async (p) => (p === "/robots.txt" ? undefined : Bun.sleep(2_500).then(() => undefined)) });
    const [a, b] = [network(3, 0, coordinator("a")), network(3, 0, coordinator("b"))];
    const stopA = new AbortController();
    const stopB = new AbortController();
    const crawlA = crawl(site, a, {}, 60_000, stopA.signal).catch((e) => e);
    await waitFor(() => site.visits.filter((v) => v.end === 0).length === 3, 10_000, "a holding the 3 slots");
    const holder = new Database(path);
    holder.exec("PRAGMA busy_timeout = 5000");
    holder.exec("BEGIN IMMEDIATE");
    const lockedAt = performance.now();
    const crawlB = crawl(site, b, {}, 60_000, stopB.signal).catch((e) => e);
    await Bun.sleep(12_000); // the lock's length is the scenario: a store that does not answer for 12 s
    holder.exec("ROLLBACK");
    holder.close();
    await waitFor(() => site.visits.filter((v) => v.start > lockedAt + 12_000).length >= 6, 15_000, "crawling again after the lock");
    stopA.abort();
    stopB.abort();
    await Promise.all([crawlA, crawlB]);
    console.log(`a store locked for 12 s under an odd cap (3): max in flight ${site.maxInFlight()}`);
    expect(site.maxInFlight()).toBe(3);
  }, 45_000);
});
