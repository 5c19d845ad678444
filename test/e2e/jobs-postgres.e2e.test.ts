// Crawl jobs through the compiled executable on a real PostgreSQL (a throwaway cluster started by
// the test): the same suite as on SQLite (test/jobs/e2e-suite.ts), each test on its own database,
// the two-instance and kill -9 tests with several genapi processes sharing it; then what only
// PostgreSQL shows: a checkpoint that waits for another connection's lock.
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { createKey, startBinary } from "../support/binary.ts";
import { describeJobs } from "../jobs/e2e-suite.ts";
import { createJob, generatedSite, json, waitForJob } from "../jobs/support.ts";
import { createDatabase, stopCluster } from "../support/postgres.ts";
import { needs } from "../support/requires.ts";
import { QUERY_DEADLINE_MS } from "../../src/db/postgres/store.ts";

afterAll(() => stopCluster());

const postgres = needs(import.meta.path, "postgresql");

describeJobs({ name: "PostgreSQL", store: createDatabase, skip: !postgres });

describe.skipIf(!postgres)("jobs on PostgreSQL: a slow checkpoint", () => {
  // Leases: checkpoints have their own deadline, not the request path's 1.5 s. Before,
  // a checkpoint that waited longer was taken for a lost lease: the job stood still until its
  // lease ran out, and went on in a second attempt.
  test("a checkpoint held 4 s by another connection's lock is waited for: one attempt, every page listed, nothing logged", async () => {
    const site = generatedSite(500, { fanout: 4, delayMs: 50 });
    const store = await createDatabase();
    const key = await createKey(store);
    const server = await startBinary({ dbPath: store, args: ["--allow-private-targets", "--job-lease", "10"] });
    const sql = new SQL(store, { max: 1 });
    try {
      const id = (await json(await createJob(server, key, { url: `${site.url}/` }))).data.id;
      await waitForJob(server, key, id, (job) => job.progress.urls_listed >= 20);
      const waited = await sql.begin(async (tx) => {
        // Every checkpoint writes job_entries: the next one (a second or less away) waits for this
        // transaction, here 4 s.
        await tx.unsafe(`LOCK TABLE job_entries IN EXCLUSIVE MODE`);
        await Bun.sleep(3_500);
        const [blocked] = await tx.unsafe(
          `SELECT extract(epoch FROM clock_timestamp() - query_start) * 1000 AS ms FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO job_entries%'`,
        );
        await Bun.sleep(500);
        return Number(blocked?.ms ?? 0) + 500;
      });
      // The checkpoint waited past the request path's deadline (QUERY_DEADLINE_MS, 1.5 s).
      expect(waited).toBeGreaterThan(QUERY_DEADLINE_MS + 500);
      expect((await waitForJob(server, key, id, () => true)).status).toBe("running");
      const job = await waitForJob(server, key, id);
      const [row] = await sql.unsafe(`SELECT attempts FROM jobs WHERE id = $1`, [id]);
      expect({ status: job.status, attempts: row.attempts }).toEqual({ status: "succeeded", attempts: 1 });
      expect(job.result.url_count).toBe(500);
      expect(job.progress.urls_listed).toBe(500);
      expect(server.stderr()).not.toContain("lease");
      expect(await server.stop()).toBe(0);
    } finally {
      await sql.close();
      await site.stop();
      if (server.proc.exitCode === null) server.proc.kill("SIGKILL");
    }
  }, 60_000);
});
