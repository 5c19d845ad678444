import type { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/sqlite/database.ts";
import { admit, peek, pruneCounters, release } from "../../src/db/sqlite/quota.ts";
import { nextResetSeconds, quotaBucketForKey, quotaForKey, rateLimitHeaders, rateLimitMessage, utcDay } from "../../src/quota/quota.ts";

const dir = mkdtempSync(join(tmpdir(), "genapi-quota-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOON = new Date("2026-11-21T12:00:00.000Z");
const LAST_MS = new Date("2026-11-21T23:59:59.999Z");
const MIDNIGHT = new Date("2026-11-22T00:00:00.000Z");
const RESET_21 = Date.UTC(2026, 10, 22) / 1000; // 1795305600
const RESET_22 = Date.UTC(2026, 10, 23) / 1000;

function counters(db: Database): { day: string; bucket: string; count: number }[] {
  return db.query<{ day: string; bucket: string; count: number }, []>("SELECT * FROM usage_counters ORDER BY day, bucket").all();
}

test("utcDay and nextResetSeconds", () => {
  expect(utcDay(LAST_MS)).toBe("2026-11-21");
  expect(utcDay(MIDNIGHT)).toBe("2026-11-22");
  expect(utcDay(new Date("2026-11-22T01:00:00+02:00"))).toBe("2026-11-21");
  expect(RESET_21).toBe(1795305600);
  expect(nextResetSeconds(NOON)).toBe(RESET_21);
  expect(nextResetSeconds(LAST_MS)).toBe(RESET_21);
  expect(nextResetSeconds(MIDNIGHT)).toBe(RESET_22);
});

describe("admit", () => {
  test("limit 5: five admitted counting down, the sixth refused", () => {
    const db = openDatabase(":memory:");
    const results = Array.from({ length: 7 }, () => admit(db, "ip:203.0.113.9", 5, NOON));
    expect(results.map((r) => [r.admitted, r.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
    expect(results[5]).toEqual({
      admitted: false,
      limit: 5,
      remaining: 0,
      resetAt: RESET_21,
      day: "2026-11-21",
      retryAfter: 43200,
    });
    // Refusals are not counted.
    expect(counters(db)).toEqual([{ day: "2026-11-21", bucket: "ip:203.0.113.9", count: 5 }]);
  });

  test("buckets are separate: each premium key and each address has its own count", () => {
    const db = openDatabase(":memory:");
    for (let i = 0; i < 3; i++) expect(admit(db, "key:1", 3, NOON).admitted).toBe(true);
    expect(admit(db, "key:1", 3, NOON).admitted).toBe(false);
    expect(admit(db, "key:2", 3, NOON)).toMatchObject({ admitted: true, remaining: 2 });
    expect(admit(db, "ip:203.0.113.9", 5, NOON)).toMatchObject({ admitted: true, remaining: 4 });
  });

  test("counts per UTC day: exact reset and Retry-After across midnight", () => {
    const db = openDatabase(":memory:");
    for (let i = 0; i < 5; i++) admit(db, "b", 5, LAST_MS);
    const refused = admit(db, "b", 5, LAST_MS);
    expect(refused).toEqual({
      admitted: false,
      limit: 5,
      remaining: 0,
      resetAt: RESET_21,
      day: "2026-11-21",
      retryAfter: 1,
    });
    expect(rateLimitHeaders(refused, LAST_MS)).toEqual({
      "X-RateLimit-Limit": "5",
      "X-RateLimit-Remaining": "0",
      "X-RateLimit-Reset": "1795305600",
      "RateLimit-Policy": '"daily";q=5;w=86400',
      RateLimit: '"daily";r=0;t=1',
      "Retry-After": "1",
    });
    const next = admit(db, "b", 5, MIDNIGHT);
    expect(next).toEqual({
      admitted: true,
      limit: 5,
      remaining: 4,
      resetAt: RESET_22,
      day: "2026-11-22",
      retryAfter: 86400,
    });
    expect(rateLimitHeaders(next, MIDNIGHT)).toEqual({
      "X-RateLimit-Limit": "5",
      "X-RateLimit-Remaining": "4",
      "X-RateLimit-Reset": String(RESET_22),
      "RateLimit-Policy": '"daily";q=5;w=86400',
      RateLimit: '"daily";r=4;t=86400',
    });
  });

  test("refuses a limit below 1 rather than admitting", () => {
    const db = openDatabase(":memory:");
    expect(() => admit(db, "b", 0, NOON)).toThrow(RangeError);
    expect(() => admit(db, "b", 2.5, NOON)).toThrow(RangeError);
    expect(counters(db)).toEqual([]);
  });

  test("a lowered limit reports nothing remaining", () => {
    const db = openDatabase(":memory:");
    for (let i = 0; i < 4; i++) admit(db, "b", 10, NOON);
    expect(admit(db, "b", 3, NOON)).toMatchObject({ admitted: false, remaining: 0 });
    expect(peek(db, "b", 3, NOON).remaining).toBe(0);
  });
});

describe("release, peek and prune", () => {
  test("release gives back exactly one admission, never below zero", () => {
    const db = openDatabase(":memory:");
    for (let i = 0; i < 5; i++) admit(db, "b", 5, NOON);
    release(db, "b", "2026-11-21");
    expect(admit(db, "b", 5, NOON)).toMatchObject({ admitted: true, remaining: 0 });
    expect(admit(db, "b", 5, NOON).admitted).toBe(false);

    admit(db, "c", 5, NOON);
    release(db, "c", "2026-11-21");
    release(db, "c", "2026-11-21");
    release(db, "missing", "2026-11-21");
    expect(counters(db)).toEqual([
      { day: "2026-11-21", bucket: "b", count: 5 },
      { day: "2026-11-21", bucket: "c", count: 0 },
    ]);
    expect(admit(db, "c", 5, NOON).remaining).toBe(4);
  });

  test("release of an admission made before midnight gives back that day's", () => {
    const db = openDatabase(":memory:");
    const admission = admit(db, "b", 5, LAST_MS);
    admit(db, "b", 5, MIDNIGHT);
    release(db, "b", admission.day);
    expect(counters(db)).toEqual([
      { day: "2026-11-21", bucket: "b", count: 0 },
      { day: "2026-11-22", bucket: "b", count: 1 },
    ]);
  });

  test("peek reports without counting, and its headers have no Retry-After", () => {
    const db = openDatabase(":memory:");
    expect(peek(db, "b", 5, NOON)).toEqual({ limit: 5, remaining: 5, resetAt: RESET_21, day: "2026-11-21" });
    admit(db, "b", 5, NOON);
    admit(db, "b", 5, NOON);
    expect(peek(db, "b", 5, NOON).remaining).toBe(3);
    expect(peek(db, "b", 5, NOON).remaining).toBe(3);
    for (let i = 0; i < 3; i++) admit(db, "b", 5, NOON);
    expect(rateLimitHeaders(peek(db, "b", 5, NOON), NOON)).toEqual({
      "X-RateLimit-Limit": "5",
      "X-RateLimit-Remaining": "0",
      "X-RateLimit-Reset": "1795305600",
      "RateLimit-Policy": '"daily";q=5;w=86400',
      RateLimit: '"daily";r=0;t=43200',
    });
  });

  test("pruneCounters keeps yesterday and today", () => {
    const db = openDatabase(":memory:");
    const insert = db.query("INSERT INTO usage_counters (day, bucket, count) VALUES (?, 'b', 1)");
    for (const day of ["2025-12-31", "2026-11-19", "2026-11-20", "2026-11-21"]) insert.run(day);
    pruneCounters(db, NOON);
    expect(counters(db).map((row) => row.day)).toEqual(["2026-11-20", "2026-11-21"]);
  });

  test("admit prunes once per day", () => {
    const db = openDatabase(":memory:");
    const insertOld = () => db.query("INSERT OR IGNORE INTO usage_counters (day, bucket, count) VALUES ('2026-01-01', 'old', 1)").run();
    insertOld();
    admit(db, "b", 5, NOON);
    expect(counters(db).map((row) => row.bucket)).toEqual(["b"]);
    insertOld();
    admit(db, "b", 5, LAST_MS); // same day: no second prune
    expect(counters(db).map((row) => row.bucket)).toEqual(["old", "b"]);
    admit(db, "b", 5, MIDNIGHT);
    expect(counters(db).map((row) => `${row.day} ${row.bucket}`)).toEqual(["2026-11-21 b", "2026-11-22 b"]);
  });
});

describe("shared and concurrent counting", () => {
  test("two handles on one file share counts, which survive reopening", () => {
    const path = join(dir, "shared.db");
    const a = openDatabase(path);
    const b = openDatabase(path);
    for (let i = 0; i < 3; i++) expect(admit(a, "b", 5, NOON).admitted).toBe(true);
    expect(admit(b, "b", 5, NOON).remaining).toBe(1);
    expect(admit(a, "b", 5, NOON).remaining).toBe(0);
    expect(admit(b, "b", 5, NOON).admitted).toBe(false);
    a.close();
    b.close();
    const reopened = openDatabase(path);
    expect(peek(reopened, "b", 5, NOON).remaining).toBe(0);
    reopened.close();
  });

  test("30 concurrent admissions admit exactly what remains", async () => {
    const path = join(dir, "concurrent.db");
    const handles = [openDatabase(path), openDatabase(path)];
    for (const [used, limit, expected] of [
      [2, 5, 3],
      [0, 100, 30],
      [0, 30, 30],
      [10, 25, 15],
    ] as const) {
      const bucket = `b${used}-${limit}`;
      for (let i = 0; i < used; i++) admit(handles[0]!, bucket, limit, NOON);
      const results = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          await Bun.sleep(0);
          return admit(handles[i % 2]!, bucket, limit, NOON);
        }),
      );
      expect(results.filter((r) => r.admitted)).toHaveLength(expected);
      expect(
        results
          .map((r) => r.remaining)
          .filter((_, i) => results[i]!.admitted)
          .sort((x, y) => x - y),
      ).toEqual(Array.from({ length: expected }, (_, i) => limit - used - expected + i));
      expect(peek(handles[1]!, bucket, limit, NOON).remaining).toBe(limit - used - expected);
    }
    for (const handle of handles) handle.close();
  });

  test("processes racing on one file admit exactly the limit", async () => {
    const path = join(dir, "processes.db");
    openDatabase(path).close();
    const quota = join(import.meta.dir, "../../src/db/sqlite/quota.ts");
    const database = join(import.meta.dir, "../../src/db/sqlite/database.ts");
    const startAt = Date.now() + 500; // start together so the writes overlap
    const script = `
      import { openDatabase } from ${JSON.stringify(database)};
      import { admit } from ${JSON.stringify(quota)};
      const db = openDatabase(${JSON.stringify(path)});
      await Bun.sleep(Math.max(0, ${startAt} - Date.now()));
      let admitted = 0;
      for (let i = 0; i < 200; i++) if (admit(db, "race", 250, new Date(${NOON.getTime()})).admitted) admitted++;
      db.close();
      console.log(admitted);`;
    const children = Array.from({ length: 3 }, () => Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" }));
    const outputs = await Promise.all(
      children.map(async (child) => {
        const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
        expect(err).toBe("");
        expect(code).toBe(0);
        return Number(out.trim());
      }),
    );
    expect(outputs.reduce((sum, n) => sum + n, 0)).toBe(250);
    const db = openDatabase(path);
    expect(counters(db)).toEqual([{ day: "2026-11-21", bucket: "race", count: 250 }]);
    db.close();
  });
});

describe("buckets, limits and the message", () => {
  test("premium keys count per key, free keys per address (IPv6 per /64)", () => {
    const premium = { id: 7, daily_limit: 1000 };
    const free = { id: 8, daily_limit: null };
    expect(quotaBucketForKey(premium, "203.0.113.9")).toBe("key:7");
    expect(quotaBucketForKey(premium, "2001:db8::1")).toBe("key:7");
    expect(quotaBucketForKey(free, "203.0.113.9")).toBe("ip:203.0.113.9");
    expect(quotaBucketForKey(free, "::ffff:203.0.113.9")).toBe("ip:203.0.113.9");
    expect(quotaBucketForKey(free, "2001:db8:1:2::1")).toBe("ip:2001:db8:1:2::/64");
    expect(quotaBucketForKey(free, "2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("ip:2001:db8:1:2::/64");
    expect(quotaBucketForKey({ id: 9, daily_limit: null }, "203.0.113.9")).toBe("ip:203.0.113.9");
    expect(quotaForKey(premium, "203.0.113.9", 5)).toEqual({ bucket: "key:7", limit: 1000 });
    expect(quotaForKey(free, "203.0.113.9", 5)).toEqual({ bucket: "ip:203.0.113.9", limit: 5 });
  });

  test("rateLimitMessage", () => {
    expect(rateLimitMessage(5)).toBe("API rate limit exceeded (5 requests per day). Please contact us for premium access.");
    expect(rateLimitMessage(1000)).toBe("API rate limit exceeded (1000 requests per day). Please contact us for premium access.");
  });
});
