// The job queue on SQLite (JobQueue, src/jobs/job-store.ts): jobs' rows, their lifecycle and leases
// (the schema: versions 3 and 4 in migrations.ts). Every claim and heartbeat is one conditional
// statement or one transaction, so processes sharing the file never run one job twice.
import type { Database } from "bun:sqlite";
import type { ClaimedJob, JobQueue } from "../../jobs/job-store.ts";
import type { JobStatus } from "../../jobs/model.ts";
import { JOB_COLUMNS, jobFromRow, type JobRow, LEASE_HELD, NEW_JOB_PROGRESS } from "../rows.ts";
import type { SqliteAccess } from "./database.ts";

export function createSqliteJobQueue({ read, write }: SqliteAccess): JobQueue {
  return {
    create: (job, maxQueued) =>
      write((db) => {
        const { changes } = db
          .query(
            `INSERT INTO jobs (id, key_id, status, url, options, callback_url, callback_secret, created_at, progress, credentials)
             SELECT ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?
             WHERE (SELECT count(*) FROM jobs WHERE status = 'queued') < ?`,
          )
          .run(
            job.id,
            job.keyId,
            job.url,
            JSON.stringify(job.options),
            job.callbackUrl,
            job.callbackSecret,
            job.createdAt,
            NEW_JOB_PROGRESS,
            job.credentials ?? null,
            maxQueued,
          );
        return changes === 1;
      }),

    get: (id) =>
      read((db) => {
        const row = db.query<JobRow, [string]>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`).get(id);
        return row ? jobFromRow(row) : null;
      }),

    list: (keyId, limit, beforeSeq) =>
      read((db) =>
        db
          .query<JobRow, [number, number, number]>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE key_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`)
          .all(keyId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit)
          .map(jobFromRow),
      ),

    claim: (owner, nowMs, leaseMs, nowIso, withCredentials = true) =>
      write((db) => {
        // One statement: the subquery and the update see the same snapshot under SQLite's single writer.
        const row = db
          .query<JobRow & { credentials: string | null }, [string, number, string, number, number]>(
            `UPDATE jobs SET status = CASE status WHEN 'cancelled' THEN 'cancelled' ELSE 'running' END,
               lease_owner = ?1, lease_until = ?2, attempts = attempts + 1, started_at = coalesce(started_at, ?3)
             WHERE seq = (
               SELECT seq FROM jobs
               WHERE (status = 'queued'
                  OR (status IN ('running', 'cancelled') AND result IS NULL AND error IS NULL AND lease_until < ?4))
                 AND (credentials IS NULL OR ?5)
               ORDER BY seq LIMIT 1)
             RETURNING ${JOB_COLUMNS}, credentials`,
          )
          .get(owner, nowMs + leaseMs, nowIso, nowMs, withCredentials ? 1 : 0);
        return row ? ({ ...jobFromRow(row), leaseOwner: owner, credentials: row.credentials } satisfies ClaimedJob) : null;
      }),

    heartbeat: (id, owner, nowMs, leaseMs, progress) =>
      write(
        (db) =>
          db
            .query(`UPDATE jobs SET lease_until = ?, progress = ? WHERE id = ? AND lease_owner = ? AND ${LEASE_HELD}`)
            .run(nowMs + leaseMs, JSON.stringify(progress), id, owner).changes === 1,
      ),

    handBack: (id, owner, progress) =>
      write((db) => {
        // A graceful hand-back is not a failed attempt: it gives its attempt back.
        db.query(
          `UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_until = NULL, progress = ?, attempts = max(attempts - 1, 0)
           WHERE id = ? AND lease_owner = ? AND status = 'running'`,
        ).run(JSON.stringify(progress), id, owner);
      }),

    finish: (id, owner, outcome) =>
      write((db) =>
        db.transaction(() => {
          const { changes } = db
            .query(
              // A job cancelled meanwhile stays cancelled, whatever its runner found.
              `UPDATE jobs SET status = CASE status WHEN 'cancelled' THEN 'cancelled' ELSE ? END, result = ?, error = ?, progress = ?,
                 finished_at = coalesce(finished_at, ?),
                 lease_owner = NULL, lease_until = NULL, credentials = NULL
               WHERE id = ? AND lease_owner = ?`,
            )
            .run(
              outcome.status,
              outcome.result && JSON.stringify(outcome.result),
              outcome.error && JSON.stringify(outcome.error),
              JSON.stringify(outcome.progress),
              outcome.finishedAt,
              id,
              owner,
            );
          if (changes === 1)
            db.query(
              `INSERT INTO job_cleanup (job_id, job_seq, parts) SELECT id, seq, 0 FROM jobs WHERE id = ? ON CONFLICT DO NOTHING`,
            ).run(id);
          return changes === 1;
        })(),
      ),

    cancel: (id, nowIso, queuedError) =>
      write((db) =>
        db.transaction(() => {
          const row = db.query<{ status: JobStatus }, [string]>(`SELECT status FROM jobs WHERE id = ?`).get(id);
          if (!row) return null;
          if (row.status === "queued") {
            db.query(`UPDATE jobs SET status = 'cancelled', finished_at = ?, error = ?, credentials = NULL WHERE id = ?`).run(
              nowIso,
              JSON.stringify(queuedError),
              id,
            );
          } else if (row.status === "running") {
            db.query(`UPDATE jobs SET status = 'cancelled', finished_at = ?, credentials = NULL WHERE id = ?`).run(nowIso, id);
          }
          return row.status;
        })(),
      ),

    remove: (id) =>
      write((db) =>
        db.transaction(() => {
          deleteJob(db, id);
        })(),
      ),

    counts: () =>
      read((db) => {
        const counts: Record<JobStatus, number> = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
        for (const row of db.query<{ status: JobStatus; n: number }, []>(`SELECT status, count(*) AS n FROM jobs GROUP BY status`).all()) {
          counts[row.status] = row.n;
        }
        return counts;
      }),
  };
}

/**
 * Deletes job `id` at once; its rows and parts are left to the sweeper (job_cleanup, job-retention.ts),
 * which finds the rows by the job's seq, read here before the job goes, and the parts by its id.
 */
export function deleteJob(db: Database, id: string): void {
  db.query(
    `INSERT INTO job_cleanup (job_id, job_seq, parts) SELECT id, seq, 1 FROM jobs WHERE id = ? ON CONFLICT DO UPDATE SET parts = 1`,
  ).run(id);
  db.query(`DELETE FROM jobs WHERE id = ?`).run(id);
}
