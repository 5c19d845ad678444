// The store-backed CrawlState of jobs meets the engine's CrawlState contract on SQLite and on
// PostgreSQL: the same conformance tests as the memory state, reopening the state as a new
// process would (a new object over the same store, with an empty cache).
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, expect, test } from "bun:test";
import { createPostgresJobStore } from "../../src/db/postgres/jobs.ts";
import {
  postgresCredentialsMigration,
  postgresJobsMigration,
  postgresLinksMigration,
  postgresSitesMigration,
} from "../../src/db/postgres/migrations.ts";
import { migrate } from "../../src/db/sqlite/database.ts";
import { createSqliteJobStore } from "../../src/db/sqlite/jobs.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { newJobId, type JobStore } from "../../src/jobs/job-store.ts";
import { StoreCrawlState } from "../../src/jobs/store-crawl-state.ts";
import { storeLinkSource } from "../../src/jobs/publish.ts";
import { defaultCrawlOptions } from "../../src/crawler/options.ts";
import { type CrawlState, defaultCrawlLimits, runCrawl } from "../../src/crawler/index.ts";
import { describeCrawlState } from "../support/crawl-state-conformance.ts";
import { createDatabase, stopCluster } from "../support/postgres.ts";
import { needs } from "../support/requires.ts";

const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
  stopCluster();
});

async function sqliteStore(): Promise<JobStore> {
  const db = new Database(":memory:", { strict: true });
  migrate(db, sqliteMigrations);
  closers.push(() => db.close());
  const direct = async <T>(fn: (d: Database) => T) => fn(db);
  return createSqliteJobStore({ read: direct, write: direct });
}

let pg: Promise<JobStore> | undefined;
function postgresStore(): Promise<JobStore> {
  pg ??= (async () => {
    const sql = new SQL(await createDatabase());
    await sql.unsafe(postgresJobsMigration.sql);
    await sql.unsafe(postgresCredentialsMigration.sql);
    await sql.unsafe(postgresLinksMigration.sql);
    await sql.unsafe(postgresSitesMigration.sql);
    closers.push(() => sql.close());
    return createPostgresJobStore({ query: (fn) => fn(sql) });
  })();
  return pg;
}

/** A claimed job in `store` and a state over it; reopening makes a new state for the same job. */
function opener(store: () => Promise<JobStore>, flushPages: number) {
  return async (options: { linkReport?: boolean } = {}) => {
    const jobs = await store();
    const id = newJobId();
    await jobs.create(
      {
        id,
        keyId: 1,
        url: "http://site.test/",
        options: defaultCrawlOptions(10_000),
        callbackUrl: null,
        callbackSecret: null,
        createdAt: "x",
      },
      1_000_000,
    );
    // Claim until this job is ours (earlier tests' jobs stay queued in the shared PostgreSQL store).
    while ((await jobs.claim(id, Date.now(), 600_000, "x"))?.id !== id);
    // A reopened state stands for another process after a crash: the last one's checkpoint in flight
    // is written (or failed) before it, as a dead process's write can land only before it died.
    let current: StoreCrawlState | null = null;
    const make = () =>
      (current = new StoreCrawlState(
        jobs,
        id,
        {
          checkpoint: (batch) => jobs.checkpoint(id, id, Date.now(), 600_000, batch),
          lost: () => {
            throw new Error("lease lost");
          },
          elapsedMs: () => 0,
          progress: () => {},
        },
        { flushPages, flushMs: 60_000, cacheSize: 50, windowSize: 16, expectedUrls: 1000, linkReport: options.linkReport },
      ));
    const links = async (state: CrawlState) => {
      await (state as StoreCrawlState).flush();
      return storeLinkSource(jobs, id);
    };
    return {
      state: make(),
      reopen: async () => {
        await current?.settled();
        return make();
      },
      links,
    };
  };
}

// Every record durable at once, then batches of 7 with a cache and window far smaller than the site.
describeCrawlState("store on SQLite, a checkpoint per page", opener(sqliteStore, 1));
const postgres = needs(import.meta.path, "postgresql");
describeCrawlState("store on PostgreSQL, a checkpoint per page", opener(postgresStore, 1), { skip: !postgres });
describeCrawlState("store on SQLite, a checkpoint per 7 pages", opener(sqliteStore, 7));
describeCrawlState("store on PostgreSQL, a checkpoint per 7 pages", opener(postgresStore, 7), { skip: !postgres });

