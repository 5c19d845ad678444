// The Store's contract as tests any backend runs (test/db/store.test.ts runs it on SQLite and on a
// real PostgreSQL): keys, exact admission under concurrency, release, peek, the UTC day, schema
// migrations run once when several processes start together, and a store that cannot answer
// failing fast with StoreUnavailableError instead of waiting.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { StoreUnavailableError, type Store } from "../../src/db/store.ts";
import { waitFor } from "../support/wait.ts";

export interface Backend {
  name: string;
  /** A `--db` for a new database that no process has opened yet. */
  newSpec(): Promise<string>;
  /** Opens a store on `spec` (again: another handle, as another process would). */
  reopen(spec: string): Promise<Store>;
  /** Makes the database unable to answer (a held write lock, a stopped server); returns the undo. */
  makeUnavailable(spec: string): Promise<() => Promise<void>>;
  problem: "busy" | "unreachable";
  /** Makes the database answer too late (the counters' table locked by another session), if it can. */
  makeSlow?(spec: string): Promise<() => Promise<void>>;
  /** Another session holds the jobs table (SQLite: the write lock) until the undo. */
  lockJobs(spec: string): Promise<() => Promise<void>>;
  /** Every test skipped: the store's server is missing (its test file printed why). */
  skip?: boolean;
}

const NOW = new Date("2026-11-22T12:00:00Z");

