// Retention on a real SQLite job store: finished jobs past --job-retention days are deleted with
// their parts, and crawl state goes in batches, while a younger job and a running one stay.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { migrate } from "../../src/db/sqlite/database.ts";
import { createSqliteJobStore } from "../../src/db/sqlite/jobs.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { newJobId } from "../../src/jobs/job-store.ts";
import { startRetention } from "../../src/jobs/retention.ts";
import { defaultCrawlOptions } from "../../src/crawler/options.ts";
import { waitFor } from "../support/wait.ts";

test("finished jobs older than the retention are deleted in batches; younger and running ones stay", async () => {
  const db = new Database(":memory:", { strict: true });
  migrate(db, sqliteMigrations);
  let writes = 0;
  const direct = async <T>(fn: (d: Database) => T) => fn(db);
  const store = createSqliteJobStore({
    read: direct,
    write: async (fn) => {
      writes++;
      return fn(db);
    },
  });
  const day = 86_400_000;
  const now = Date.parse("2026-11-22T12:00:00.000Z");
  const facts = {
    url: "http://site.test/",
    truncated: false,
    pagesCrawled: 0,
    urlsListed: 0,
    queued: 0,
    excluded: {},
    excludedExamples: {},
  };
  const progress = { pages_crawled: 1, pages_queued: 0, urls_listed: 1, elapsed_ms: 1 };

  /** A job that ran and finished `age` ms before now, with 120 URLs of state and one part. */
  async function finishedJob(age: number): Promise<string> {
    const id = newJobId();
    await store.create(
      { id, keyId: 1, url: "http://site.test/", options: defaultCrawlOptions(10), callbackUrl: null, callbackSecret: null, createdAt: "x" },
      100,
    );
    expect((await store.claim("me", now - age, 60_000, "x"))?.id).toBe(id);
    const discovered = Array.from({ length: 120 }, (_, i) => ({ url: `http://site.test/${i}`, seq: i + 1, depth: 1 }));
    const entries = discovered.map(({ url }) => ({ loc: url, lastmod: null, extra: null }));
    await store.checkpoint(id, "me", now - age, 60_000, { done: [], discovered, seen: [], entries, progress, crawl: facts });
    await store.putPart(id, 0, Bun.gzipSync("<urlset/>"));
    const finishedAt = new Date(now - age).toISOString();
    expect(await store.finish(id, "me", { status: "succeeded", result: null, error: null, progress, finishedAt })).toBe(true);
    return id;
  }
  const old = await finishedJob(8 * day);
  const young = await finishedJob(6 * day);
  const running = newJobId();
  await store.create(
    {
      id: running,
      keyId: 1,
      url: "http://site.test/",
      options: defaultCrawlOptions(10),
      callbackUrl: null,
      callbackSecret: null,
      createdAt: "x",
    },
    100,
  );
  await store.claim("other", now, 60_000, "x");

  const before = writes;
  const retention = startRetention({ store, retentionDays: 7, now: () => now, rowBatch: 50, pauseMs: 1, log: () => {} });
  await waitFor(async () => (await store.countEntries(young)) === 0, 5_000, "retention to delete the young job's crawl state");
  await retention.stop();

  expect(await store.get(old)).toBeNull();
  expect(await store.getPart(old, 0)).toBeNull();
  expect(await store.countEntries(old)).toBe(0);
  // The young job keeps its result (its part) and loses only its crawl state.
  expect((await store.get(young))?.status).toBe("succeeded");
  expect(await store.getPart(young, 0)).not.toBeNull();
  expect(await store.countEntries(young)).toBe(0);
  expect((await store.get(running))?.status).toBe("running");
  // 2 jobs x (120 URLs + 120 entries) in batches of 50: many small writes, not one big one.
  expect(writes - before).toBeGreaterThanOrEqual(10);
});
