// An app wired for app.handle() tests: an in-memory SQLite store, a settable clock and client
// address, and a crawler that tests replace.
import { createApp } from "../../src/app.ts";
import { openDatabase } from "../../src/db/sqlite/database.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { createSqliteStore } from "../../src/db/sqlite/store.ts";
import { CrawlSlots } from "../../src/sitemap/crawl-slots.ts";
import type { CrawlResult } from "../../src/crawler/index.ts";
import { emptyExclusionReport } from "../../src/crawler/exclusions.ts";
import { quietPoliteness } from "../../src/crawler/index.ts";
import type { SitemapDeps } from "../../src/sitemap/routes.ts";
import { renderSitemap } from "../../src/crawler/output/xml.ts";

/** A crawl result as the route receives it, from the fields a test cares about. */
export function crawlResult(run: Pick<CrawlResult, "url" | "entries" | "pagesCrawled" | "truncated" | "durationMs">): CrawlResult {
  return {
    ...run,
    sitemap: renderSitemap(run.entries),
    ...emptyExclusionReport(),
    politeness: quietPoliteness(4),
    render: { mode: "never", rendered: false, pages_rendered: 0 },
  };
}

export function testApp(overrides: Partial<SitemapDeps> = {}, options: { ready?: () => boolean } = {}) {
  const db = openDatabase(":memory:", sqliteMigrations);
  const store = createSqliteStore(db, ":memory:");
  const state = { now: new Date("2026-11-21T10:00:00.000Z"), ip: "198.51.100.7" };
  const deps: SitemapDeps = {
    keys: store.keys,
    quota: store.quota,
    log: (message) => process.stderr.write(`genapi: ${message}\n`),
    now: () => state.now,
    clientIp: () => state.ip,
    freeDailyLimit: 5,
    slots: new CrawlSlots(4, 16),
    maxPages: 500,
    hostConcurrency: 4,
    renderAvailable: false,
    checkTarget: async () => {},
    crawl: async (url) => crawlResult({ url, entries: [{ loc: url }], pagesCrawled: 1, truncated: false, durationMs: 12 }),
    ...overrides,
  };
  const ready = options.ready ?? (() => true);
  const app = createApp({ isReady: async () => ready(), log: deps.log, sitemap: deps });
  const call = (path: string, init: RequestInit = {}) => app.handle(new Request(`http://localhost${path}`, init));
  return { app, db, store, deps, state, call };
}
