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
          let deleted = db
            .query(`DELETE FROM job_urls WHERE job_id = ?1 AND url IN (SELECT url FROM job_urls WHERE job_id = ?1 LIMIT ?2)`)
            .run(id, limit).changes;
          if (deleted < limit) {
            deleted += db
              .query(`DELETE FROM job_entries WHERE job_id = ?1 AND loc IN (SELECT loc FROM job_entries WHERE job_id = ?1 LIMIT ?2)`)
              .run(id, limit - deleted).changes;
          }
          if (deleted < limit) {
            deleted += db
              .query(`DELETE FROM job_links WHERE job_id = ?1 AND url IN (SELECT url FROM job_links WHERE job_id = ?1 LIMIT ?2)`)
              .run(id, limit - deleted).changes;
          }
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
  const deleted = db
    .query(`DELETE FROM job_pages WHERE job_id = ?1 AND url IN (SELECT url FROM job_pages WHERE job_id = ?1 LIMIT ?2)`)
    .run(next.job_id, limit).changes;
  if (deleted < limit) db.query(`DELETE FROM page_cleanup WHERE job_id = ?`).run(next.job_id);
  return Math.max(deleted, 1);
}
