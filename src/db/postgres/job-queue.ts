// The job queue on PostgreSQL (JobQueue, src/jobs/job-store.ts): jobs' rows, their lifecycle and
// leases (the schema: versions 3 and 4 in migrations.ts). Claiming takes the oldest claimable row
// with FOR UPDATE SKIP LOCKED, so any number of instances share one queue and never run one job
// twice; every write of a running job is conditional on its lease.
import type { SQL } from "bun";
import type { ClaimedJob, JobQueue } from "../../jobs/job-store.ts";
import type { JobStatus } from "../../jobs/model.ts";
import { JOB_COLUMNS, jobFromRow, type JobRow, LEASE_HELD, NEW_JOB_PROGRESS } from "../rows.ts";
import type { PgAccess } from "./database.ts";
import { moveToCleanup } from "./job-retention.ts";

export function createPostgresJobQueue(access: PgAccess): JobQueue {
  const run = <T>(fn: (sql: SQL) => Promise<T>) => access.query(fn);
  return {
    create: (job, maxQueued) =>
      run((sql) =>
        sql.begin(async (tx) => {
          // The count and the insert must not interleave with another instance's: one lock for the queue.
          await tx.unsafe(`SELECT pg_advisory_xact_lock(hashtext('genapi.jobs.queue'))`);
          const rows = await tx.unsafe(
            `INSERT INTO jobs (id, key_id, status, url, options, callback_url, callback_secret, created_at, progress, credentials)
             SELECT $1, $2, 'queued', $3, $4, $5, $6, $7, $8, $10
             WHERE (SELECT count(*) FROM jobs WHERE status = 'queued') < $9
             RETURNING id`,
            [
              job.id,
              job.keyId,
              job.url,
              JSON.stringify(job.options),
              job.callbackUrl,
              job.callbackSecret,
              job.createdAt,
              NEW_JOB_PROGRESS,
              maxQueued,
              job.credentials ?? null,
            ],
          );
          return rows.length === 1;
        }),
      ),

    get: (id) =>
      run(async (sql) => {
        const rows = await sql.unsafe(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [id]);
        return rows.length ? jobFromRow(rows[0] as JobRow) : null;
      }),

    list: (keyId, limit, beforeSeq) =>
      run(async (sql) => {
        const rows = await sql.unsafe(`SELECT ${JOB_COLUMNS} FROM jobs WHERE key_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, [
          keyId,
          beforeSeq ?? Number.MAX_SAFE_INTEGER,
          limit,
        ]);
        return (rows as JobRow[]).map(jobFromRow);
      }),

    claim: (owner, nowMs, leaseMs, nowIso, withCredentials = true) =>
      run(async (sql) => {
        const rows = await sql.unsafe(
          `UPDATE jobs SET status = CASE status WHEN 'cancelled' THEN 'cancelled' ELSE 'running' END,
             lease_owner = $1, lease_until = $2, attempts = attempts + 1, started_at = coalesce(started_at, $3)
           WHERE seq = (
             SELECT seq FROM jobs
             WHERE (status = 'queued'
                OR (status IN ('running', 'cancelled') AND result IS NULL AND error IS NULL AND lease_until < $4))
               AND (credentials IS NULL OR $5::boolean)
             ORDER BY seq LIMIT 1
             FOR UPDATE SKIP LOCKED)
           RETURNING ${JOB_COLUMNS}, credentials`,
          [owner, nowMs + leaseMs, nowIso, nowMs, withCredentials],
        );
        const row = rows[0] as (JobRow & { credentials: string | null }) | undefined;
        return row ? ({ ...jobFromRow(row), leaseOwner: owner, credentials: row.credentials } satisfies ClaimedJob) : null;
      }),

    heartbeat: (id, owner, nowMs, leaseMs, progress) =>
      run(async (sql) => {
        const rows = await sql.unsafe(
          `UPDATE jobs SET lease_until = $1, progress = $2 WHERE id = $3 AND lease_owner = $4 AND ${LEASE_HELD} RETURNING id`,
          [nowMs + leaseMs, JSON.stringify(progress), id, owner],
        );
        return rows.length === 1;
      }),

    handBack: (id, owner, progress) =>
      run(async (sql) => {
        await sql.unsafe(
          `UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_until = NULL, progress = $1, attempts = greatest(attempts - 1, 0)
           WHERE id = $2 AND lease_owner = $3 AND status = 'running'`,
          [JSON.stringify(progress), id, owner],
        );
      }),

    finish: (id, owner, outcome) =>
      run((sql) =>
        sql.begin(async (tx) => {
          const rows = await tx.unsafe(
            // A job cancelled meanwhile stays cancelled, whatever its runner found.
            `UPDATE jobs SET status = CASE status WHEN 'cancelled' THEN 'cancelled' ELSE $1 END, result = $2, error = $3, progress = $4,
               finished_at = coalesce(finished_at, $5),
               lease_owner = NULL, lease_until = NULL, credentials = NULL
             WHERE id = $6 AND lease_owner = $7 RETURNING id`,
            [
              outcome.status,
              outcome.result && JSON.stringify(outcome.result),
              outcome.error && JSON.stringify(outcome.error),
              JSON.stringify(outcome.progress),
              outcome.finishedAt,
              id,
              owner,
            ],
          );
          if (rows.length === 1) await tx.unsafe(`INSERT INTO job_cleanup (job_id, parts) VALUES ($1, false) ON CONFLICT DO NOTHING`, [id]);
          return rows.length === 1;
        }),
      ),

    cancel: (id, nowIso, queuedError) =>
      run((sql) =>
        sql.begin(async (tx) => {
          const rows = await tx.unsafe(`SELECT status FROM jobs WHERE id = $1 FOR UPDATE`, [id]);
          if (!rows.length) return null;
          const status = (rows[0] as { status: JobStatus }).status;
          if (status === "queued") {
            await tx.unsafe(`UPDATE jobs SET status = 'cancelled', finished_at = $1, error = $2, credentials = NULL WHERE id = $3`, [
              nowIso,
              JSON.stringify(queuedError),
              id,
            ]);
          } else if (status === "running") {
            await tx.unsafe(`UPDATE jobs SET status = 'cancelled', finished_at = $1, credentials = NULL WHERE id = $2`, [nowIso, id]);
          }
          return status;
        }),
      ),

    remove: (id) => run((sql) => sql.begin((tx) => moveToCleanup(tx, id))),

    counts: () =>
      run(async (sql) => {
        const counts: Record<JobStatus, number> = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
        for (const row of (await sql.unsafe(`SELECT status, count(*) AS n FROM jobs GROUP BY status`)) as {
          status: JobStatus;
          n: string;
        }[]) {
          counts[row.status] = Number(row.n);
        }
        return counts;
      }),
  };
}
