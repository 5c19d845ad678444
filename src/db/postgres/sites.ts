// The site store on PostgreSQL (the schema: version 7 in migrations.ts), statement for statement
// as SQLite's (src/db/sqlite/sites.ts). Starting a run locks the site's row (FOR UPDATE), so of
// several instances that find a run due, one starts it and the others see it moved.
import type { SQL } from "bun";
import type { ChangeCounts, ChangeKind } from "../../sites/site.ts";
import type { RunStart, RunStarted, SiteStore } from "../../sites/site-store.ts";
import {
  JOB_COLUMNS,
  type JobRow,
  jobFromRow,
  NEW_JOB_PROGRESS,
  PAGE_COLUMNS,
  PAGE_UPDATE,
  type PageRow,
  pageFromRow,
  pageParams,
  SITE_COLUMNS,
  type SiteRow,
  siteFromRow,
} from "../rows.ts";
import type { PgAccess } from "./database.ts";

/** Page rows per multi-row statement: 11 parameters each stays far under PostgreSQL's 65,535. */
const PAGES_PER_STATEMENT = 500;

/**
 * Analyzes job_pages if it has no statistics yet. Without them a run's first reads of its history
 * (`url = ANY($2)` over the previous run's rows, up to 1,000,000 of them) may be planned as a scan
 * of all its rows instead of primary-key probes, until autovacuum comes by (up to a minute after
 * the previous run filled the table). Autovacuum keeps them current from then on.
 */
async function pageStatistics(sql: SQL): Promise<void> {
  const rows = await sql.unsafe(
    `SELECT 1 FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'job_pages' AND attname = 'job_id'`,
  );
  if (rows.length === 0) await sql.unsafe(`ANALYZE job_pages`);
}

