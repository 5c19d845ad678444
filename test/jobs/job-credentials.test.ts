// A job's credentials in the store, on SQLite and PostgreSQL alike: sealed with the job's id, read
// by a claim only (never by get or list), left to processes that can open them, kept across a
// hand-back, and erased when the job ends, whatever its status.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { createPostgresJobStore } from "../../src/db/postgres/jobs.ts";
import { postgresCredentialsMigration, postgresJobsMigration, postgresSitesMigration } from "../../src/db/postgres/migrations.ts";
import { migrate } from "../../src/db/sqlite/database.ts";
import { createSqliteJobStore } from "../../src/db/sqlite/jobs.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { newJobId, type JobStore, type NewJob } from "../../src/jobs/job-store.ts";
import { jobCredentials } from "../../src/jobs/job-credentials.ts";
import { defaultCrawlOptions, redactCrawlOptions } from "../../src/crawler/options.ts";
import { openSecretKeys } from "../../src/secrets/secret-key.ts";
import { createDatabase, stopCluster } from "../support/postgres.ts";
import { needs } from "../support/requires.ts";
import { tempDir } from "../support/binary.ts";
import { join } from "node:path";

const SECRET = "Planted-S3cret-9c1e";
const auth = { basic: { username: "preview", password: SECRET }, cookies: { session: SECRET } };
const progress = { pages_crawled: 0, pages_queued: 0, urls_listed: 0, elapsed_ms: 0 };

const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
  stopCluster();
});

/** Every text the store holds for the job, as a dump would show it. */
type Dump = () => Promise<string>;

const backends: [string, () => Promise<{ store: JobStore; dump: Dump }>][] = [
  [
    "sqlite",
    async () => {
      const db = new Database(":memory:", { strict: true });
      migrate(db, sqliteMigrations);
      closers.push(() => db.close());
      const direct = async <T>(fn: (d: Database) => T) => fn(db);
      return {
        store: createSqliteJobStore({ read: direct, write: direct }),
        dump: async () => JSON.stringify(db.query("SELECT * FROM jobs").all()),
      };
    },
  ],
  [
    "postgres",
    async () => {
      const sql = new SQL(await createDatabase());
      await sql.unsafe(postgresJobsMigration.sql);
      await sql.unsafe(postgresCredentialsMigration.sql);
      await sql.unsafe(postgresSitesMigration.sql);
      closers.push(() => sql.close());
      return {
        store: createPostgresJobStore({ query: (fn) => fn(sql) }),
        dump: async () => JSON.stringify(await sql.unsafe("SELECT * FROM jobs")),
      };
    },
  ],
];

async function sealer() {
  return jobCredentials(await openSecretKeys({ file: null, sqlitePath: join(tempDir(), "genapi.db") }));
}

async function newJob(credentials: Awaited<ReturnType<typeof sealer>> | null): Promise<NewJob> {
  const id = newJobId();
  const options = { ...defaultCrawlOptions(100), ...(credentials ? { auth } : {}) };
  return {
    id,
    keyId: 1,
    url: "http://site.test/",
    options: redactCrawlOptions(options),
    callbackUrl: null,
    callbackSecret: null,
    createdAt: new Date().toISOString(),
    credentials: credentials ? await credentials.seal(id, auth) : null,
  };
}

describe("sealing a job's credentials", () => {
  test("they open under the job's own id only: a sealed value copied to another job does not", async () => {
    const credentials = await sealer();
    const sealed = await credentials.seal("job-a", auth);
    expect(sealed).not.toContain(SECRET);
    expect(await credentials.open("job-a", sealed)).toEqual(auth);
    expect(await credentials.open("job-b", sealed)).toBeNull();
    // Another server's key: null, never an exception with the value in it.
    expect(await (await sealer()).open("job-a", sealed)).toBeNull();
  });
});

const postgres = needs(import.meta.path, "postgresql");

for (const [name, open] of backends) {
  describe.skipIf(name === "postgres" && !postgres)(`credentials in the job store on ${name}`, () => {
    test("stored sealed (options redacted), read by a claim only, kept across a hand-back, erased when the job finishes", async () => {
      const { store, dump } = await open();
      const credentials = await sealer();
      const job = await newJob(credentials);
      expect(await store.create(job, 10)).toBe(true);
      expect(await dump()).not.toContain(SECRET);
      expect(await dump()).toContain(job.credentials!);
      const read = (await store.get(job.id))!;
      expect(read.options.auth).toEqual({ basic: { username: "preview", password: "***" }, cookies: { session: "***" } });
      expect("credentials" in read).toBe(false);
      expect((await store.list(1, 10, null)).some((j) => "credentials" in j)).toBe(false);

      const claimed = (await store.claim("a", Date.now(), 60_000, new Date().toISOString()))!;
      expect(claimed.id).toBe(job.id);
      expect(await credentials.open(job.id, claimed.credentials!)).toEqual(auth);
      await store.handBack(job.id, "a", progress);
      const again = (await store.claim("b", Date.now(), 60_000, new Date().toISOString()))!;
      expect(again.credentials).toBe(job.credentials!);

      expect(
        await store.finish(job.id, "b", { status: "succeeded", result: null, error: null, progress, finishedAt: new Date().toISOString() }),
      ).toBe(true);
      expect(await dump()).not.toContain(job.credentials!);
      expect(await dump()).not.toContain(SECRET);
    });

    test("a failed job's are erased too", async () => {
      const { store, dump } = await open();
      const job = await newJob(await sealer());
      await store.create(job, 10);
      await store.claim("a", Date.now(), 60_000, new Date().toISOString());
      await store.finish(job.id, "a", {
        status: "failed",
        result: null,
        error: { status: 502, message: "x" },
        progress,
        finishedAt: new Date().toISOString(),
      });
      expect(await dump()).not.toContain(job.credentials!);
    });

    test("cancelled, queued or running: erased at once", async () => {
      const { store, dump } = await open();
      const credentials = await sealer();
      const queued = await newJob(credentials);
      const running = await newJob(credentials);
      await store.create(running, 10);
      await store.create(queued, 10);
      expect((await store.claim("a", Date.now(), 60_000, new Date().toISOString()))!.id).toBe(running.id);
      const result = { status: 409 as const, message: "Job cancelled before any URL was listed." };
      expect(await store.cancel(queued.id, new Date().toISOString(), result)).toBe("queued");
      expect(await store.cancel(running.id, new Date().toISOString(), result)).toBe("running");
      const text = await dump();
      expect(text).not.toContain(queued.credentials!);
      expect(text).not.toContain(running.credentials!);
    });

    test("a process that cannot open credentials leaves those jobs to others and takes the rest", async () => {
      const { store } = await open();
      const credentials = await sealer();
      const sealed = await newJob(credentials);
      const plain = await newJob(null);
      await store.create(sealed, 10);
      await store.create(plain, 10);
      expect((await store.claim("nokey", Date.now(), 60_000, new Date().toISOString(), false))!.id).toBe(plain.id);
      expect(await store.claim("nokey", Date.now(), 60_000, new Date().toISOString(), false)).toBeNull();
      const taken = (await store.claim("withkey", Date.now(), 60_000, new Date().toISOString(), true))!;
      expect(taken.id).toBe(sealed.id);
      expect(taken.credentials).toBe(sealed.credentials!);
    });
  });
}
