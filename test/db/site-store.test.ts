// The SiteStore contract, run against SQLite and PostgreSQL alike: a due run starts once however many
// instances ask at once, a busy site skips its due run but moves on, a run's change set against the
// previous success, page rows as a run's history, a revoked key's sites not due, deletion.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { defaultCrawlOptions, type PageMemory, unpackPage } from "../../src/crawler/index.ts";
import { migratePostgres } from "../../src/db/postgres/database.ts";
import { createPostgresJobRetention } from "../../src/db/postgres/job-retention.ts";
import { createPostgresSiteStore } from "../../src/db/postgres/sites.ts";
import { migrate } from "../../src/db/sqlite/database.ts";
import { createSqliteJobRetention } from "../../src/db/sqlite/job-retention.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { createSqliteSiteStore } from "../../src/db/sqlite/sites.ts";
import { type JobRetention, newJobId, type NewJob } from "../../src/jobs/job-store.ts";
import type { NewSite, SiteStore } from "../../src/sites/site-store.ts";
import { createDatabase, stopCluster } from "../support/postgres.ts";
import { needs } from "../support/requires.ts";

const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
  stopCluster();
});

/** A store and a way to run SQL on its database (to finish a run as the runner would). */
interface Backend {
  store: SiteStore;
  /** The job store's retention over the same database (it sweeps the page rows a site no longer needs). */
  retention: JobRetention;
  exec: (text: string, ...params: (string | number | null | Uint8Array)[]) => Promise<void>;
}

const backends: [string, boolean, () => Promise<Backend>][] = [
  [
    "sqlite",
    false,
    async () => {
      const db = new Database(":memory:", { strict: true });
      migrate(db, sqliteMigrations);
      closers.push(() => db.close());
      const direct = async <T>(fn: (d: Database) => T) => fn(db);
      return {
        store: createSqliteSiteStore({ read: direct, write: direct }),
        retention: createSqliteJobRetention({ read: direct, write: direct }),
        exec: async (text, ...params) => void db.query(text.replace(/\$\d+/g, "?")).run(...params),
      };
    },
  ],
  [
    "postgres",
    !needs(import.meta.path, "postgresql"),
    async () => {
      const sql = new SQL(await createDatabase(), { max: 8 });
      await migratePostgres(sql);
      closers.push(() => sql.close());
      return {
        store: createPostgresSiteStore({ query: (fn) => fn(sql) }),
        retention: createPostgresJobRetention({ query: (fn) => fn(sql) }),
        exec: async (text, ...params) => void (await sql.unsafe(text, params)),
      };
    },
  ],
];

function newSite(keyId: number, overrides: Partial<NewSite> = {}): NewSite {
  return {
    id: newJobId(),
    keyId,
    url: "http://site.test/",
    options: defaultCrawlOptions(1000),
    credentials: null,
    everyHours: 1,
    nextRunAt: 1_000,
    callbackUrl: null,
    callbackSecret: null,
    publishToken: null,
    indexnow: null,
    createdAt: new Date().toISOString(),
    ...overrides,
  };
}

const run = (site: NewSite): NewJob => ({
  id: newJobId(),
  keyId: site.keyId,
  url: site.url,
  options: site.options,
  callbackUrl: null,
  callbackSecret: null,
  createdAt: new Date().toISOString(),
  siteId: site.id,
});

const page = (url: string, fingerprint: string, listed = true): PageMemory => ({
  url,
  etag: `"${fingerprint}"`,
  lastModified: null,
  fingerprint,
  lastmod: "2026-11-01T00:00:00Z",
  exclusion: listed ? null : "noindex",
  canonical: null,
  links: [`${new URL(url).origin}/x`, "https://elsewhere.test/y"],
  extra: null,
});

