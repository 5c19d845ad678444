// The runner on a real SQLite job store: a job whose process died on each of its 3 attempts is not
// crawled a 4th time; what its checkpoints stored is published, truncated.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { migrate } from "../../src/db/sqlite/database.ts";
import { createSqliteJobStore } from "../../src/db/sqlite/jobs.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { newJobId } from "../../src/jobs/job-store.ts";
import { publishResult } from "../../src/jobs/publish.ts";
import { JobRunner, MAX_ATTEMPTS, type RunnerDeps } from "../../src/jobs/runner.ts";
import { defaultCrawlOptions } from "../../src/crawler/options.ts";
import { quietPoliteness } from "../../src/crawler/index.ts";
import { createJobCrawl } from "../../src/jobs/job-crawl.ts";
import { QUERY_DEADLINE_MS } from "../../src/db/postgres/store.ts";
import { StoreUnavailableError } from "../../src/http/store-errors.ts";
import type { HopFetcher } from "../../src/crawler/index.ts";
import type { JobStore } from "../../src/jobs/job-store.ts";
import { waitFor } from "../support/wait.ts";

function memoryStore(): JobStore {
  const db = new Database(":memory:", { strict: true });
  migrate(db, sqliteMigrations);
  const direct = async <T>(fn: (d: Database) => T) => fn(db);
  return createSqliteJobStore({ read: direct, write: direct });
}

/**
 * The runner under test on `store`: owner "one", one job at a time, a 1 s lease, polling every
 * 20 ms, a finished job published as the service publishes it, nothing logged; `deps` sets what a
 * test is about (its crawl, its log, ...).
 */
function runnerOn(store: JobStore, deps: Partial<RunnerDeps> = {}): JobRunner {
  return new JobRunner({
    store,
    owner: "one",
    maxJobs: 1,
    leaseMs: 1_000,
    jobTimeoutMs: 60_000,
    pollMs: 20,
    now: Date.now,
    crawl: async () => {
      throw new Error("this test's runner crawls nothing");
    },
    publish: (job, truncated, progress) =>
      publishResult(store, job, {
        truncated,
        progress,
        now: new Date(),
        politeness: quietPoliteness(4),
        render: { mode: "never", rendered: false, pages_rendered: 0 },
      }),
    notify: async () => {},
    log: () => {},
    ...deps,
  });
}

const finished = (status: string | undefined) => status === "succeeded" || status === "failed" || status === "cancelled";

/** A site in memory, no network: page i links to pages 3i+1..3i+3 and home; each answer takes `delayMs`. */
function treeSite(size: number, delayMs = 1): HopFetcher {
  return async (url) => {
    if (url.pathname === "/robots.txt") return new Response("", { status: 404 });
    await Bun.sleep(delayMs);
    const i = url.pathname === "/" ? 0 : Number(/^\/p(\d+)$/.exec(url.pathname)?.[1] ?? -1);
    if (!(i >= 0 && i < size)) return new Response("no", { status: 404 });
    let links = '<a href="/">home</a>';
    for (let c = 3 * i + 1; c <= 3 * i + 3 && c < size; c++) links += `<a href="/p${c}">${c}</a>`;
    return new Response(links, { headers: { "content-type": "text/html" } });
  };
}

test(`after ${MAX_ATTEMPTS} attempts that died, the job publishes what it found instead of crawling again`, async () => {
  const store = memoryStore();
  const id = newJobId();
  await store.create(
    { id, keyId: 1, url: "http://site.test/", options: defaultCrawlOptions(100), callbackUrl: null, callbackSecret: null, createdAt: "x" },
    10,
  );
  const lease = 1_000;
  let now = Date.now() - 10 * lease;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    // Each attempt claims, stores a checkpoint, and dies: its lease runs out.
    const claimed = await store.claim(`dead-${attempt}`, now, lease, new Date(now).toISOString());
    expect(claimed?.attempts).toBe(attempt);
    const entries = [{ loc: `http://site.test/${attempt}`, lastmod: null, extra: null }];
    const progress = { pages_crawled: attempt, pages_queued: 5, urls_listed: attempt, elapsed_ms: attempt };
    const facts = {
      url: "http://site.test/",
      truncated: false,
      pagesCrawled: attempt,
      urlsListed: attempt,
      queued: 5,
      excluded: {},
      excludedExamples: {},
    };
    expect(
      await store.checkpoint(id, `dead-${attempt}`, now, lease, { done: [], discovered: [], seen: [], entries, progress, crawl: facts }),
    ).toBe(true);
    now += 2 * lease;
  }
  let crawled = false;
  const runner = runnerOn(store, {
    owner: "survivor",
    leaseMs: lease,
    crawl: async () => {
      crawled = true;
      throw new Error("a job past its attempts must not be crawled again");
    },
  });
  runner.start();
  await waitFor(async () => finished((await store.get(id))?.status), 5_000, `job ${id} to finish`);
  await runner.stop();
  const job = (await store.get(id))!;
  expect(crawled).toBe(false);
  expect(job.attempts).toBe(MAX_ATTEMPTS + 1);
  expect(job.status).toBe("succeeded");
  expect(job.result).toMatchObject({ url: "http://site.test/", url_count: MAX_ATTEMPTS, truncated: true, sitemap_parts: 0 });
  const xml = new TextDecoder().decode(Bun.gunzipSync((await store.getPart(id, 0)) as Uint8Array<ArrayBuffer>));
  expect(xml).toContain("<loc>http://site.test/1</loc>");
});