export function storeSuite(backend: Backend): void {
  const open = async () => {
    const spec = await backend.newSpec();
    return { spec, store: await backend.reopen(spec) };
  };

  describe.skipIf(backend.skip === true)(`Store on ${backend.name}`, () => {
    test("keys: create, list, authenticate, revoke; a key created through one handle works on another at once", async () => {
      const { store, spec } = await open();
      const other = await backend.reopen(spec);
      try {
        const { key, record } = await store.keys.create({ name: "first", dailyLimit: 7 }, NOW);
        expect(record).toMatchObject({
          id: 1,
          name: "first",
          daily_limit: 7,
          created_at: NOW.toISOString(),
          last_used_at: null,
          revoked_at: null,
        });
        expect(await store.keys.list()).toEqual([record]);
        const later = new Date(NOW.getTime() + 1000);
        expect((await other.keys.authenticate(key, later))?.last_used_at).toBe(later.toISOString());
        expect(await other.keys.authenticate(`${key.slice(0, -1)}${key.endsWith("x") ? "y" : "x"}`, later)).toBeNull();
        expect(await other.keys.authenticate(null, later)).toBeNull();
        expect((await store.keys.revoke(String(record.id), later)).status).toBe("revoked");
        expect((await store.keys.revoke(String(record.id), later)).status).toBe("already_revoked");
        expect(await other.keys.authenticate(key, later)).toBeNull();
        expect((await store.keys.revoke("999", later)).status).toBe("not_found");
      } finally {
        await other.close();
        await store.close();
      }
    });

    test("revoke by whole key, by prefix, and an ambiguous prefix that revokes nothing", async () => {
      const { store, spec } = await open();
      const other = await backend.reopen(spec);
      try {
        // Keys until two share their 8-character prefix (`genapi_` + one of 62 characters).
        const created: { key: string; record: { id: number; prefix: string } }[] = [];
        const byShortPrefix = new Map<string, number>();
        while (created.length < 63) {
          const made = await store.keys.create({ name: `k${created.length}`, dailyLimit: null }, NOW);
          created.push(made);
          const short = made.key.slice(0, 8);
          byShortPrefix.set(short, (byShortPrefix.get(short) ?? 0) + 1);
          if (byShortPrefix.get(short) === 2) break;
        }
        const shared = [...byShortPrefix].find(([, n]) => n === 2)![0];
        const ambiguous = await store.keys.revoke(shared, NOW);
        expect(ambiguous.status).toBe("ambiguous");
        expect(ambiguous.status === "ambiguous" && ambiguous.matches.map((m) => m.prefix.slice(0, 8))).toEqual([shared, shared]);
        expect((await store.keys.list()).every((k) => k.revoked_at === null)).toBe(true);

        const [byKey, byPrefix] = created.filter((c) => c.key.startsWith(shared));
        expect(await store.keys.revoke(byKey!.key, NOW)).toMatchObject({ status: "revoked", record: { id: byKey!.record.id } });
        expect(await store.keys.revoke(byPrefix!.record.prefix, NOW)).toMatchObject({
          status: "revoked",
          record: { id: byPrefix!.record.id },
        });
        // The other handle sees both revoked at once; the rest still authenticate.
        expect(await other.keys.authenticate(byKey!.key, NOW)).toBeNull();
        expect(await other.keys.authenticate(byPrefix!.key, NOW)).toBeNull();
        const rest = created.filter((c) => c !== byKey && c !== byPrefix);
        for (const c of rest) expect((await other.keys.authenticate(c.key, NOW))?.id).toBe(c.record.id);
        // A prefix shorter than 8 characters, or not a key's start, finds nothing.
        expect((await store.keys.revoke("genapi_", NOW)).status).toBe("not_found");
      } finally {
        await other.close();
        await store.close();
      }
    });

    test("60 concurrent admissions over two handles with a limit of 25 admit exactly 25; peek agrees", async () => {
      const { store, spec } = await open();
      const other = await backend.reopen(spec);
      try {
        const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? other : store).quota.admit("key:1", 25, NOW)));
        expect(results.filter((r) => r.admitted)).toHaveLength(25);
        expect(results.filter((r) => !r.admitted).every((r) => r.remaining === 0 && r.retryAfter >= 1)).toBe(true);
        expect((await store.quota.peek("key:1", 25, NOW)).remaining).toBe(0);
        expect((await store.quota.peek("key:2", 25, NOW)).remaining).toBe(25);
      } finally {
        await other.close();
        await store.close();
      }
    });

    test("release gives back one admission of its day, never below zero", async () => {
      const { store } = await open();
      try {
        const first = await store.quota.admit("b", 2, NOW);
        await store.quota.admit("b", 2, NOW);
        expect((await store.quota.admit("b", 2, NOW)).admitted).toBe(false);
        await store.quota.release("b", first.day);
        expect((await store.quota.peek("b", 2, NOW)).remaining).toBe(1);
        await store.quota.release("b", first.day);
        await store.quota.release("b", first.day);
        await store.quota.release("b", first.day);
        expect((await store.quota.peek("b", 2, NOW)).remaining).toBe(2);
      } finally {
        await store.close();
      }
    });

    test("a new UTC day starts from zero", async () => {
      const { store } = await open();
      try {
        const late = new Date("2026-11-22T23:59:59.900Z");
        expect((await store.quota.admit("d", 1, late)).admitted).toBe(true);
        const refused = await store.quota.admit("d", 1, late);
        expect(refused).toMatchObject({ admitted: false, retryAfter: 1 });
        const next = await store.quota.admit("d", 1, new Date("2026-11-23T00:00:00Z"));
        expect(next).toMatchObject({ admitted: true, day: "2026-11-23", remaining: 0 });
      } finally {
        await store.close();
      }
    });

    test("opening again migrates nothing and keeps the data; two processes opening a new database at once both succeed", async () => {
      const { store, spec } = await open();
      await store.keys.create({ name: "kept", dailyLimit: null }, NOW);
      await store.close();
      const again = await backend.reopen(spec);
      expect((await again.keys.list()).map((k) => k.name)).toEqual(["kept"]);
      await again.close();

      const spec2 = await backend.newSpec();
      const script = `import { openStore } from ${JSON.stringify(join(import.meta.dir, "../../src/open-store.ts"))};
        const s = await openStore(process.env.SPEC, { purpose: "cli" });
        await s.keys.create({ name: "p" + process.pid, dailyLimit: null }, new Date());
        await s.close();`;
      const racers = Array.from({ length: 3 }, () =>
        Bun.spawn([process.execPath, "-e", script], { env: { ...process.env, SPEC: spec2 }, stdout: "pipe", stderr: "pipe" }),
      );
      const outcomes = await Promise.all(racers.map(async (p) => ({ code: await p.exited, stderr: await new Response(p.stderr).text() })));
      expect(outcomes).toEqual(outcomes.map(() => ({ code: 0, stderr: "" })));
      const check = await backend.reopen(spec2);
      expect(await check.keys.list()).toHaveLength(3);
      await check.close();
    }, 30_000);

    test(`a database that cannot answer: StoreUnavailableError("${backend.problem}") within 2 s, then back by itself`, async () => {
      const { store, spec } = await open();
      try {
        expect(await store.ready()).toBe(true);
        await store.quota.admit("u", 10, NOW);
        const undo = await backend.makeUnavailable(spec);
        let error: unknown;
        const started = performance.now();
        try {
          await store.quota.admit("u", 10, NOW);
        } catch (e) {
          error = e;
        }
        const ms = performance.now() - started;
        const readyStarted = performance.now();
        const readyWhileDown = await store.ready();
        const readyMs = performance.now() - readyStarted;
        await undo();
        expect(readyWhileDown).toBe(false);
        expect(readyMs).toBeLessThan(2_000);
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect((error as StoreUnavailableError).problem).toBe(backend.problem);
        expect(ms).toBeLessThan(2_000);
        // Back by itself within seconds (PostgreSQL: a pooled connection the restart cut fails once).
        await waitFor(() => store.ready(), 5_000, "the store to be ready again", 100);
        // The refused admission was not counted.
        expect((await store.quota.peek("u", 10, NOW)).remaining).toBe(9);
      } finally {
        await store.close();
      }
    }, 20_000);

    test("a lock held 2.5 s: a request's job statement answers 503 within 2 s, background work's waits it out", async () => {
      const { store, spec } = await open();
      try {
        const progress = { pages_crawled: 0, pages_queued: 0, urls_listed: 0, elapsed_ms: 0 };
        const undo = await backend.lockJobs(spec);
        const started = performance.now();
        const released = Bun.sleep(2_500).then(undo);
        const settle = <T>(work: Promise<T>) =>
          work.then(
            (value) => ({ value, ms: performance.now() - started }),
            (error) => ({ error, ms: performance.now() - started }),
          );
        const [request, background] = await Promise.all([
          settle(store.jobs.heartbeat("no-such-job", "me", 0, 1_000, progress)),
          settle(store.backgroundJobs.heartbeat("no-such-job", "me", 0, 1_000, progress)),
        ]);
        await released;
        expect("error" in request && request.error).toBeInstanceOf(StoreUnavailableError);
        expect(request.ms).toBeLessThan(2_000);
        expect(background).toMatchObject({ value: false });
        expect(background.ms).toBeGreaterThanOrEqual(2_500);
      } finally {
        await store.close();
      }
    }, 20_000);

    if (backend.makeSlow) {
      const makeSlow = backend.makeSlow;
      test("a database that answers too late: StoreUnavailableError within 2 s, and the abandoned admission never counts", async () => {
        const { store, spec } = await open();
        try {
          await store.quota.admit("s", 10, NOW);
          const undo = await makeSlow(spec);
          const started = performance.now();
          const outcomes = await Promise.allSettled([store.quota.admit("s", 10, NOW), store.quota.admit("s", 10, NOW)]);
          const ms = performance.now() - started;
          await undo();
          expect(outcomes.map((o) => o.status === "rejected" && o.reason instanceof StoreUnavailableError)).toEqual([true, true]);
          expect(ms).toBeLessThan(2_000);
          // The statements that lost the race must not go through once the lock is gone.
          await Bun.sleep(500);
          expect((await store.quota.peek("s", 10, NOW)).remaining).toBe(9);
          expect((await store.quota.admit("s", 10, NOW)).remaining).toBe(8);
        } finally {
          await store.close();
        }
      }, 20_000);
    }
  });
}
