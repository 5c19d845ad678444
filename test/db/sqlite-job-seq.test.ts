// SQLite's version 8 (src/db/sqlite/migrations.ts): a job's per-URL rows keyed by the job's seq
// instead of its id. A store written at version 7 carries a running job's crawl state and a site
// run's pages and change set over; rows of a job deleted before the step (waiting for the sweeper)
// are dropped, and the sweeper still removes that job's parts afterwards.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { migrate } from "../../src/db/sqlite/database.ts";
import { createSqliteJobStore } from "../../src/db/sqlite/jobs.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { createSqliteSiteStore } from "../../src/db/sqlite/sites.ts";

test("version 8 keys a job's rows by its seq and keeps the state of every job that is not deleted", async () => {
  const db = new Database(":memory:", { strict: true });
  const before = sqliteMigrations.filter((step) => step.version < 8);
  expect(before.length).toBe(sqliteMigrations.length - 1);
  migrate(db, before);
  const job = (id: string) =>
    db
      .query(
        `INSERT INTO jobs (id, key_id, status, url, options, created_at, progress) VALUES (?, 1, 'running', 'http://site.test/', '{}', 'x', '{}')`,
      )
      .run(id);
  job("first");
  job("running");
  // Rows as version 7 kept them: by the job's id.
  const url = db.query(`INSERT INTO job_urls (job_id, url, seq, depth, done) VALUES (?, ?, ?, 1, ?)`);
  url.run("running", "http://site.test/a", 1, 1);
  url.run("running", "http://site.test/b", 2, 0);
  url.run("gone", "http://site.test/x", 1, 0);
  db.query(`INSERT INTO job_entries (job_id, loc, lastmod, extra) VALUES ('running', 'http://site.test/a', '2026-11-01', NULL)`).run();
  db.query(`INSERT INTO job_entries (job_id, loc, lastmod, extra) VALUES ('gone', 'http://site.test/x', NULL, NULL)`).run();
  db.query(
    `INSERT INTO job_pages (job_id, url, etag, last_modified, fingerprint, lastmod, exclusion, canonical, links, extra)
     VALUES ('running', 'http://site.test/a', '"e"', NULL, 'f', '2026-11-01T00:00:00Z', NULL, NULL, X'00', NULL)`,
  ).run();
  db.query(`INSERT INTO site_changes (job_id, kind, url) VALUES ('running', 'added', 'http://site.test/a')`).run();
  db.query(`INSERT INTO job_links (job_id, url, referrer_count) VALUES ('running', 'http://site.test/b', 2)`).run();
  db.query(`INSERT INTO job_parts (job_id, n, body) VALUES ('gone', 0, X'00')`).run();
  db.query(`INSERT INTO job_cleanup (job_id, parts) VALUES ('gone', 1)`).run();
  db.query(`INSERT INTO page_cleanup (job_id) VALUES ('running')`).run();

  migrate(db, sqliteMigrations);
  const direct = async <T>(fn: (d: Database) => T) => fn(db);
  const jobs = createSqliteJobStore({ read: direct, write: direct });
  const sites = createSqliteSiteStore({ read: direct, write: direct });
  const seq = db.query<{ seq: number }, [string]>(`SELECT seq FROM jobs WHERE id = ?`).get("running")!.seq;
  expect(seq).toBe(2);

  // The running job's state, read through the store as the crawl reads it.
  expect(await jobs.frontier("running", 0, 10)).toEqual([{ url: "http://site.test/b", depth: 1, seq: 2 }]);
  expect([...(await jobs.seen("running", ["http://site.test/a", "http://site.test/b", "http://site.test/x"]))].sort()).toEqual([
    "http://site.test/a",
    "http://site.test/b",
  ]);
  expect(await jobs.lastSeq("running")).toBe(2);
  expect(await jobs.entries("running", null, 10)).toEqual([{ loc: "http://site.test/a", lastmod: "2026-11-01", extra: null }]);
  expect(await jobs.countEntries("running")).toBe(1);
  expect((await sites.previousPages("running", ["http://site.test/a"])).map((page) => page.fingerprint)).toEqual(["f"]);
  expect(await sites.changes("running", "added", null, 10)).toEqual(["http://site.test/a"]);
  expect(db.query(`SELECT job_seq, url, referrer_count FROM job_links`).all()).toEqual([
    { job_seq: seq, url: "http://site.test/b", referrer_count: 2 },
  ]);
  expect(db.query(`SELECT job_seq FROM page_cleanup`).all()).toEqual([{ job_seq: seq }]);
  // Another job's state is not the running job's: the first job has none.
  expect(await jobs.frontier("first", 0, 10)).toEqual([]);

  // The deleted job's rows are gone; its cleanup row keeps its id (for its parts) without a seq.
  expect(db.query(`SELECT count(*) AS n FROM job_urls WHERE url = 'http://site.test/x'`).get()).toEqual({ n: 0 });
  expect(db.query(`SELECT count(*) AS n FROM job_entries WHERE loc = 'http://site.test/x'`).get()).toEqual({ n: 0 });
  expect(db.query(`SELECT job_id, job_seq, parts FROM job_cleanup`).all()).toEqual([{ job_id: "gone", job_seq: null, parts: 1 }]);
  expect(await jobs.sweep(100)).toBe(1);
  expect(db.query(`SELECT count(*) AS n FROM job_parts`).get()).toEqual({ n: 0 });
  expect(db.query(`SELECT count(*) AS n FROM job_cleanup`).get()).toEqual({ n: 0 });
  // Then the page rows page_cleanup names.
  expect(await jobs.sweep(100)).toBe(1);
  expect(db.query(`SELECT count(*) AS n FROM job_pages`).get()).toEqual({ n: 0 });
});

test("a run deleted while it writes keeps no page rows, and the write does not fail", async () => {
  const db = new Database(":memory:", { strict: true });
  migrate(db, sqliteMigrations);
  for (const id of ["before", "now"])
    db.query(
      `INSERT INTO jobs (id, key_id, status, url, options, created_at, progress) VALUES (?, 1, 'running', 'http://site.test/', '{}', 'x', '{}')`,
    ).run(id);
  const direct = async <T>(fn: (d: Database) => T) => fn(db);
  const sites = createSqliteSiteStore({ read: direct, write: direct });
  const page = {
    url: "http://site.test/a",
    etag: '"e"',
    lastModified: null,
    fingerprint: "f",
    lastmod: "2026-11-01T00:00:00Z",
    exclusion: null,
    canonical: null,
    links: [],
    extra: null,
  };
  await sites.putPages("before", [page]);
  db.query(`DELETE FROM jobs WHERE id = 'now'`).run();
  await sites.putPages("now", [page]);
  await sites.carryPages("now", "before", [page.url]);
  expect(db.query(`SELECT job_seq, url FROM job_pages`).all()).toEqual([{ job_seq: 1, url: page.url }]);
});
