// The store's host leases (politeness shared by processes, src/crawler/net/politeness.ts's
// HostCoordinator) on SQLite and on a real PostgreSQL: two owners stand for two processes, and a
// settable clock for time, so that a lease's expiry takes no waiting.
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { join } from "node:path";
import type { HostCoordinator } from "../../src/crawler/index.ts";
import { migratePostgres } from "../../src/db/postgres/database.ts";
import { createPostgresHostLeases } from "../../src/db/postgres/hosts.ts";
import { postgresAccess } from "../../src/db/postgres/store.ts";
import { openDatabase } from "../../src/db/sqlite/database.ts";
import { createSqliteHostLeases, fairGrant, HOST_LEASE_MS, RESERVE_LEAD_MS } from "../../src/db/sqlite/hosts.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { sqliteAccess } from "../../src/db/sqlite/store.ts";
import { tempDir } from "../support/binary.ts";
import { createDatabase, stopCluster } from "../support/postgres.ts";
import { needs } from "../support/requires.ts";

interface Backend {
  name: string;
  /** Two processes' coordinators on one new store, and the clock they read. */
  open(): Promise<{ a: HostCoordinator; b: HostCoordinator; clock: { now: number }; close: () => Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: "SQLite",
    async open() {
      const path = join(tempDir(), "genapi.db");
      const clock = { now: 1_800_000_000_000 };
      // Two connections to one file, as two processes have.
      const [dbA, dbB] = [openDatabase(path, sqliteMigrations), openDatabase(path, sqliteMigrations)];
      return {
        a: createSqliteHostLeases(sqliteAccess(dbA), "process-a", () => clock.now),
        b: createSqliteHostLeases(sqliteAccess(dbB), "process-b", () => clock.now),
        clock,
        close: async () => {
          dbA.close();
          dbB.close();
        },
      };
    },
  },
  {
    name: "PostgreSQL",
    async open() {
      const spec = await createDatabase();
      const [sqlA, sqlB] = [new SQL(spec, { max: 2 }), new SQL(spec, { max: 2 })];
      await migratePostgres(sqlA);
      const clock = { now: 1_800_000_000_000 };
      return {
        a: createPostgresHostLeases(postgresAccess(sqlA), "process-a", () => clock.now),
        b: createPostgresHostLeases(postgresAccess(sqlB), "process-b", () => clock.now),
        clock,
        close: async () => {
          await Promise.all([sqlA.close(), sqlB.close()]);
        },
      };
    },
  },
];

afterAll(() => stopCluster());

const HOST = "example.com:443";

test("fairGrant: what is wanted, within what others leave free and an even share among those who want", () => {
  expect(fairGrant(4, 4, [])).toBe(4);
  expect(fairGrant(2, 4, [])).toBe(2);
  expect(fairGrant(4, 4, [{ slots: 4, want: 4 }])).toBe(0);
  expect(fairGrant(4, 4, [{ slots: 2, want: 4 }])).toBe(2);
  // Three that want slots on a cap of 4: 1 each (2 would leave the third none while the others stay busy).
  const twoOthers = [
    { slots: 1, want: 4 },
    { slots: 1, want: 4 },
  ];
  expect(fairGrant(4, 4, twoOthers)).toBe(1);
  expect(fairGrant(4, 6, twoOthers)).toBe(2);
  // More processes than slots: one each while any is free, none when all are held.
  expect(fairGrant(4, 2, [{ slots: 1, want: 4 }])).toBe(1);
  expect(fairGrant(4, 2, twoOthers)).toBe(0);
});

const postgres = needs(import.meta.path, "postgresql");

