// The site store on SQLite (the schema: version 7 in migrations.ts). Starting a run is one
// transaction over the site's row and the jobs table: a due run moves the site's next time and
// inserts its job together, so processes sharing the file start each due run exactly once.
import type { Database } from "bun:sqlite";
import type { ChangeCounts, ChangeKind } from "../../sites/site.ts";
import type { RunStart, SiteStore } from "../../sites/site-store.ts";
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
import type { SqliteAccess } from "./database.ts";
import { JOB_SEQ } from "./job-crawl-state.ts";

export function createSqliteSiteStore(access: SqliteAccess): SiteStore {
  const { read, write } = access;
  return {
    create: (site) =>
      write((db) => {
        db.query(
          `INSERT INTO sites (id, key_id, url, options, credentials, every_hours, next_run_at, callback_url, callback_secret,
             publish_token, indexnow, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
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
        );
      }),

    get: (id) => read((db) => one(db, `SELECT ${SITE_COLUMNS} FROM sites WHERE id = ?`, id)),

    byToken: (token) => read((db) => one(db, `SELECT ${SITE_COLUMNS} FROM sites WHERE publish_token = ?`, token)),

    list: (keyId, limit, beforeSeq) =>
      read((db) =>
        db
          .query<SiteRow, [number, number, number]>(
            `SELECT ${SITE_COLUMNS} FROM sites WHERE key_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
          )
          .all(keyId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit)
          .map(siteFromRow),
      ),

    update: (id, change) =>
      write((db) => {
        const row = db
          .query<SiteRow, (string | number | null)[]>(
            `UPDATE sites SET options = ?, every_hours = ?, next_run_at = ?, callback_url = ?, publish_token = ?, indexnow = ?,
               credentials = CASE WHEN ? THEN ? ELSE credentials END
             WHERE id = ? RETURNING ${SITE_COLUMNS}`,
          )
          .get(
            JSON.stringify(change.options),
            change.everyHours,
            change.nextRunAt,
            change.callbackUrl,
            change.publishToken,
            change.indexnow && JSON.stringify(change.indexnow),
            change.credentials === undefined ? 0 : 1,
            change.credentials ?? null,
            id,
          );
        return row ? siteFromRow(row) : null;
      }),

    remove: (id) =>
      write((db) =>
        db.transaction(() => {
          // The runs go as deleted jobs do: at once from every answer, their state and files swept later.
          db.query(
            `INSERT INTO job_cleanup (job_id, job_seq, parts) SELECT id, seq, 1 FROM jobs WHERE site_id = ? ON CONFLICT DO UPDATE SET parts = 1`,
          ).run(id);
          db.query(`INSERT INTO page_cleanup (job_seq) SELECT seq FROM jobs WHERE site_id = ? ON CONFLICT DO NOTHING`).run(id);
          db.query(`DELETE FROM jobs WHERE site_id = ?`).run(id);
          db.query(`DELETE FROM sites WHERE id = ?`).run(id);
        })(),
      ),

    secrets: (id) =>
      read((db) => {
        const row = db
          .query<{ credentials: string | null; callback_secret: string | null }, [string]>(
            `SELECT credentials, callback_secret FROM sites WHERE id = ?`,
          )
          .get(id);
        return row ? { credentials: row.credentials, callbackSecret: row.callback_secret } : null;
      }),

    startRun: (siteId, start: RunStart) =>
      write((db) =>
        db.transaction(() => {
          const site = db
            .query<{ next_run_at: number | null; busy: number }, [string]>(
              `SELECT next_run_at, (SELECT count(*) FROM jobs WHERE jobs.id = sites.last_run AND status IN ('queued', 'running')) AS busy
               FROM sites WHERE id = ?`,
            )
            .get(siteId);
          if (!site) return "gone" as const;
          if (start.due && (site.next_run_at === null || site.next_run_at > start.due.nowMs)) return "not due" as const;
          // A due run of a site still busy is skipped: the next one is due a period later.
          if (start.due) db.query(`UPDATE sites SET next_run_at = ? WHERE id = ?`).run(start.due.nextRunAt, siteId);
          if (site.busy > 0) return "busy" as const;
          const { job } = start;
          const failed = start.failed;
          const inserted = db
            .query(
              `INSERT INTO jobs (id, key_id, status, url, options, callback_url, callback_secret, created_at, progress, credentials, site_id,
                 error, finished_at)
               SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13
               WHERE ?3 = 'failed' OR (SELECT count(*) FROM jobs WHERE status = 'queued') < ?14`,
            )
            .run(
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
            ).changes;
          if (inserted === 0) return "queue full" as const;
          db.query(`UPDATE sites SET last_run = ? WHERE id = ?`).run(job.id, siteId);
          return "started" as const;
        })(),
      ),

    due: (nowMs, limit) =>
      read((db) =>
        db
          .query<SiteRow, [number, number]>(
            `SELECT ${SITE_COLUMNS} FROM sites
             WHERE next_run_at IS NOT NULL AND next_run_at <= ? AND key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NULL)
             ORDER BY next_run_at LIMIT ?`,
          )
          .all(nowMs, limit)
          .map(siteFromRow),
      ),

    recordSuccess: (siteId, jobId) =>
      write((db) =>
        db.transaction((): ChangeCounts | null => {
          const site = db.query<{ last_success: string | null }, [string]>(`SELECT last_success FROM sites WHERE id = ?`).get(siteId);
          if (!site) return null;
          const previous = site.last_success;
          // Recorded already (a run published twice after a lost lease): nothing to compare it with now.
          if (previous === jobId) return null;
          // The rows are keyed by the runs' seqs (src/db/sqlite/migrations.ts, version 8); a deleted previous run's is null, as if none.
          const job = seqOf(db, jobId);
          if (job === null) return null;
          const before = previous === null ? null : seqOf(db, previous);
          db.query(`DELETE FROM site_changes WHERE job_seq = ?`).run(job);
          // A page is listed when its row has no exclusion; changed when listed both times with another
          // fingerprint. Added and changed are one pass over this run's rows (two were 70 ms each at 100,000).
          db.query(
            `INSERT INTO site_changes (job_seq, kind, url)
             SELECT ?1, CASE WHEN old.url IS NULL THEN 'added' ELSE 'changed' END, cur.url
             FROM job_pages cur LEFT JOIN job_pages old ON old.job_seq = ?2 AND old.url = cur.url AND old.exclusion IS NULL
             WHERE cur.job_seq = ?1 AND cur.exclusion IS NULL
               AND (old.url IS NULL OR coalesce(cur.fingerprint, cur.lastmod) IS NOT coalesce(old.fingerprint, old.lastmod))`,
          ).run(job, before);
          const counts = db
            .query<{ kind: ChangeKind; n: number }, [number]>(
              `SELECT kind, count(*) AS n FROM site_changes WHERE job_seq = ? GROUP BY kind`,
            )
            .all(job);
          const of = (kind: ChangeKind) => counts.find((row) => row.kind === kind)?.n ?? 0;
          const listed = listedPages(db, job);
          // Every listed page of this run that is not added had its own listed row in the previous
          // run (one a URL), so that run's other listed rows are the removed ones: a count says how
          // many, and only when some are does the anti-join look for them (a pass as costly as the
          // one above). An unchanged 100,000-page run's change set: 498 -> 332 and 495 -> 314 ms, two
          // runs of scripts/bench/probes/record-success.ts (medians of 10 each).
          const removedCount = before === null ? 0 : listedPages(db, before) - (listed - of("added"));
          const removed =
            removedCount === 0
              ? 0
              : db
                  .query(
                    `INSERT INTO site_changes (job_seq, kind, url)
                     SELECT ?1, 'removed', old.url FROM job_pages old
                     WHERE old.job_seq = ?2 AND old.exclusion IS NULL
                       AND NOT EXISTS (SELECT 1 FROM job_pages cur WHERE cur.job_seq = ?1 AND cur.url = old.url AND cur.exclusion IS NULL)`,
                  )
                  .run(job, before).changes;
          db.query(`UPDATE sites SET last_success = ? WHERE id = ?`).run(jobId, siteId);
          // The previous run's page rows were this run's history: the next run reads this one's.
          if (before !== null) db.query(`INSERT INTO page_cleanup (job_seq) VALUES (?) ON CONFLICT DO NOTHING`).run(before);
          return {
            added: of("added"),
            removed,
            changed: of("changed"),
            unchanged: listed - of("added") - of("changed"),
            // A previous run deleted since is not compared with: none is named.
            previous_run: before === null ? null : previous,
          };
        })(),
      ),

    runs: (siteId, limit, beforeSeq) =>
      read((db) =>
        db
          .query<JobRow, [string, number, number]>(
            `SELECT ${JOB_COLUMNS} FROM jobs WHERE site_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
          )
          .all(siteId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit)
          .map(jobFromRow),
      ),

    changes: (jobId, kind, afterUrl, limit) =>
      read((db) =>
        db
          .query<{ url: string }, [string, string, string, number]>(
            `SELECT url FROM site_changes WHERE job_seq = ${JOB_SEQ} AND kind = ? AND url > ? ORDER BY url LIMIT ?`,
          )
          .all(jobId, kind, afterUrl ?? "", limit)
          .map((row) => row.url),
      ),

    previousPages: (jobId, urls) =>
      read((db) =>
        db
          .query<PageRow, [string, string]>(
            `SELECT ${PAGE_COLUMNS} FROM job_pages WHERE job_seq = ${JOB_SEQ} AND url IN (SELECT value FROM json_each(?))`,
          )
          .all(jobId, JSON.stringify(urls))
          .map(pageFromRow),
      ),

    putPages: (jobId, pages) =>
      write((db) =>
        db.transaction(() => {
          const put = db.query(
            `INSERT INTO job_pages (job_seq, ${PAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (job_seq, url) DO UPDATE SET ${PAGE_UPDATE}`,
          );
          const job = seqOf(db, jobId);
          if (job === null) return;
          for (const page of pages) put.run(...pageParams(job, page));
        })(),
      ),

    carryPages: (jobId, fromJobId, urls) =>
      write((db) => {
        // A run deleted meanwhile keeps no rows, as putPages.
        const job = seqOf(db, jobId);
        if (job === null) return;
        db.query(
          `INSERT INTO job_pages (job_seq, ${PAGE_COLUMNS})
           SELECT ?1, ${PAGE_COLUMNS} FROM job_pages
           WHERE job_seq = (SELECT seq FROM jobs WHERE id = ?2) AND url IN (SELECT value FROM json_each(?3))
           ON CONFLICT (job_seq, url) DO UPDATE SET ${PAGE_UPDATE}`,
        ).run(job, fromJobId, JSON.stringify(urls));
      }),
  };
}

/** The listed pages of the run whose seq is `job`: its page rows without an exclusion. */
function listedPages(db: Database, job: number): number {
  return db.query<{ n: number }, [number]>(`SELECT count(*) AS n FROM job_pages WHERE job_seq = ? AND exclusion IS NULL`).get(job)!.n;
}

/** A job's seq, which keys its rows; null when the job is gone. */
function seqOf(db: Database, jobId: string): number | null {
  return db.query<{ seq: number }, [string]>(`SELECT seq FROM jobs WHERE id = ?`).get(jobId)?.seq ?? null;
}

function one(db: Database, sql: string, value: string) {
  const row = db.query<SiteRow, [string]>(sql).get(value);
  return row ? siteFromRow(row) : null;
}
