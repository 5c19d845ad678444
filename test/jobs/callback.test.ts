// The callback at send time: the address guard judges the URL again with a fresh DNS answer (a
// name that resolved to a public address at creation may not any more), and a refusal is said
// as such, once, not as "not delivered after 4 tries".
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { migrate } from "../../src/db/sqlite/database.ts";
import { createSqliteJobStore } from "../../src/db/sqlite/jobs.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { createNotifier } from "../../src/jobs/callback.ts";
import { newJobId } from "../../src/jobs/job-store.ts";
import { defaultCrawlOptions } from "../../src/crawler/options.ts";

test("a callback whose name now resolves to a private address is not sent; the log says the guard refused it", async () => {
  const { store, id } = await jobWithCallback("https://hooks.rebind.test/hook");
  const logged: string[] = [];
  let sent = 0;
  let lookups = 0;
  const notify = createNotifier({
    store,
    policy: { allowPrivate: false, allowTargets: [] },
    resolve: async () => {
      lookups++;
      return [{ address: "10.0.0.5", family: 4 }];
    },
    view: async () => ({ id }) as never,
    userAgent: "genapi/1",
    backoffMs: () => 1,
    log: (line) => logged.push(line),
    send: async () => {
      sent++;
      return new Response("ok");
    },
  });
  await notify(id);
  expect({ sent, lookups }).toEqual({ sent: 0, lookups: 1 });
  expect(logged).toEqual([
    `job ${id}: callback not sent: the address guard refused it (Target address not allowed: hooks.rebind.test resolves to 10.0.0.5, a private address.)`,
  ]);
  expect(await store.pendingCallback(id)).toBeNull();
});

test("a callback that keeps failing is tried 4 times, and the log says 4", async () => {
  const { store, id } = await jobWithCallback("https://hooks.public.test/hook");
  const logged: string[] = [];
  let sent = 0;
  const notify = createNotifier({
    store,
    policy: { allowPrivate: false, allowTargets: [] },
    resolve: async () => [{ address: "93.184.216.34", family: 4 }],
    view: async () => ({ id }) as never,
    userAgent: "genapi/1",
    backoffMs: () => 1,
    log: (line) => logged.push(line),
    send: async () => {
      sent++;
      return new Response("no", { status: 503 });
    },
  });
  await notify(id);
  expect(sent).toBe(4);
  expect(logged).toEqual([`job ${id}: callback not delivered after 4 tries (HTTP 503)`]);
});

/** A job store in memory holding one job with `callbackUrl`. */
async function jobWithCallback(callbackUrl: string) {
  const db = new Database(":memory:", { strict: true });
  migrate(db, sqliteMigrations);
  const direct = async <T>(fn: (d: Database) => T) => fn(db);
  const store = createSqliteJobStore({ read: direct, write: direct });
  const id = newJobId();
  const job = {
    id,
    keyId: 1,
    url: "https://site.example.test/",
    options: defaultCrawlOptions(10),
    callbackSecret: "s3cret",
    createdAt: "x",
  };
  await store.create({ ...job, callbackUrl }, 10);
  return { store, id };
}