for (const backend of backends) {
  describe.skipIf(backend.name === "PostgreSQL" && !postgres)(`host leases on ${backend.name}`, () => {
    test("the cap is shared: what one process holds (its in-flight requests included) the other cannot take", async () => {
      const { a, b, close } = await backend.open();
      try {
        expect((await a.claim(HOST, 4, 4, 0)).slots).toBe(4);
        // B asks while A holds everything: nothing, and its want is recorded.
        expect((await b.claim(HOST, 4, 4, 0)).slots).toBe(0);
        // A renews: its even share is now 2, but 4 of its requests are still in flight.
        expect((await a.claim(HOST, 4, 4, 4)).slots).toBe(2);
        expect((await b.claim(HOST, 4, 4, 0)).slots).toBe(0);
        // A's requests end: at its next renewal it holds its share only, and B gets the rest.
        expect((await a.claim(HOST, 4, 4, 2)).slots).toBe(2);
        expect((await b.claim(HOST, 4, 4, 0)).slots).toBe(2);
        // A gives its slots back: B may take them all.
        await a.release(HOST);
        expect((await b.claim(HOST, 4, 4, 2)).slots).toBe(4);
        // Another host is another count.
        expect((await a.claim("example.org:443", 4, 4, 0)).slots).toBe(4);
      } finally {
        await close();
      }
    });

    test("a process that stops gives back every slot it holds at once, on every host, and only its own", async () => {
      const { a, b, close } = await backend.open();
      try {
        expect((await a.claim(HOST, 4, 4, 4)).slots).toBe(4);
        expect((await a.claim("example.org:443", 3, 4, 3)).slots).toBe(3);
        expect((await b.claim("example.net:443", 4, 4, 4)).slots).toBe(4);
        await a.releaseAll();
        // No lease time waited out: B takes what A held.
        expect((await b.claim(HOST, 4, 4, 0)).slots).toBe(4);
        expect((await b.claim("example.org:443", 4, 4, 0)).slots).toBe(4);
        // B's own lease elsewhere stands: A gets nothing there.
        expect((await a.claim("example.net:443", 4, 4, 0)).slots).toBe(0);
      } finally {
        await close();
      }
    });

    test("a process that stops renewing loses its slots after the lease time, not before", async () => {
      const { a, b, clock, close } = await backend.open();
      try {
        expect((await a.claim(HOST, 4, 4, 4)).slots).toBe(4);
        clock.now += HOST_LEASE_MS - 1;
        expect((await b.claim(HOST, 4, 4, 0)).slots).toBe(0);
        clock.now += 2;
        expect((await b.claim(HOST, 4, 4, 0)).slots).toBe(4);
      } finally {
        await close();
      }
    });

    test("a pause holds for every process, and a shorter one does not cut a longer one", async () => {
      const { a, b, clock, close } = await backend.open();
      try {
        expect((await b.claim(HOST, 4, 4, 0)).pausedUntil).toBe(0);
        await a.pause(HOST, clock.now + 3_000);
        await a.pause(HOST, clock.now + 1_000);
        expect((await b.claim(HOST, 4, 4, 0)).pausedUntil).toBe(clock.now + 3_000);
      } finally {
        await close();
      }
    });

    test("start times are reserved in blocks that never overlap, whoever reserves them, and never in the past", async () => {
      const { a, b, clock, close } = await backend.open();
      try {
        // Blocks begin RESERVE_LEAD_MS ahead of the store's now, so that their first start has not
        // passed when the answer is back.
        const t0 = clock.now + RESERVE_LEAD_MS;
        expect(await a.reserveStarts(HOST, 200, 5)).toBe(t0);
        // B's block starts where A's ends: A's last start is t0 + 800, B's first t0 + 1000.
        expect(await b.reserveStarts(HOST, 200, 5)).toBe(t0 + 1_000);
        expect(await a.reserveStarts(HOST, 500, 2)).toBe(t0 + 2_000);
        // Long after, a block starts just ahead of now, not at the old next start.
        clock.now += 60_000;
        expect(await b.reserveStarts(HOST, 200, 5)).toBe(clock.now + RESERVE_LEAD_MS);
      } finally {
        await close();
      }
    });
  });
}
