// The Store on the embedded SQLite file. bun:sqlite is synchronous, so a busy_timeout wait would
// stop the whole event loop: the serving connection waits 0 ms in SQLite and retries a busy
// statement asynchronously instead, up to STORE_WAIT_MS, then answers 503 (StoreUnavailableError).
import type { Database } from "bun:sqlite";
import { statfsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import {
  BACKGROUND_DEADLINE_MS,
  processOwner,
  StoreOpenError,
  StoreUnavailableError,
  type OpenOptions,
  type Store,
  type StoreProblem,
} from "../store.ts";
import { openDatabase, type SqliteAccess } from "./database.ts";
import { createSqliteJobStore } from "./jobs.ts";
import { createSqliteSiteStore } from "./sites.ts";
import { authenticate, createKey, activeKey, listKeys, revokeKey } from "./keys.ts";
import { sqliteMigrations } from "./migrations.ts";
import { admit, peek, release } from "./quota.ts";
import { createSqliteHostLeases } from "./hosts.ts";

/** How long a statement of the server keeps retrying another process's lock before a 503. */
export const STORE_WAIT_MS = 1500;
const FIRST_PAUSE_MS = 5;
const MAX_PAUSE_MS = 50;

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

/**
 * The problem an SQLite error shows in the database itself (not in the statement): a request then
 * answers 503 naming it, as /readyz does, instead of a 500 with a stack for every request.
 */
export function sqliteProblem(error: unknown): StoreProblem | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return null;
  if (code.startsWith("SQLITE_FULL")) return "full";
  if (code.startsWith("SQLITE_READONLY")) return "read-only";
  if (/^SQLITE_(IOERR|CORRUPT|NOTADB|CANTOPEN)/.test(code)) return "failing";
  return null;
}

/**
 * Runs statements on `db` without ever waiting inside SQLite: a busy statement is retried after a
 * short pause that yields to other requests; past `waitMs` it throws StoreUnavailableError("busy").
 * A database that takes no writes or fails to read throws StoreUnavailableError at once.
 * `fn` must be safe to run again after it failed busy (one statement, or one transaction).
 */
export function sqliteAccess(db: Database, waitMs = STORE_WAIT_MS): SqliteAccess {
  const run = async <T>(fn: (db: Database) => T): Promise<T> => {
    const deadline = performance.now() + waitMs;
    for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
      try {
        return fn(db);
      } catch (error) {
        if (!isBusy(error)) {
          const problem = sqliteProblem(error);
          throw problem === null ? error : new StoreUnavailableError(problem);
        }
        if (performance.now() + pause > deadline) throw new StoreUnavailableError("busy");
        await Bun.sleep(pause);
      }
    }
  };
  return { read: run, write: run };
}

/** The reason of an open failure, in a few words, without a stack. */
function openFailure(path: string, error: unknown): StoreOpenError {
  const code = (error as { code?: unknown } | null)?.code;
  const message = String((error as Error)?.message ?? error).split("\n")[0];
  const reasons: Record<string, string> = {
    ENOENT: "its directory does not exist",
    ENOTDIR: "a parent of the path is not a directory",
    EEXIST: "a parent of the path is not a directory",
    EACCES: "permission denied",
    EROFS: "read-only file system",
    ENOSPC: "no space left on the device",
    SQLITE_NOTADB: "the file is not a SQLite database",
    SQLITE_CANTOPEN: "unable to open the file (a directory, or a directory without write permission?)",
    SQLITE_READONLY: "the database is read-only",
    SQLITE_FULL: "the disk is full",
    SQLITE_CORRUPT: "the database file is corrupted",
  };
  const reason = (typeof code === "string" && (reasons[code] ?? reasons[code.replace(/_[A-Z]+$/, "")])) || message;
  return new StoreOpenError(`cannot open database ${path}: ${reason}`);
}

/** Below this much free space a write may fail with SQLITE_FULL (WAL frames, a new page or two). */
const MIN_FREE_BYTES = 1024 * 1024;

/**
 * Room to write next to the file. A rolled-back write never reaches the disk in WAL mode (its
 * pages stay in the cache), so it cannot tell a full disk; the file system's free space can.
 * Root may use the blocks reserved for it; anyone else only the available ones.
 */
function hasRoomToWrite(path: string): boolean {
  try {
    const fs = statfsSync(dirname(path));
    const blocks = process.getuid?.() === 0 ? fs.bfree : fs.bavail;
    return Number(blocks) * Number(fs.bsize) >= MIN_FREE_BYTES;
  } catch {
    return false;
  }
}

/** Identity of the file opened, to notice a file deleted or replaced under the server. */
function fileId(path: string): string | null {
  try {
    const stat = statSync(path);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return null;
  }
}

export async function openSqliteStore(path: string, options: OpenOptions): Promise<Store> {
  let db: Database;
  try {
    db = openDatabase(path, sqliteMigrations);
    // Serving never waits inside SQLite (see sqliteAccess); the keys commands may block a while.
    if (options.purpose === "serve") db.exec("PRAGMA busy_timeout = 0");
  } catch (error) {
    throw openFailure(path, error);
  }
  return createSqliteStore(db, path, options.purpose === "serve" ? STORE_WAIT_MS : 0);
}

/** The Store over an open, migrated database (`path` is watched for deletion; ":memory:" is not). */
export function createSqliteStore(db: Database, path: string, waitMs = STORE_WAIT_MS): Store {
  const opened = path === ":memory:" ? null : fileId(path);
  const access = sqliteAccess(db, waitMs);
  const { write, read } = access;
  return {
    kind: "sqlite",
    keys: {
      create: (input, now) => write((d) => createKey(d, input, now)),
      list: () => read(listKeys),
      active: (id) => read((d) => activeKey(d, id)),
      revoke: (idOrPrefix, now) => write((d) => revokeKey(d, idOrPrefix, now)),
      authenticate: (key, now) => write((d) => authenticate(d, key, now)),
    },
    quota: {
      admit: (bucket, limit, now) => write((d) => admit(d, bucket, limit, now)),
      release: (bucket, day) => write((d) => release(d, bucket, day)),
      peek: (bucket, limit, now) => read((d) => peek(d, bucket, limit, now)),
    },
    jobs: createSqliteJobStore(access),
    hosts: createSqliteHostLeases(access, processOwner()),
    // Busy waits are pauses between tries, never inside SQLite: a longer one still leaves the event loop free.
    backgroundJobs: createSqliteJobStore(sqliteAccess(db, Math.max(waitMs, BACKGROUND_DEADLINE_MS))),
    sites: createSqliteSiteStore(access),
    backgroundSites: createSqliteSiteStore(sqliteAccess(db, Math.max(waitMs, BACKGROUND_DEADLINE_MS))),
    async ready() {
      // What requests need: the file still the one opened, its pages readable, and a write lock
      // and a write that are then rolled back.
      if (opened !== null && (fileId(path) !== opened || !hasRoomToWrite(path))) return false;
      try {
        await write((d) => {
          d.exec("BEGIN IMMEDIATE");
          try {
            d.query("SELECT count(*) FROM api_keys").get();
            d.query("INSERT INTO meta (key, value) VALUES ('readyz', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(
              new Date().toISOString(),
            );
          } finally {
            d.exec("ROLLBACK");
          }
        });
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      db.close();
    },
  };
}
