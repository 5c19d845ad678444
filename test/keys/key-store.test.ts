import type { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/sqlite/database.ts";
import { generateApiKey, hashApiKey } from "../../src/keys/key-format.ts";
import { authenticate, createKey, listKeys, revokeKey } from "../../src/db/sqlite/keys.ts";
import { validateDailyLimit, validateKeyName } from "../../src/keys/key-store.ts";

const dir = mkdtempSync(join(tmpdir(), "genapi-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = new Date("2026-11-21T10:15:00.123Z");
const T1 = new Date("2026-11-21T11:00:00.000Z");
const T2 = new Date("2026-11-22T09:30:00.456Z");

/** Random bytes that make the key's random part start with `start` (base62 digits), then vary. */
function keyStartingWith(start: string): (n: number) => Uint8Array {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  let first = true;
  return (n) => {
    const bytes = crypto.getRandomValues(new Uint8Array(n)).map((b) => b % 62);
    if (first) {
      [...start].forEach((c, i) => {
        bytes[i] = alphabet.indexOf(c);
      });
    }
    first = false;
    return bytes;
  };
}

describe("createKey and listKeys", () => {
  test("returns the key once and stores a record with exactly the listed fields", () => {
    const db = openDatabase(":memory:");
    const { key, record } = createKey(db, { name: "Acme", dailyLimit: 1000 }, T0);
    expect(key).toMatch(/^genapi_[0-9A-Za-z]{38}$/);
    expect(record).toEqual({
      id: 1,
      name: "Acme",
      prefix: key.slice(0, 12),
      daily_limit: 1000,
      created_at: "2026-11-21T10:15:00.123Z",
      last_used_at: null,
      revoked_at: null,
    });
    const free = createKey(db, { name: "Free", dailyLimit: null }, T1);
    expect(free.record.id).toBe(2);
    expect(free.record.daily_limit).toBeNull();
    expect(listKeys(db)).toEqual([record, free.record]);
    expect(Object.keys(listKeys(db)[0]!).sort()).toEqual([
      "created_at",
      "daily_limit",
      "id",
      "last_used_at",
      "name",
      "prefix",
      "revoked_at",
    ]);
  });

  test("only the hash reaches the database file", () => {
    const path = join(dir, "secrets.db");
    const db = openDatabase(path);
    const keys = [1, 2, 3].map((i) => createKey(db, { name: `k${i}`, dailyLimit: null }, T0).key);
    const fileBytes = () => Buffer.concat([path, `${path}-wal`].filter(existsSync).map((file) => readFileSync(file)));
    const scan = (bytes: Buffer) => {
      for (const key of keys) {
        expect(bytes.includes(key)).toBe(false);
        expect(bytes.includes(key.slice(7))).toBe(false); // random part and checksum
        expect(bytes.includes(key.slice(12))).toBe(false); // the part the prefix does not show
        // Positive controls: the scan does see what is stored.
        expect(bytes.includes(key.slice(0, 12))).toBe(true);
        expect(bytes.includes(Buffer.from(hashApiKey(key)))).toBe(true);
      }
    };
    scan(fileBytes());
    db.close();
    scan(fileBytes());
  });

  test("rejects bad names and limits with messages for the command line", () => {
    const db = openDatabase(":memory:");
    const bad: [string, string][] = [
      ["", "--name must not be empty."],
      ["   ", "--name must not be empty."],
      ["x".repeat(101), "--name must be at most 100 characters."],
      ["a\nb", "--name must not contain control characters."],
      ["a\u0000b", "--name must not contain control characters."],
      ["evil\u202Egnp.exe", "--name must not contain control characters."],
    ];
    for (const [name, message] of bad) {
      expect(() => validateKeyName(name)).toThrow(message);
      expect(() => createKey(db, { name, dailyLimit: null }, T0)).toThrow(message);
    }
    expect(validateKeyName("😀".repeat(100))).toBe("😀".repeat(100)); // characters, not UTF-16 units
    expect(validateKeyName("Café Ünïcode – team")).toBe("Café Ünïcode – team");
    for (const limit of [0, -1, 1.5, 10_000_001, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => validateDailyLimit(limit)).toThrow("--daily-limit must be an integer from 1 to 10000000.");
      expect(() => createKey(db, { name: "n", dailyLimit: limit }, T0)).toThrow("--daily-limit");
    }
    expect(validateDailyLimit(1)).toBe(1);
    expect(validateDailyLimit(10_000_000)).toBe(10_000_000);
    expect(validateDailyLimit(null)).toBeNull();
    expect(listKeys(db)).toEqual([]);
  });
});

describe("revokeKey", () => {
  test("by id, then already revoked without moving revoked_at", () => {
    const db = openDatabase(":memory:");
    const { record } = createKey(db, { name: "a", dailyLimit: null }, T0);
    const other = createKey(db, { name: "b", dailyLimit: null }, T0);
    expect(revokeKey(db, "1", T1)).toEqual({
      status: "revoked",
      record: { ...record, revoked_at: "2026-11-21T11:00:00.000Z" },
    });
    expect(revokeKey(db, "1", T2)).toEqual({
      status: "already_revoked",
      record: { ...record, revoked_at: "2026-11-21T11:00:00.000Z" },
    });
    expect(listKeys(db)[1]).toEqual(other.record);
  });

  test("by 12-character prefix, by 8-character prefix, and by the whole key", () => {
    const db = openDatabase(":memory:");
    const a = createKey(db, { name: "a", dailyLimit: null }, T0, keyStartingWith("Aaaaa"));
    const b = createKey(db, { name: "b", dailyLimit: null }, T0, keyStartingWith("Bbbbb"));
    const c = createKey(db, { name: "c", dailyLimit: null }, T0, keyStartingWith("Ccccc"));
    expect(revokeKey(db, a.key.slice(0, 12), T1)).toMatchObject({ status: "revoked", record: { id: a.record.id } });
    expect(revokeKey(db, "genapi_B", T1)).toMatchObject({ status: "revoked", record: { id: b.record.id } });
    expect(revokeKey(db, c.key, T1)).toMatchObject({ status: "revoked", record: { id: c.record.id } });
    expect(listKeys(db).map((k) => k.revoked_at)).toEqual(Array(3).fill("2026-11-21T11:00:00.000Z"));
  });

  test("ambiguous prefix revokes nothing; a longer prefix decides", () => {
    const db = openDatabase(":memory:");
    const a = createKey(db, { name: "a", dailyLimit: null }, T0, keyStartingWith("XYabc"));
    const b = createKey(db, { name: "b", dailyLimit: null }, T0, keyStartingWith("XYdef"));
    expect(revokeKey(db, "genapi_XY", T1)).toEqual({ status: "ambiguous", matches: [a.record, b.record] });
    expect(listKeys(db).map((k) => k.revoked_at)).toEqual([null, null]);
    expect(revokeKey(db, "genapi_XYd", T1)).toMatchObject({ status: "revoked", record: { id: b.record.id } });
  });

  test("not found: unknown ids and prefixes, too short, wildcards, malformed", () => {
    const db = openDatabase(":memory:");
    const { key } = createKey(db, { name: "a", dailyLimit: null }, T0, keyStartingWith("Qwert"));
    const notFound = [
      "2",
      "0",
      "99999999999999999999999",
      "genapi_", // shorter than 8 characters, although it starts every key
      "genapi__", // `_` is a LIKE wildcard: must not match "genapi_Q"
      "genapi_%",
      "genapi_Z",
      "Qwert",
      key.slice(0, 13), // longer than the prefix but not a whole key: cannot be checked
      key.slice(0, -1) + (key.endsWith("0") ? "1" : "0"), // whole key, bad checksum
      generateApiKey(), // valid key that was never stored
      "",
    ];
    for (const selector of notFound) expect(revokeKey(db, selector, T1)).toEqual({ status: "not_found" });
    expect(listKeys(db)[0]!.revoked_at).toBeNull();
  });
});

describe("authenticate", () => {
  test("returns the record and records last_used_at each time", () => {
    const db = openDatabase(":memory:");
    const { key, record } = createKey(db, { name: "a", dailyLimit: 7 }, T0);
    expect(authenticate(db, key, T1)).toEqual({ ...record, last_used_at: "2026-11-21T11:00:00.000Z" });
    expect(authenticate(db, key, T2)).toEqual({ ...record, last_used_at: "2026-11-22T09:30:00.456Z" });
    expect(listKeys(db)[0]!.last_used_at).toBe("2026-11-22T09:30:00.456Z");
  });

  test("refuses missing, unknown and revoked keys, leaving last_used_at alone", () => {
    const db = openDatabase(":memory:");
    const { key } = createKey(db, { name: "a", dailyLimit: null }, T0);
    expect(authenticate(db, null, T1)).toBeNull();
    expect(authenticate(db, "", T1)).toBeNull();
    expect(authenticate(db, generateApiKey(), T1)).toBeNull();
    expect(authenticate(db, key.toUpperCase(), T1)).toBeNull();
    expect(authenticate(db, key, T1)?.id).toBe(1);
    revokeKey(db, "1", T1);
    expect(authenticate(db, key, T2)).toBeNull();
    expect(listKeys(db)[0]!.last_used_at).toBe("2026-11-21T11:00:00.000Z");
  });

  test("a key with a bad checksum is refused without touching the database", () => {
    const touched: PropertyKey[] = [];
    const untouchable = new Proxy({} as Database, {
      get(_target, property) {
        touched.push(property);
        throw new Error("database touched");
      },
    });
    const key = generateApiKey();
    const mistyped = key.slice(0, 20) + (key[20] === "a" ? "b" : "a") + key.slice(21);
    expect(authenticate(untouchable, mistyped, T1)).toBeNull();
    expect(authenticate(untouchable, "not-a-key", T1)).toBeNull();
    expect(touched).toEqual([]);
    // Control: a well-formed key does reach the database.
    expect(() => authenticate(untouchable, key, T1)).toThrow("database touched");
  });

  test("a key created through another handle works at once", () => {
    const path = join(dir, "two-handles.db");
    const server = openDatabase(path);
    const cli = openDatabase(path);
    const first = createKey(cli, { name: "first", dailyLimit: null }, T0);
    expect(authenticate(server, first.key, T1)?.name).toBe("first");
    const second = createKey(cli, { name: "second", dailyLimit: 3 }, T1);
    expect(authenticate(server, second.key, T2)?.name).toBe("second");
    expect(revokeKey(cli, "1", T2).status).toBe("revoked");
    expect(authenticate(server, first.key, T2)).toBeNull();
    server.close();
    cli.close();
  });
});
