// Retention on SQLite (JobRetention, src/jobs/job-store.ts): old finished jobs go at once (their id
// into job_cleanup), then what they and deleted jobs left behind, in batches.
import type { Database } from "bun:sqlite";
import type { JobRetention } from "../../jobs/job-store.ts";
import type { SqliteAccess } from "./database.ts";

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
          for (const { id } of ids) {
            db.query(`DELETE FROM jobs WHERE id = ?`).run(id);
            db.query(`INSERT INTO job_cleanup (job_id, parts) VALUES (?, 1) ON CONFLICT DO UPDATE SET parts = 1`).run(id);
          }
          return ids.length;
        })(),
      ),

    sweep: (limit) =>
      write((db) =>
        db.transaction(() => {
          const next = db.query<{ job_id: string; parts: number }, []>(`SELECT job_id, parts FROM job_cleanup LIMIT 1`).get();
          if (!next) return sweepPages(db, limit);
          const id = next.job_id;
          let deleted = deleteFirst(db, "job_urls", "url", id, limit);
          if (deleted < limit) deleted += deleteFirst(db, "job_entries", "loc", id, limit - deleted);
          if (deleted < limit) deleted += deleteFirst(db, "job_links", "url", id, limit - deleted);
          if (deleted < limit && next.parts === 1) {
            deleted += db.query(`DELETE FROM job_parts WHERE job_id = ?`).run(id).changes;
            // A site's run: its change set goes with it, its page rows by page_cleanup.
            deleted += db.query(`DELETE FROM site_changes WHERE job_id = ?`).run(id).changes;
            db.query(`INSERT INTO page_cleanup (job_id) VALUES (?) ON CONFLICT DO NOTHING`).run(id);
          }
          if (deleted < limit) db.query(`DELETE FROM job_cleanup WHERE job_id = ?`).run(id);
          return Math.max(deleted, 1);
        })(),
      ),
  };
}

/** A batch of the page rows of a run that is no longer its site's history (page_cleanup); 0 when none is left. */
function sweepPages(db: Database, limit: number): number {
  const next = db.query<{ job_id: string }, []>(`SELECT job_id FROM page_cleanup LIMIT 1`).get();
  if (!next) return 0;
  const deleted = deleteFirst(db, "job_pages", "url", next.job_id, limit);
  if (deleted < limit) db.query(`DELETE FROM page_cleanup WHERE job_id = ?`).run(next.job_id);
  return Math.max(deleted, 1);
}

/**
 * Deletes the first `limit` rows of job `id` in `table` (keyed by job_id and `key`), in key order:
 * one range of the table's b-tree, where `key IN (SELECT ... LIMIT)` looked each row up again.
 * 100,000 rows of job_urls in batches of 2,000, 5 runs each: 145-224 ms of CPU against 377-409.
 */
function deleteFirst(db: Database, table: string, key: string, id: string, limit: number): number {
  return db
    .query(
      `DELETE FROM ${table} WHERE job_id = ?1 AND ${key} <= coalesce(
         (SELECT ${key} FROM ${table} WHERE job_id = ?1 ORDER BY ${key} LIMIT 1 OFFSET ?2 - 1),
         (SELECT max(${key}) FROM ${table} WHERE job_id = ?1))`,
    )
    .run(id, limit).changes;
}