test("a store that fails claims is logged once per problem, and once when claims work again", async () => {
  const real = memoryStore();
  const failures = [
    "Service temporarily unavailable: the database is busy.",
    "Service temporarily unavailable: the database is busy.",
    "Service temporarily unavailable: the database is busy.",
    "Service temporarily unavailable: the database is failing.",
  ];
  let claims = 0;
  const store = {
    ...real,
    claim: async (...args: Parameters<typeof real.claim>) => {
      const failure = failures[claims++];
      if (failure !== undefined) throw new Error(failure);
      return real.claim(...args);
    },
  };
  const logged: string[] = [];
  const runner = runnerOn(store, {
    pollMs: 5,
    crawl: async () => {
      throw new Error("no job is queued");
    },
    publish: async () => null,
    log: (line) => logged.push(line),
  });
  runner.start();
  await waitFor(() => claims >= failures.length + 3, 5_000, `${failures.length + 3} claims`);
  await runner.stop();
  expect(claims).toBeGreaterThanOrEqual(failures.length + 3);
  expect(logged).toEqual([
    "job claim failed: Service temporarily unavailable: the database is busy.",
    "job claim failed: Service temporarily unavailable: the database is failing.",
    "job claims resumed",
  ]);
});

test("a checkpoint that outlives the request deadline once is written again: the job finishes in one attempt, complete", async () => {
  const real = memoryStore();
  let checkpoints = 0;
  // The second checkpoint fails as a PostgreSQL checkpoint under lock contention does: past QUERY_DEADLINE_MS.
  const store: JobStore = {
    ...real,
    checkpoint: async (...args) => {
      if (++checkpoints === 2) {
        await Bun.sleep(QUERY_DEADLINE_MS + 250);
        throw new StoreUnavailableError("unreachable");
      }
      return real.checkpoint(...args);
    },
  };
  const id = newJobId();
  await store.create(
    {
      id,
      keyId: 1,
      url: "http://site.test/",
      options: defaultCrawlOptions(1_000),
      callbackUrl: null,
      callbackSecret: null,
      createdAt: "x",
    },
    10,
  );
  const logged: string[] = [];
  const lease = 1_000;
  const runner = runnerOn(store, {
    leaseMs: lease,
    crawl: createJobCrawl({
      store,
      owner: "one",
      leaseMs: lease,
      crawl: { fetch: treeSite(300), now: Date.now, userAgent: "genapi/1" },
      stateOptions: { flushPages: 20, flushMs: 60_000 },
    }),
    log: (line) => logged.push(line),
  });
  runner.start();
  await waitFor(async () => finished((await store.get(id))?.status), 20_000, `job ${id} to finish`);
  await runner.stop();
  const job = (await store.get(id))!;
  expect(checkpoints).toBeGreaterThan(2);
  expect({ status: job.status, attempts: job.attempts }).toEqual({ status: "succeeded", attempts: 1 });
  expect(job.result).toMatchObject({ url_count: 300, truncated: false });
  expect(job.progress.urls_listed).toBe(300);
  expect(logged).toEqual([
    `job ${id}: checkpoint failed (try 1: Service temporarily unavailable: the database is unreachable.); writing it again in 250 ms`,
  ]);
});

test("a job cancelled through another instance stops within 2 s, its request in flight aborted; the URLs found are its result", async () => {
  const store = memoryStore();
  let aborted = 0;
  const requested: string[] = [];
  // `/` links to /a, /b, /c (answered at once) and /slow, which answers only when aborted.
  const fetch: HopFetcher = async (url, init) => {
    if (url.pathname === "/robots.txt") return new Response("", { status: 404 });
    requested.push(url.pathname);
    if (url.pathname === "/slow") {
      await new Promise((resolve) => init.signal.addEventListener("abort", resolve, { once: true }));
      aborted++;
      throw init.signal.reason;
    }
    const links = url.pathname === "/" ? '<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a><a href="/slow">s</a>' : "";
    return new Response(links, { headers: { "content-type": "text/html" } });
  };
  const id = newJobId();
  await store.create(
    {
      id,
      keyId: 1,
      url: "http://site.test/",
      options: defaultCrawlOptions(1_000),
      callbackUrl: null,
      callbackSecret: null,
      createdAt: "x",
    },
    10,
  );
  const logged: string[] = [];
  const runner = runnerOn(store, {
    leaseMs: 60_000,
    crawl: createJobCrawl({ store, owner: "one", leaseMs: 60_000, crawl: { fetch, now: Date.now, userAgent: "genapi/1" } }),
    log: (line) => logged.push(line),
  });
  const started = Date.now();
  runner.start();
  await waitFor(() => ["/a", "/b", "/c", "/slow"].every((p) => requested.includes(p)), 5_000, "requests for /a, /b, /c and /slow");
  await Bun.sleep(100);
  // No checkpoint yet (one a second at most): the four URLs found are in memory only.
  expect(await store.countEntries(id)).toBe(0);
  const cancelled = Date.now();
  expect(await store.cancel(id, new Date().toISOString(), { status: 409, message: "Job cancelled before any URL was listed." })).toBe(
    "running",
  );
  await waitFor(async () => (await store.get(id))!.result !== null, 3_000, `job ${id}'s published result`);
  const stoppedWithin = Date.now() - cancelled;
  await runner.stop();
  const job = (await store.get(id))!;
  expect(stoppedWithin).toBeLessThan(2_000);
  expect(aborted).toBe(1);
  expect(job).toMatchObject({ status: "cancelled", error: null, result: { url_count: 4, truncated: true }, progress: { urls_listed: 4 } });
  expect(job.progress.elapsed_ms).toBeLessThan(cancelled - started + 2_000);
  expect(logged).toEqual([`job ${id}: lease given up: the job was cancelled; 4 URLs published`]);
});
