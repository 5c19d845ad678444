// Retention on PostgreSQL (JobRetention, src/jobs/job-store.ts): old finished jobs go at once (their
// id into job_cleanup), then what they and deleted jobs left behind, in batches; instances skip
// each other's rows (SKIP LOCKED).
import type { SQL } from "bun";
import type { JobRetention } from "../../jobs/job-store.ts";
import type { PgAccess } from "./database.ts";

/** Deletes a job's row and leaves its id to the sweep (its crawl state and parts too). Also JobQueue.remove's. */
export async function moveToCleanup(sql: SQL, id: string): Promise<void> {
  await sql.unsafe(`DELETE FROM jobs WHERE id = $1`, [id]);
  await sql.unsafe(`INSERT INTO job_cleanup (job_id, parts) VALUES ($1, true) ON CONFLICT (job_id) DO UPDATE SET parts = true`, [id]);
}

export function createPostgresJobRetention(access: PgAccess): JobRetention {
  const run = <T>(fn: (sql: SQL) => Promise<T>) => access.query(fn);
  return {
    expire: (beforeIso, limit) =>
      run((sql) =>
        sql.begin(async (tx) => {
          const rows = await tx.unsafe(
            // A site's latest successful run stays: its sitemap is the site's, and its pages the next run's history.
            `SELECT id FROM jobs WHERE finished_at IS NOT NULL AND finished_at < $1 AND lease_owner IS NULL
               AND id NOT IN (SELECT last_success FROM sites WHERE last_success IS NOT NULL) LIMIT $2 FOR UPDATE SKIP LOCKED`,
            [beforeIso, limit],
          );
          for (const { id } of rows as { id: string }[]) await moveToCleanup(tx, id);
          return rows.length;
        }),
      ),

    sweep: (limit) =>
      run((sql) =>
        sql.begin(async (tx) => {
          const next = (await tx.unsafe(`SELECT job_id, parts FROM job_cleanup LIMIT 1 FOR UPDATE SKIP LOCKED`))[0] as
            | { job_id: string; parts: boolean }
            | undefined;
          if (!next) return sweepPages(tx, limit);
          const id = next.job_id;
          let deleted = (
            await tx.unsafe(`DELETE FROM job_urls WHERE job_id = $1 AND url IN (SELECT url FROM job_urls WHERE job_id = $1 LIMIT $2)`, [
              id,
              limit,
            ])
          ).count;
          if (deleted < limit) {
            deleted += (
              await tx.unsafe(
                `DELETE FROM job_entries WHERE job_id = $1 AND loc IN (SELECT loc FROM job_entries WHERE job_id = $1 LIMIT $2)`,
                [id, limit - deleted],
              )
            ).count;
          }
          if (deleted < limit) {
            deleted += (
              await tx.unsafe(`DELETE FROM job_links WHERE job_id = $1 AND url IN (SELECT url FROM job_links WHERE job_id = $1 LIMIT $2)`, [
                id,
                limit - deleted,
              ])
            ).count;
          }
          if (deleted < limit && next.parts) {
            deleted += (await tx.unsafe(`DELETE FROM job_parts WHERE job_id = $1`, [id])).count;
            // A site's run: its change set goes with it, its page rows by page_cleanup.
            deleted += (await tx.unsafe(`DELETE FROM site_changes WHERE job_id = $1`, [id])).count;
            await tx.unsafe(`INSERT INTO page_cleanup (job_id) VALUES ($1) ON CONFLICT DO NOTHING`, [id]);
          }
          if (deleted < limit) await tx.unsafe(`DELETE FROM job_cleanup WHERE job_id = $1`, [id]);
          return Math.max(deleted, 1);
        }),
      ),
  };
}

/** A batch of the page rows of a run that is no longer its site's history (page_cleanup); 0 when none is left. */
async function sweepPages(tx: SQL, limit: number): Promise<number> {
  const next = (await tx.unsafe(`SELECT job_id FROM page_cleanup LIMIT 1 FOR UPDATE SKIP LOCKED`))[0] as { job_id: string } | undefined;
  if (!next) return 0;
  const deleted = (
    await tx.unsafe(`DELETE FROM job_pages WHERE job_id = $1 AND url IN (SELECT url FROM job_pages WHERE job_id = $1 LIMIT $2)`, [
      next.job_id,
      limit,
    ])
  ).count;
  if (deleted < limit) await tx.unsafe(`DELETE FROM page_cleanup WHERE job_id = $1`, [next.job_id]);
  return Math.max(deleted, 1);
}
