import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { dirname } from "node:path";
import type { Migration } from "../store.ts";
import { migrations as allMigrations } from "./migrations.ts";

/**
 * How long a writer waits for another process's lock before giving up (ms): for the `keys`
 * commands and migrations at start. The serving connection sets 0 and waits asynchronously
 * instead (store.ts), since a wait inside SQLite would stop the event loop.
 */
const BUSY_TIMEOUT_MS = 5000;

/** How statements reach the database: H2's connection wrapper (retry while busy, then 503). */
export interface SqliteAccess {
  read<T>(fn: (db: Database) => T): Promise<T>;
  write<T>(fn: (db: Database) => T): Promise<T>;
}

/**
 * Opens (creating if needed) the SQLite file and brings its schema up to date. WAL lets the
 * `keys` commands and other genapi processes write while a server runs; the busy timeout makes
 * them wait for each other instead of failing. A missing directory is never created: it is most
 * likely a typo, and a new database there would hold keys no server reads (ENOENT).
 */
export function openDatabase(path: string, migrations: Migration[] = allMigrations): Database {
  if (path !== ":memory:") checkDirectory(dirname(path));
  const db = new Database(path, { create: true, strict: true });
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  migrate(db, migrations);
  return db;
}

function checkDirectory(dir: string): void {
  const stat = statSync(dir, { throwIfNoEntry: false });
  if (stat === undefined) throw Object.assign(new Error(`the directory ${dir} does not exist`), { code: "ENOENT" });
  if (!stat.isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: "ENOTDIR" });
}

/** Runs the steps newer than the database's version, each in its own transaction. */
export function migrate(db: Database, migrations: Migration[]): void {
  const current = () => (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  for (const step of [...migrations].sort((a, b) => a.version - b.version)) {
    // BEGIN IMMEDIATE takes the write lock first, so two processes starting on a new file
    // cannot both run the same step.
    db.transaction(() => {
      if (current() >= step.version) return;
      db.exec(step.sql);
      db.exec(`PRAGMA user_version = ${step.version}`);
    }).immediate();
  }
}
