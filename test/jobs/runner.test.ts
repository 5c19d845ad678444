// The runner on a real SQLite job store: a job whose process died on each of its 3 attempts is not
// crawled a 4th time; what its checkpoints stored is published, truncated.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { migrate } from "../../src/db/sqlite/database.ts";
import { createSqliteJobStore } from "../../src/db/sqlite/jobs.ts";
import { migrations, sqliteJobsMigration, sqliteLinksMigration } from "../../src/db/sqlite/migrations.ts";
import { newJobId } from "../../src/jobs/job-store.ts";
import { publishResult } from "../../src/jobs/publish.ts";
import { JobRunner, MAX_ATTEMPTS } from "../../src/jobs/runner.ts";
import { defaultCrawlOptions } from "../../src/crawler/options.ts";

test(`after ${MAX_ATTEMPTS} attempts that died, the job publishes what it found instead of crawling again`, async () => {
  const db = new Database(":memory:", { strict: true });
  migrate(db, [...migrations, sqliteJobsMigration, sqliteLinksMigration]);
  const direct = async <T>(fn: (d: Database) => T) => fn(db);
  const store = createSqliteJobStore({ read: direct, write: direct });
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
  const runner = new JobRunner({
    store,
    owner: "survivor",
    maxJobs: 1,
    leaseMs: lease,
    jobTimeoutMs: 60_000,
    pollMs: 20,
    now: Date.now,
    crawl: async () => {
      crawled = true;
      throw new Error("a job past its attempts must not be crawled again");
    },
    publish: (job, truncated, progress) => publishResult(store, job, { truncated, progress, now: new Date() }),
    notify: async () => {},
    log: () => {},
  });
  runner.start();
  for (let i = 0; i < 200 && (await store.get(id))?.status === "queued"; i++) await Bun.sleep(10);
  for (let i = 0; i < 200 && (await store.get(id))?.status === "running"; i++) await Bun.sleep(10);
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
  const db = new Database(":memory:", { strict: true });
  migrate(db, [...migrations, sqliteJobsMigration, sqliteLinksMigration]);
  const direct = async <T>(fn: (d: Database) => T) => fn(db);
  const real = createSqliteJobStore({ read: direct, write: direct });
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
  const runner = new JobRunner({
    store,
    owner: "one",
    maxJobs: 1,
    leaseMs: 1_000,
    jobTimeoutMs: 60_000,
    pollMs: 5,
    now: Date.now,
    crawl: async () => {
      throw new Error("no job is queued");
    },
    publish: async () => null,
    notify: async () => {},
    log: (line) => logged.push(line),
  });
  runner.start();
  for (let i = 0; i < 400 && claims < failures.length + 3; i++) await Bun.sleep(5);
  await runner.stop();
  expect(claims).toBeGreaterThanOrEqual(failures.length + 3);
  expect(logged).toEqual([
    "job claim failed: Service temporarily unavailable: the database is busy.",
    "job claim failed: Service temporarily unavailable: the database is failing.",
    "job claims resumed",
  ]);
});