test("a page budget exactly the site's size lists every page: taken items count once against it", async () => {
  const size = 200;
  const fetch = async (url: URL) => {
    if (url.pathname === "/robots.txt") return new Response("", { status: 404 });
    await Bun.sleep(1); // requests overlap, as on a network
    const i = url.pathname === "/" ? 0 : Number(/^\/p(\d+)$/.exec(url.pathname)?.[1] ?? -1);
    if (!(i >= 0 && i < size)) return new Response("no", { status: 404 });
    let links = "";
    for (let c = 5 * i + 1; c <= 5 * i + 5 && c < size; c++) links += `<a href="/p${c}">x</a>`;
    return new Response(links, { headers: { "content-type": "text/html" } });
  };
  const { state } = await opener(sqliteStore, 7)();
  const run = await runCrawl(
    "http://site.test/",
    state,
    { ...defaultCrawlLimits, maxPages: size, concurrency: 8 },
    { fetch, now: Date.now, userAgent: "genapi/1" },
  );
  expect(run).toMatchObject({ urlsListed: size, truncated: false, stopped: null });
});

test("a checkpoint that fails and is given up stops the crawl; continued from the last one written, it lists every page", async () => {
  const size = 300;
  const fetch = async (url: URL) => {
    if (url.pathname === "/robots.txt") return new Response("", { status: 404 });
    await Bun.sleep(1);
    const i = url.pathname === "/" ? 0 : Number(/^\/p(\d+)$/.exec(url.pathname)?.[1] ?? -1);
    if (!(i >= 0 && i < size)) return new Response("no", { status: 404 });
    let links = '<a href="/">home</a>';
    for (let c = 3 * i + 1; c <= 3 * i + 3 && c < size; c++) links += `<a href="/p${c}">x</a>`;
    return new Response(links, { headers: { "content-type": "text/html" } });
  };
  const jobs = await sqliteStore();
  const id = newJobId();
  await jobs.create(
    {
      id,
      keyId: 1,
      url: "http://site.test/",
      options: defaultCrawlOptions(10_000),
      callbackUrl: null,
      callbackSecret: null,
      createdAt: "x",
    },
    10,
  );
  await jobs.claim("A", Date.now(), 600_000, "x");
  const stop = new AbortController();
  let checkpoints = 0;
  const failing = new StoreCrawlState(
    jobs,
    id,
    {
      checkpoint: async (batch) => {
        if (++checkpoints === 4) throw new Error("the database is unreachable");
        return jobs.checkpoint(id, "A", Date.now(), 600_000, batch);
      },
      lost: () => stop.abort(),
      elapsedMs: () => 0,
      progress: () => {},
    },
    { flushPages: 10, flushMs: 60_000, cacheSize: 1_000, windowSize: 50, expectedUrls: 1_000 },
  );
  const limits = { ...defaultCrawlLimits, maxPages: 10_000, concurrency: 4 };
  const deps = { fetch, now: Date.now, userAgent: "genapi/1" };
  const first = await runCrawl("http://site.test/", failing, limits, deps, { signal: stop.signal });
  expect(first.stopped).toBe("aborted");
  const written = await jobs.countEntries(id);
  expect(written).toBeGreaterThan(0);
  expect(written).toBeLessThan(size);

  const again = new StoreCrawlState(
    jobs,
    id,
    { checkpoint: (batch) => jobs.checkpoint(id, "A", Date.now(), 600_000, batch), lost: () => {}, elapsedMs: () => 0, progress: () => {} },
    { flushPages: 10, flushMs: 60_000, cacheSize: 1_000, windowSize: 50, expectedUrls: 1_000 },
  );
  const second = await runCrawl("http://site.test/", again, limits, deps);
  expect(second).toMatchObject({ stopped: null, truncated: false });
  const listed: string[] = [];
  for await (const entry of again.entries()) listed.push(entry.loc);
  expect(listed.length).toBe(size);
  expect(new Set(listed).size).toBe(size);
});

/** A new job in a new SQLite store, claimed by owner "A" (`claimed`: the id the claim returned). */
async function jobClaimedByA() {
  const jobs = await sqliteStore();
  const id = newJobId();
  await jobs.create(
    { id, keyId: 1, url: "http://site.test/", options: defaultCrawlOptions(100), callbackUrl: null, callbackSecret: null, createdAt: "x" },
    10,
  );
  const claimed = (await jobs.claim("A", Date.now(), 600_000, "x"))?.id;
  return { jobs, id, claimed };
}

