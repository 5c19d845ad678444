// A site's run over its store (SQLite, in memory): the previous run's rows are read a frontier
// window at a time, not one query a page, each row as the previous run wrote it; pages read
// unchanged are copied from the previous run's rows, the others written.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { type PageMemory, unpackPage } from "../../src/crawler/index.ts";
import { migrate } from "../../src/db/sqlite/database.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { createSqliteSiteStore } from "../../src/db/sqlite/sites.ts";
import { siteRun } from "../../src/sites/runs.ts";
import type { SiteStore } from "../../src/sites/site-store.ts";

const page = (i: number, fingerprint = `f${i}`): PageMemory => ({
  url: `http://site.test/p${i}`,
  etag: `"e${i}"`,
  lastModified: null,
  fingerprint,
  lastmod: "2026-11-01T00:00:00Z",
  exclusion: null,
  canonical: null,
  links: [`http://site.test/p${i + 1}`, "https://elsewhere.test/y"],
  extra: null,
});

/** The store, counting the statements a run sends. */
function store(): { sites: SiteStore; calls: { previousPages: number; putPages: number; carryPages: number } } {
  const db = new Database(":memory:", { strict: true });
  migrate(db, sqliteMigrations);
  // The runs' jobs: their page rows are keyed by the jobs' seqs.
  for (const id of ["run1", "run2"])
    db.query(
      `INSERT INTO jobs (id, key_id, status, url, options, created_at, progress) VALUES (?, 1, 'running', 'http://site.test/', '{}', '', '{}')`,
    ).run(id);
  const direct = async <T>(fn: (d: Database) => T) => fn(db);
  const sites = createSqliteSiteStore({ read: direct, write: direct });
  const calls = { previousPages: 0, putPages: 0, carryPages: 0 };
  return {
    calls,
    sites: {
      ...sites,
      previousPages: (...args) => {
        calls.previousPages++;
        return sites.previousPages(...args);
      },
      putPages: (...args) => {
        calls.putPages++;
        return sites.putPages(...args);
      },
      carryPages: (...args) => {
        calls.carryPages++;
        return sites.carryPages(...args);
      },
    },
  };
}

test("the history is read a window at a time; unchanged pages are copied, the others written", async () => {
  const { sites, calls } = store();
  const pages = Array.from({ length: 1200 }, (_, i) => page(i));
  await sites.putPages("run1", pages);
  calls.putPages = 0;

  // The frontier: the previous run's pages in order, then one it never read.
  const frontier = [...pages.map((p) => p.url), "http://site.test/new"];
  const run = siteRun(sites, "run2", "run1", (n) => frontier.slice(0, n));
  const read: (PageMemory | null)[] = [];
  while (frontier.length > 0) {
    // Eight at a time, as the crawl fetches.
    const taken = frontier.splice(0, 8);
    read.push(...(await Promise.all(taken.map((url) => run.history.previous(url)))));
  }
  expect(read).toEqual([...pages, null]);
  // 1,201 URLs: three reads (the URLs asked for at once, then the next 500 of the frontier each), not one a page.
  expect(calls.previousPages).toBe(3);

  await run.putPages([{ url: pages[0]!.url, unchanged: true }, page(1, "changed"), { url: pages[2]!.url, unchanged: true }]);
  expect(calls).toEqual({ previousPages: 3, putPages: 1, carryPages: 1 });
  // The next run's history: the copied rows as run 1 wrote them (validators, lastmod, links), the written one as given.
  const kept = await sites.previousPages("run2", [pages[0]!.url, pages[1]!.url, pages[2]!.url, pages[3]!.url]);
  expect(kept.map(unpackPage).sort((a, b) => a.url.localeCompare(b.url))).toEqual([pages[0]!, page(1, "changed"), pages[2]!]);
});

test("a site's first run has no history and writes every page", async () => {
  const { sites, calls } = store();
  const run = siteRun(sites, "run1", null, () => []);
  expect(await run.history.previous("http://site.test/p0")).toBeNull();
  await run.putPages([page(0)]);
  expect(calls).toEqual({ previousPages: 0, putPages: 1, carryPages: 0 });
});