for (const [name, skip, open] of backends) {
  describe.skipIf(skip)(`SiteStore on ${name}`, () => {
    test("a due run starts once when ten ask at once; the next time moves a period on", async () => {
      const { store, exec } = await open();
      await exec(
        `INSERT INTO api_keys (name, prefix, key_hash, daily_limit, created_at) VALUES ('k', 'genapi_x', $1, 10, 'now')`,
        new Uint8Array(32),
      );
      const site = newSite(1);
      await store.create(site);
      expect((await store.due(2_000, 10)).map((s) => s.id)).toEqual([site.id]);
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () =>
          store.startRun(site.id, { job: run(site), maxQueued: 100, due: { nowMs: 2_000, nextRunAt: 3_602_000 } }),
        ),
      );
      expect(outcomes.filter((o) => o === "started").length).toBe(1);
      expect(outcomes.filter((o) => o === "not due").length).toBe(9);
      const stored = (await store.get(site.id))!;
      expect(stored.nextRunAt).toBe(3_602_000);
      expect((await store.runs(site.id, 10, null)).length).toBe(1);
      expect(await store.due(2_000, 10)).toEqual([]);
      // Due again while the run is still queued: skipped, and the time moves on all the same.
      expect(await store.startRun(site.id, { job: run(site), maxQueued: 100, due: { nowMs: 3_602_000, nextRunAt: 7_202_000 } })).toBe(
        "busy",
      );
      expect((await store.get(site.id))!.nextRunAt).toBe(7_202_000);
      expect(await store.startRun(site.id, { job: run(site), maxQueued: 100 })).toBe("busy");
      // A revoked key's site is not due.
      await exec(`UPDATE api_keys SET revoked_at = 'then'`);
      expect(await store.due(10_000_000, 10)).toEqual([]);
    });

    test("a run over the limit is recorded failed at once; the change set against the previous success; page rows as history", async () => {
      const { store, exec } = await open();
      const site = newSite(7, { everyHours: null, nextRunAt: null });
      await store.create(site);
      const first = run(site);
      expect(await store.startRun(site.id, { job: first, maxQueued: 100 })).toBe("started");
      await store.putPages(first.id, [
        page("http://site.test/", "f0"),
        page("http://site.test/a", "a1"),
        page("http://site.test/gone", "g1"),
      ]);
      await exec(`UPDATE jobs SET status = 'succeeded' WHERE id = $1`, first.id);
      expect(await store.recordSuccess(site.id, first.id)).toEqual({ added: 3, removed: 0, changed: 0, unchanged: 0, previous_run: null });
      expect((await store.get(site.id))!.lastSuccess).toBe(first.id);
      expect((await store.previousPages(first.id, ["http://site.test/a", "http://site.test/nope"])).map(unpackPage)).toEqual([
        page("http://site.test/a", "a1"),
      ]);
      expect(await store.previousPages(first.id, ["http://site.test/nope"])).toEqual([]);

      const over = run(site);
      const failed = { error: { status: 429 as const, message: "over" }, finishedAt: new Date().toISOString() };
      expect(await store.startRun(site.id, { job: over, maxQueued: 100, failed })).toBe("started");
      const second = run(site);
      expect(await store.startRun(site.id, { job: second, maxQueued: 100 })).toBe("started");
      // The start page read unchanged: its row is copied from the first run's, not written.
      await store.carryPages(second.id, first.id, ["http://site.test/", "http://site.test/", "http://site.test/never"]);
      await store.putPages(second.id, [
        page("http://site.test/a", "a2"),
        page("http://site.test/new", "n1"),
        page("http://site.test/hidden", "h1", false),
      ]);
      expect(
        (await store.previousPages(second.id, ["http://site.test/", "http://site.test/a", "http://site.test/never"]))
          .map(unpackPage)
          .sort((a, b) => a.url.localeCompare(b.url)),
      ).toEqual([page("http://site.test/", "f0"), page("http://site.test/a", "a2")]);
      // A continued run copies or writes a page again: the row is replaced, not doubled.
      await store.putPages(second.id, [{ ...page("http://site.test/", "f0"), etag: '"other"' }]);
      await store.carryPages(second.id, first.id, ["http://site.test/"]);
      expect((await store.previousPages(second.id, ["http://site.test/"])).map(unpackPage)).toEqual([page("http://site.test/", "f0")]);
      await exec(`UPDATE jobs SET status = 'succeeded' WHERE id = $1`, second.id);
      expect(await store.recordSuccess(site.id, second.id)).toEqual({
        added: 1,
        removed: 1,
        changed: 1,
        unchanged: 1,
        previous_run: first.id,
      });
      // Recorded once: a second call (a run published again after a lost lease) changes nothing.
      expect(await store.recordSuccess(site.id, second.id)).toBeNull();
      expect(await store.changes(second.id, "added", null, 10)).toEqual(["http://site.test/new"]);
      expect(await store.changes(second.id, "removed", null, 10)).toEqual(["http://site.test/gone"]);
      expect(await store.changes(second.id, "changed", null, 10)).toEqual(["http://site.test/a"]);
      expect((await store.runs(site.id, 10, null)).map((job) => [job.id, job.status])).toEqual([
        [second.id, "succeeded"],
        [over.id, "failed"],
        [first.id, "succeeded"],
      ]);

      await store.remove(site.id);
      expect(await store.get(site.id)).toBeNull();
      expect(await store.runs(site.id, 10, null)).toEqual([]);
    });

    test("removed: a page gone, or listed before and excluded now; none when every listed page is listed again", async () => {
      const { store, exec } = await open();
      const site = newSite(9, { everyHours: null, nextRunAt: null });
      await store.create(site);
      const urls = ["http://site.test/", "http://site.test/a", "http://site.test/b", "http://site.test/c"];
      const runs: string[] = [];
      const succeed = async (pages: (id: string) => Promise<void>) => {
        const next = run(site);
        expect(await store.startRun(site.id, { job: next, maxQueued: 100 })).toBe("started");
        await pages(next.id);
        await exec(`UPDATE jobs SET status = 'succeeded' WHERE id = $1`, next.id);
        runs.push(next.id);
        return store.recordSuccess(site.id, next.id);
      };
      // Run 1 lists a, b, c and the start page, and excludes d.
      await succeed((id) => store.putPages(id, [...urls.map((url) => page(url, "1")), page("http://site.test/d", "1", false)]));
      // Run 2 reads every page as it was: nothing removed, though d, excluded both times, is not listed.
      expect(await succeed((id) => store.carryPages(id, runs[0]!, [...urls, "http://site.test/d"]))).toEqual({
        added: 0,
        removed: 0,
        changed: 0,
        unchanged: 4,
        previous_run: runs[0]!,
      });
      // Run 3: b is gone, c is excluded now, d is listed now.
      expect(
        await succeed(async (id) => {
          await store.carryPages(id, runs[1]!, ["http://site.test/", "http://site.test/a"]);
          await store.putPages(id, [page("http://site.test/c", "1", false), page("http://site.test/d", "1")]);
        }),
      ).toEqual({ added: 1, removed: 2, changed: 0, unchanged: 2, previous_run: runs[1]! });
      expect(await store.changes(runs[2]!, "removed", null, 10)).toEqual(["http://site.test/b", "http://site.test/c"]);
      expect(await store.changes(runs[2]!, "added", null, 10)).toEqual(["http://site.test/d"]);
      expect(await store.changes(runs[1]!, "removed", null, 10)).toEqual([]);
    });

    test("the page rows of a run that is no longer its site's history are swept in batches, to the last; the history's stay", async () => {
      const { store, retention, exec } = await open();
      const site = newSite(8, { everyHours: null, nextRunAt: null });
      await store.create(site);
      // 23 rows: batches of 5 leave a remainder; the URLs' order is not the order they were written in.
      const urls = Array.from({ length: 23 }, (_, i) => `http://site.test/p${(i * 7) % 23}`);
      const first = run(site);
      expect(await store.startRun(site.id, { job: first, maxQueued: 100 })).toBe("started");
      await store.putPages(
        first.id,
        urls.map((url) => page(url, "f1")),
      );
      await exec(`UPDATE jobs SET status = 'succeeded' WHERE id = $1`, first.id);
      await store.recordSuccess(site.id, first.id);
      const second = run(site);
      expect(await store.startRun(site.id, { job: second, maxQueued: 100 })).toBe("started");
      await store.carryPages(second.id, first.id, urls.slice(0, 20));
      await exec(`UPDATE jobs SET status = 'succeeded' WHERE id = $1`, second.id);
      await store.recordSuccess(site.id, second.id);
      const batches: number[] = [];
      for (let swept = await retention.sweep(5); swept > 0; swept = await retention.sweep(5)) batches.push(swept);
      expect(batches).toEqual([5, 5, 5, 5, 3]);
      expect(await store.previousPages(first.id, urls)).toEqual([]);
      expect((await store.previousPages(second.id, urls)).map((row) => row.url).sort()).toEqual(urls.slice(0, 20).sort());
    });
  });
}
