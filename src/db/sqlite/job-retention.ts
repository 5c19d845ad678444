// Retention on SQLite (JobRetention, src/jobs/job-store.ts): old finished jobs go at once (their id
// into job_cleanup), then what they and deleted jobs left behind, in batches.
import type { Database } from "bun:sqlite";
import type { JobRetention } from "../../jobs/job-store.ts";
import type { SqliteAccess } from "./database.ts";
import { deleteJob } from "./job-queue.ts";

export function createSqliteJobRetention({ write }: SqliteAccess): JobRetention {
  return {
    expire: (beforeIso, limit) =>
      write((db) =>
        db.transaction(() => {
          const ids = db
            .query<{ id: string }, [string, number]>(
              // A site's latest successful run stays: its sitemap is the site's, and its pages the next run's history.
              `SELECT id FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ? AND lease_owner IS NULL
                 AND id NOT IN (SELECT last_success FROM sites WHERE last_success IS NOT NULL) LIMIT ?`,
            )
            .all(beforeIso, limit);
          for (const { id } of ids) deleteJob(db, id);
          return ids.length;
        })(),
      ),

    sweep: (limit) =>
      write((db) =>
        db.transaction(() => {
          const next = db
            .query<{ job_id: string; job_seq: number | null; parts: number }, []>(`SELECT job_id, job_seq, parts FROM job_cleanup LIMIT 1`)
            .get();
          if (!next) return sweepPages(db, limit);
          const id = next.job_id;
          // Rows are keyed by the job's seq (null: deleted before it keyed them, and gone with it), its parts by its id.
          const job = next.job_seq;
          let deleted = deleteFirst(db, "job_urls", "url", job, limit);
          if (deleted < limit) deleted += deleteFirst(db, "job_entries", "loc", job, limit - deleted);
          if (deleted < limit) deleted += deleteFirst(db, "job_links", "url", job, limit - deleted);
          if (deleted < limit && next.parts === 1) {
            deleted += db.query(`DELETE FROM job_parts WHERE job_id = ?`).run(id).changes;
            // A site's run: its change set goes with it, its page rows by page_cleanup.
            deleted += db.query(`DELETE FROM site_changes WHERE job_seq = ?`).run(job).changes;
            if (job !== null) db.query(`INSERT INTO page_cleanup (job_seq) VALUES (?) ON CONFLICT DO NOTHING`).run(job);
          }
          if (deleted < limit) db.query(`DELETE FROM job_cleanup WHERE job_id = ?`).run(id);
          return Math.max(deleted, 1);
        })(),
      ),
  };
}

/** A batch of the page rows of a run that is no longer its site's history (page_cleanup); 0 when none is left. */
function sweepPages(db: Database, limit: number): number {
  const next = db.query<{ job_seq: number }, []>(`SELECT job_seq FROM page_cleanup LIMIT 1`).get();
  if (!next) return 0;
  const deleted = deleteFirst(db, "job_pages", "url", next.job_seq, limit);
  if (deleted < limit) db.query(`DELETE FROM page_cleanup WHERE job_seq = ?`).run(next.job_seq);
  return Math.max(deleted, 1);
}

/**
 * Deletes the first `limit` rows of the job whose seq is `job` in `table` (keyed by job_seq and `key`), in key order:
 * one range of the table's b-tree, where `key IN (SELECT ... LIMIT)` looked each row up again.
 * 100,000 rows of job_urls in batches of 2,000, 5 runs each: 145-224 ms of CPU against 377-409.
 */
function deleteFirst(db: Database, table: string, key: string, job: number | null, limit: number): number {
  return db
    .query(
      `DELETE FROM ${table} WHERE job_seq = ?1 AND ${key} <= coalesce(
         (SELECT ${key} FROM ${table} WHERE job_seq = ?1 ORDER BY ${key} LIMIT 1 OFFSET ?2 - 1),
         (SELECT max(${key}) FROM ${table} WHERE job_seq = ?1))`,
    )
    .run(job, limit).changes;
}