export function createPostgresSiteStore(access: PgAccess): SiteStore {
  const run = access.query.bind(access);
  const sites = async (sql: SQL, text: string, params: unknown[]) => ((await sql.unsafe(text, params)) as SiteRow[]).map(siteFromRow);
  /** Whether job_pages has been seen with statistics, or analyzed (pageStatistics), in this process. */
  let statisticsChecked = false;
  return {
    create: (site) =>
      run(async (sql) => {
        await sql.unsafe(
          `INSERT INTO sites (id, key_id, url, options, credentials, every_hours, next_run_at, callback_url, callback_secret,
             publish_token, indexnow, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
          [
            site.id,
            site.keyId,
            site.url,
            JSON.stringify(site.options),
            site.credentials,
            site.everyHours,
            site.nextRunAt,
            site.callbackUrl,
            site.callbackSecret,
            site.publishToken,
            site.indexnow && JSON.stringify(site.indexnow),
            site.createdAt,
          ],
        );
      }),

    get: (id) => run(async (sql) => (await sites(sql, `SELECT ${SITE_COLUMNS} FROM sites WHERE id = $1`, [id]))[0] ?? null),

    byToken: (token) =>
      run(async (sql) => (await sites(sql, `SELECT ${SITE_COLUMNS} FROM sites WHERE publish_token = $1`, [token]))[0] ?? null),

    list: (keyId, limit, beforeSeq) =>
      run((sql) =>
        sites(sql, `SELECT ${SITE_COLUMNS} FROM sites WHERE key_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, [
          keyId,
          beforeSeq ?? Number.MAX_SAFE_INTEGER,
          limit,
        ]),
      ),

    update: (id, change) =>
      run(
        async (sql) =>
          (
            await sites(
              sql,
              `UPDATE sites SET options = $1, every_hours = $2, next_run_at = $3, callback_url = $4, publish_token = $5, indexnow = $6,
                 credentials = CASE WHEN $7::boolean THEN $8 ELSE credentials END
               WHERE id = $9 RETURNING ${SITE_COLUMNS}`,
              [
                JSON.stringify(change.options),
                change.everyHours,
                change.nextRunAt,
                change.callbackUrl,
                change.publishToken,
                change.indexnow && JSON.stringify(change.indexnow),
                change.credentials !== undefined,
                change.credentials ?? null,
                id,
              ],
            )
          )[0] ?? null,
      ),

    remove: (id) =>
      run((sql) =>
        sql.begin(async (tx) => {
          // The runs go as deleted jobs do: at once from every answer, their state and files swept later.
          await tx.unsafe(
            `INSERT INTO job_cleanup (job_id, parts) SELECT id, true FROM jobs WHERE site_id = $1 ON CONFLICT (job_id) DO UPDATE SET parts = true`,
            [id],
          );
          await tx.unsafe(`INSERT INTO page_cleanup (job_id) SELECT id FROM jobs WHERE site_id = $1 ON CONFLICT DO NOTHING`, [id]);
          await tx.unsafe(`DELETE FROM jobs WHERE site_id = $1`, [id]);
          await tx.unsafe(`DELETE FROM sites WHERE id = $1`, [id]);
        }),
      ),

    secrets: (id) =>
      run(async (sql) => {
        const rows = await sql.unsafe(`SELECT credentials, callback_secret FROM sites WHERE id = $1`, [id]);
        const row = rows[0] as { credentials: string | null; callback_secret: string | null } | undefined;
        return row ? { credentials: row.credentials, callbackSecret: row.callback_secret } : null;
      }),

    startRun: (siteId, start: RunStart) =>
      run((sql) =>
        sql.begin(async (tx): Promise<RunStarted> => {
          const rows = await tx.unsafe(
            `SELECT next_run_at, EXISTS (SELECT 1 FROM jobs WHERE jobs.id = sites.last_run AND status IN ('queued', 'running')) AS busy
             FROM sites WHERE id = $1 FOR UPDATE`,
            [siteId],
          );
          const site = rows[0] as { next_run_at: string | number | null; busy: boolean } | undefined;
          if (!site) return "gone";
          if (start.due && (site.next_run_at === null || Number(site.next_run_at) > start.due.nowMs)) return "not due";
          // A due run of a site still busy is skipped: the next one is due a period later.
          if (start.due) await tx.unsafe(`UPDATE sites SET next_run_at = $1 WHERE id = $2`, [start.due.nextRunAt, siteId]);
          if (site.busy) return "busy";
          const { job, failed } = start;
          // The queue's count and the insert must not interleave with another instance's (as JobStore.create).
          if (!failed) await tx.unsafe(`SELECT pg_advisory_xact_lock(hashtext('genapi.jobs.queue'))`);
          const inserted = await tx.unsafe(
            `INSERT INTO jobs (id, key_id, status, url, options, callback_url, callback_secret, created_at, progress, credentials, site_id,
               error, finished_at)
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13
             WHERE $3 = 'failed' OR (SELECT count(*) FROM jobs WHERE status = 'queued') < $14
             RETURNING id`,
            [
              job.id,
              job.keyId,
              failed ? "failed" : "queued",
              job.url,
              JSON.stringify(job.options),
              job.callbackUrl,
              job.callbackSecret,
              job.createdAt,
              NEW_JOB_PROGRESS,
              failed ? null : (job.credentials ?? null),
              siteId,
              failed ? JSON.stringify(failed.error) : null,
              failed ? failed.finishedAt : null,
              start.maxQueued,
            ],
          );
          if (inserted.length === 0) return "queue full";
          await tx.unsafe(`UPDATE sites SET last_run = $1 WHERE id = $2`, [job.id, siteId]);
          return "started";
        }),
      ),

    due: (nowMs, limit) =>
      run((sql) =>
        sites(
          sql,
          `SELECT ${SITE_COLUMNS} FROM sites
           WHERE next_run_at IS NOT NULL AND next_run_at <= $1 AND key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NULL)
           ORDER BY next_run_at LIMIT $2`,
          [nowMs, limit],
        ),
      ),

    recordSuccess: (siteId, jobId) =>
      run((sql) =>
        sql.begin(async (tx): Promise<ChangeCounts | null> => {
          const rows = await tx.unsafe(`SELECT last_success FROM sites WHERE id = $1 FOR UPDATE`, [siteId]);
          if (rows.length === 0) return null;
          const previous = (rows[0] as { last_success: string | null }).last_success;
          // Recorded already (a run published twice after a lost lease): nothing to compare it with now.
          if (previous === jobId) return null;
          await tx.unsafe(`DELETE FROM site_changes WHERE job_id = $1`, [jobId]);
          // A page is listed when its row has no exclusion; changed when listed both times with another
          // fingerprint. Added and changed are one pass over this run's rows.
          await tx.unsafe(
            `INSERT INTO site_changes (job_id, kind, url)
             SELECT $1, CASE WHEN old.url IS NULL THEN 'added' ELSE 'changed' END, cur.url
             FROM job_pages cur LEFT JOIN job_pages old ON old.job_id = $2 AND old.url = cur.url AND old.exclusion IS NULL
             WHERE cur.job_id = $1 AND cur.exclusion IS NULL
               AND (old.url IS NULL OR coalesce(cur.fingerprint, cur.lastmod) IS DISTINCT FROM coalesce(old.fingerprint, old.lastmod))`,
            [jobId, previous],
          );
          const counts = (await tx.unsafe(`SELECT kind, count(*) AS n FROM site_changes WHERE job_id = $1 GROUP BY kind`, [jobId])) as {
            kind: ChangeKind;
            n: string | number;
          }[];
          const of = (kind: ChangeKind) => Number(counts.find((row) => row.kind === kind)?.n ?? 0);
          const listed = await listedPages(tx, jobId);
          // As on SQLite (sqlite/sites.ts): the removed ones are looked for only when a count says there are some.
          const removedCount = previous === null ? 0 : (await listedPages(tx, previous)) - (listed - of("added"));
          const removed =
            removedCount === 0
              ? 0
              : (
                  await tx.unsafe(
                    `INSERT INTO site_changes (job_id, kind, url)
                     SELECT $1, 'removed', old.url FROM job_pages old
                     WHERE old.job_id = $2 AND old.exclusion IS NULL
                       AND NOT EXISTS (SELECT 1 FROM job_pages cur WHERE cur.job_id = $1 AND cur.url = old.url AND cur.exclusion IS NULL)`,
                    [jobId, previous],
                  )
                ).count;
          await tx.unsafe(`UPDATE sites SET last_success = $1 WHERE id = $2`, [jobId, siteId]);
          // The previous run's page rows were this run's history: the next run reads this one's.
          if (previous !== null) await tx.unsafe(`INSERT INTO page_cleanup (job_id) VALUES ($1) ON CONFLICT DO NOTHING`, [previous]);
          return {
            added: of("added"),
            removed,
            changed: of("changed"),
            unchanged: listed - of("added") - of("changed"),
            previous_run: previous,
          };
        }),
      ),

    runs: (siteId, limit, beforeSeq) =>
      run(async (sql) => {
        const rows = await sql.unsafe(`SELECT ${JOB_COLUMNS} FROM jobs WHERE site_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`, [
          siteId,
          beforeSeq ?? Number.MAX_SAFE_INTEGER,
          limit,
        ]);
        return (rows as JobRow[]).map(jobFromRow);
      }),

    changes: (jobId, kind, afterUrl, limit) =>
      run(async (sql) => {
        const rows = await sql.unsafe(`SELECT url FROM site_changes WHERE job_id = $1 AND kind = $2 AND url > $3 ORDER BY url LIMIT $4`, [
          jobId,
          kind,
          afterUrl ?? "",
          limit,
        ]);
        return (rows as { url: string }[]).map((row) => row.url);
      }),

    previousPages: (jobId, urls) =>
      run(async (sql) => {
        if (!statisticsChecked) {
          statisticsChecked = true;
          await pageStatistics(sql);
        }
        const rows = await sql.unsafe(`SELECT ${PAGE_COLUMNS} FROM job_pages WHERE job_id = $1 AND url = ANY($2::text[])`, [jobId, urls]);
        return (rows as PageRow[]).map(pageFromRow);
      }),

    putPages: (jobId, pages) =>
      run(async (sql) => {
        // One row per URL and statement: an upsert may not touch a row twice.
        const unique = [...new Map(pages.map((page) => [page.url, page])).values()];
        for (let i = 0; i < unique.length; i += PAGES_PER_STATEMENT) {
          const params: unknown[] = [];
          const values = unique.slice(i, i + PAGES_PER_STATEMENT).map((page) => {
            const row = pageParams(jobId, page);
            const start = params.length;
            params.push(...row);
            return `(${row.map((_, k) => `$${start + k + 1}`).join(", ")})`;
          });
          await sql.unsafe(
            `INSERT INTO job_pages (job_id, ${PAGE_COLUMNS}) VALUES ${values.join(", ")}
             ON CONFLICT (job_id, url) DO UPDATE SET ${PAGE_UPDATE}`,
            params,
          );
        }
      }),

    carryPages: (jobId, fromJobId, urls) =>
      run(async (sql) => {
        await sql.unsafe(
          `INSERT INTO job_pages (job_id, ${PAGE_COLUMNS})
           SELECT $1, ${PAGE_COLUMNS} FROM job_pages WHERE job_id = $2 AND url = ANY($3::text[])
           ON CONFLICT (job_id, url) DO UPDATE SET ${PAGE_UPDATE}`,
          [jobId, fromJobId, urls],
        );
      }),
  };
}

/** The listed pages of run `jobId`: its page rows without an exclusion. */
async function listedPages(sql: SQL, jobId: string): Promise<number> {
  const rows = await sql.unsafe(`SELECT count(*) AS n FROM job_pages WHERE job_id = $1 AND exclusion IS NULL`, [jobId]);
  return Number((rows[0] as { n: string | number }).n);
}
