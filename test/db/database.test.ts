import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate, openDatabase } from "../../src/db/sqlite/database.ts";
import { migrations } from "../../src/db/sqlite/migrations.ts";
import type { Migration } from "../../src/db/store.ts";

const dir = mkdtempSync(join(tmpdir(), "genapi-db-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const version = (db: Database) => db.query<{ user_version: number }, []>("PRAGMA user_version").get()!.user_version;
const tables = (db: Database) =>
  db
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all()
    .map((t) => t.name);

test("migrations are numbered 1, 2, ... without gaps", () => {
  expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
  expect(migrations.length).toBeGreaterThanOrEqual(2);
});

describe("openDatabase", () => {
  test("a fresh file gets every migration, WAL and a busy timeout", () => {
    const path = join(dir, "fresh.db");
    const db = openDatabase(path);
    expect(version(db)).toBe(migrations.at(-1)!.version);
    expect(tables(db)).toEqual(["api_keys", "meta", "sqlite_sequence", "usage_counters"]);
    expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()!.journal_mode).toBe("wal");
    expect(db.query<{ timeout: number }, []>("PRAGMA busy_timeout").get()!.timeout).toBe(5000);
    db.close();
  });

  test("a missing directory is not created (a typo must not start a new database): ENOENT", () => {
    const missing = join(dir, "typo");
    expect(() => openDatabase(join(missing, "x.db"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(existsSync(missing)).toBe(false);
  });

  test("reopening runs nothing again and keeps the data", () => {
    const path = join(dir, "reopen.db");
    const first = openDatabase(path);
    first.query("INSERT INTO usage_counters (day, bucket, count) VALUES ('2026-11-21', 'b', 3)").run();
    first.close();
    const second = openDatabase(path);
    expect(version(second)).toBe(migrations.at(-1)!.version);
    expect(second.query("SELECT count FROM usage_counters").all()).toEqual([{ count: 3 }]);
    migrate(second, migrations);
    expect(version(second)).toBe(migrations.at(-1)!.version);
    second.close();
  });

  test("two handles open one file at once and see each other's writes", () => {
    const path = join(dir, "two.db");
    const a = openDatabase(path);
    const b = openDatabase(path);
    expect(version(b)).toBe(migrations.at(-1)!.version);
    a.query("INSERT INTO meta (key, value) VALUES ('x', '1')").run();
    expect(b.query("SELECT value FROM meta WHERE key = 'x'").get()).toEqual({ value: "1" });
    a.close();
    b.close();
  });
});

describe("migrate", () => {
  const step = (version: number, sql: string): Migration => ({ version, description: `step ${version}`, sql });

  test("runs only the steps newer than the database, in version order", () => {
    const db = new Database(":memory:");
    migrate(db, [step(1, "CREATE TABLE one (x INTEGER)")]);
    expect(version(db)).toBe(1);
    // Step 1 would fail if it ran again (the table exists).
    migrate(db, [
      step(3, "CREATE TABLE three (x INTEGER)"),
      step(2, "CREATE TABLE two (x INTEGER)"),
      step(1, "CREATE TABLE one (x INTEGER)"),
    ]);
    expect(version(db)).toBe(3);
    expect(tables(db)).toEqual(["one", "three", "two"]);
  });

  test("a failing step is rolled back and leaves the version where it was", () => {
    const db = new Database(":memory:");
    const steps = [step(1, "CREATE TABLE one (x INTEGER)"), step(2, "CREATE TABLE two (x INTEGER); INSERT INTO nowhere VALUES (1);")];
    expect(() => migrate(db, steps)).toThrow("no such table: nowhere");
    expect(version(db)).toBe(1);
    expect(tables(db)).toEqual(["one"]);
  });
});

describe("schema version 2", () => {
  test("constraints hold", () => {
    const db = openDatabase(":memory:");
    const insertKey = db.query(
      "INSERT INTO api_keys (name, prefix, key_hash, daily_limit, created_at) VALUES (?, 'genapi_abcde', ?, ?, '2026-11-21T00:00:00.000Z')",
    );
    const hash = new Uint8Array(32).fill(1);
    insertKey.run("a", hash, null);
    expect(() => insertKey.run("b", hash, null)).toThrow("UNIQUE");
    expect(() => insertKey.run("c", new Uint8Array(16), null)).toThrow("CHECK");
    expect(() => insertKey.run("d", new Uint8Array(32).fill(2), 0)).toThrow("CHECK");
    expect(() => insertKey.run("e", "not a blob, but 32 characters!!!", null)).toThrow("cannot store TEXT value in BLOB column");
    const insertCount = db.query("INSERT INTO usage_counters (day, bucket, count) VALUES ('2026-11-21', ?, ?)");
    expect(() => insertCount.run("b", -1)).toThrow("CHECK");
    expect(() => insertCount.run("b", "many")).toThrow("cannot store TEXT value in INTEGER column");
    insertCount.run("b", 1);
    expect(() => insertCount.run("b", 2)).toThrow("UNIQUE");
  });

  test("ids are never reused", () => {
    const db = openDatabase(":memory:");
    const insertKey = db.query(
      "INSERT INTO api_keys (name, prefix, key_hash, created_at) VALUES ('n', 'genapi_abcde', ?, '2026-11-21T00:00:00.000Z') RETURNING id",
    );
    expect(insertKey.get(new Uint8Array(32).fill(1))).toEqual({ id: 1 });
    expect(insertKey.get(new Uint8Array(32).fill(2))).toEqual({ id: 2 });
    db.query("DELETE FROM api_keys WHERE id = 2").run();
    expect(insertKey.get(new Uint8Array(32).fill(3))).toEqual({ id: 3 });
  });
});