test("a checkpoint is written while records go on: they wait only for one in flight when theirs is due, and it carries its own batch's report", async () => {
  const { jobs, id } = await jobClaimedByA();
  // The first checkpoint is held open until release(); what it was given is read once it goes on.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const written: { robots: number; examples: string[]; pages: number }[] = [];
  let checkpoints = 0;
  const state = new StoreCrawlState(
    jobs,
    id,
    {
      checkpoint: async (batch) => {
        if (++checkpoints === 1) await held;
        const { crawl } = batch;
        written.push({
          robots: crawl.excluded.robots ?? 0,
          examples: [...(crawl.excludedExamples.robots ?? [])],
          pages: crawl.pagesCrawled,
        });
        return jobs.checkpoint(id, "A", Date.now(), 600_000, batch);
      },
      lost: () => {
        throw new Error("lease lost");
      },
      elapsedMs: () => 0,
      progress: () => {},
    },
    { flushPages: 2, flushMs: 60_000, cacheSize: 100, windowSize: 10, expectedUrls: 100 },
  );
  await state.resume();
  const page = (n: number) => ({
    start: n === 0 ? "http://site.test/" : undefined,
    done: null,
    seen: [],
    links: [{ url: `http://site.test/private/${n}`, depth: 1, excluded: "robots" as const }],
    maxFrontier: 100,
    excluded: [],
    pages: 1,
    truncated: false,
  });
  const within = (promise: Promise<unknown>) => Promise.race([promise.then(() => "recorded"), Bun.sleep(500).then(() => "waiting")]);
  await state.record(page(0));
  // Pages 0 and 1 make a checkpoint, held open: the record that started it and the next go on.
  expect(await within(state.record(page(1)))).toBe("recorded");
  expect(await within(state.record(page(2)))).toBe("recorded");
  // Page 3's checkpoint is due while the first is still being written: it waits for it.
  const fourth = state.record(page(3));
  expect(await within(fourth)).toBe("waiting");
  release();
  await fourth;
  await state.flush();
  // The held checkpoint carries its own two pages' exclusions, not those recorded while it was written.
  expect(written[0]).toEqual({ robots: 2, examples: ["http://site.test/private/0", "http://site.test/private/1"], pages: 2 });
  expect(written.at(-1)).toMatchObject({ robots: 4, pages: 4 });
  expect(await jobs.countEntries(id)).toBe(0);
  expect((await state.report()).excluded.robots).toBe(4);
});

test("a checkpoint held open while another process takes the job over and goes on is refused when it lands: its pages are not written, the crawl is stopped", async () => {
  const { jobs, id, claimed } = await jobClaimedByA();
  expect(claimed).toBe(id);
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let lostA = 0;
  const options = { flushPages: 2, flushMs: 60_000, cacheSize: 100, windowSize: 10, expectedUrls: 100 };
  const stateA = new StoreCrawlState(
    jobs,
    id,
    {
      checkpoint: async (batch) => {
        await held;
        return jobs.checkpoint(id, "A", Date.now(), 600_000, batch);
      },
      lost: () => lostA++,
      elapsedMs: () => 0,
      progress: () => {},
    },
    options,
  );
  const page = (n: number, start?: string) => ({
    start,
    done: null,
    seen: [],
    links: [{ url: `http://site.test/p${n + 1}`, depth: 1 }],
    entry: { loc: n === 0 ? "http://site.test/" : `http://site.test/p${n}` },
    maxFrontier: 100,
    excluded: [],
    pages: 1,
    truncated: false,
  });
  await stateA.resume();
  await stateA.record(page(0, "http://site.test/"));
  await stateA.record(page(1));
  // A's first checkpoint (pages 0 and 1) is held open; A's lease runs out and B takes the job over.
  const later = Date.now() + 700_000;
  expect((await jobs.claim("B", later, 600_000, "x"))?.id).toBe(id);
  const stateB = new StoreCrawlState(
    jobs,
    id,
    {
      checkpoint: (batch) => jobs.checkpoint(id, "B", later, 600_000, batch),
      lost: () => {
        throw new Error("B's lease lost");
      },
      elapsedMs: () => 0,
      progress: () => {},
    },
    options,
  );
  // B finds nothing written: it starts the crawl again from the start page, and records it.
  expect(await stateB.resume()).toBeNull();
  await stateB.record(page(0, "http://site.test/"));
  await stateB.flush();
  // A's checkpoint lands now: refused, as the lease is B's. A stops and writes nothing more.
  release();
  await stateA.flush();
  expect(lostA).toBe(1);
  await stateA.record(page(2));
  await stateA.flush();
  expect(lostA).toBe(1);
  const listed: string[] = [];
  for await (const entry of stateB.entries()) listed.push(entry.loc);
  expect(listed).toEqual(["http://site.test/"]);
  expect(await jobs.countEntries(id)).toBe(1);
});
