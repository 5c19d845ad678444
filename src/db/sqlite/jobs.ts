// The job store on SQLite: the JobStore statements (the schema: versions 3 and 4 in migrations.ts). Every
// claim, heartbeat and checkpoint is one conditional statement or one transaction, so processes
// sharing the file never run one job twice.
import type { Database } from "bun:sqlite";
import type { Checkpoint, ClaimedJob, FrontierUrl, JobStore, LinkCheckpoint, StoredEntry } from "../../jobs/job-store.ts";
import type { JobStatus } from "../../jobs/model.ts";
import { jobFromRow, type JobRow, type LinkRowColumns, linkRowFromColumns } from "../rows.ts";
import type { SqliteAccess } from "./database.ts";

const COLUMNS =
  "seq, id, key_id, status, url, options, callback_url, created_at, started_at, finished_at, progress, result, error, crawl, attempts, lease_owner";

/** The lease holds while the job runs, and after a cancel until its owner has published what it found. */
const HELD = `(status = 'running' OR (status = 'cancelled' AND result IS NULL AND error IS NULL))`;

/** Chunks for `IN (...)` lists, under SQLite's parameter limit. */
function* chunks<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

export function createSqliteJobStore(access: SqliteAccess): JobStore {
  const { read, write } = access;
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
            JSON.stringify({ pages_crawled: 0, pages_queued: 0, urls_listed: 0, elapsed_ms: 0 }),
            job.credentials ?? null,
            maxQueued,
          );
        return changes === 1;
      }),

    get: (id) =>
      read((db) => {
        const row = db.query<JobRow, [string]>(`SELECT ${COLUMNS} FROM jobs WHERE id = ?`).get(id);
        return row ? jobFromRow(row) : null;
      }),

    list: (keyId, limit, beforeSeq) =>
      read((db) =>
        db
          .query<JobRow, [number, number, number]>(`SELECT ${COLUMNS} FROM jobs WHERE key_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`)
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
             RETURNING ${COLUMNS}, credentials`,
          )
          .get(owner, nowMs + leaseMs, nowIso, nowMs, withCredentials ? 1 : 0);
        return row ? ({ ...jobFromRow(row), leaseOwner: owner, credentials: row.credentials } satisfies ClaimedJob) : null;
      }),

    heartbeat: (id, owner, nowMs, leaseMs, progress) =>
      write(
        (db) =>
          db
            .query(`UPDATE jobs SET lease_until = ?, progress = ? WHERE id = ? AND lease_owner = ? AND ${HELD}`)
            .run(nowMs + leaseMs, JSON.stringify(progress), id, owner).changes === 1,
      ),

    checkpoint: (id, owner, nowMs, leaseMs, batch: Checkpoint) =>
      write((db) =>
        db.transaction(() => {
          const held = db
            .query(`UPDATE jobs SET lease_until = ?, progress = ?, crawl = ? WHERE id = ? AND lease_owner = ? AND ${HELD}`)
            .run(nowMs + leaseMs, JSON.stringify(batch.progress), JSON.stringify(batch.crawl), id, owner).changes;
          if (held !== 1) return false;
          // Added before marking done: an item may be queued and finished within one checkpoint.
          const add = db.query(`INSERT INTO job_urls (job_id, url, seq, depth, done) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`);
          for (const link of batch.discovered) add.run(id, link.url, link.seq, link.depth, 0);
          for (const url of batch.seen) add.run(id, url, 0, 0, 1);
          const markDone = db.query(`UPDATE job_urls SET done = 1 WHERE job_id = ? AND url = ?`);
          for (const url of batch.done) markDone.run(id, url);
          const list = db.query(`INSERT INTO job_entries (job_id, loc, lastmod, extra) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`);
          for (const entry of batch.entries) list.run(id, entry.loc, entry.lastmod, entry.extra);
          if (batch.links) writeLinks(db, id, batch.links);
          return true;
        })(),
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
          if (changes === 1) db.query(`INSERT INTO job_cleanup (job_id, parts) VALUES (?, 0) ON CONFLICT DO NOTHING`).run(id);
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
          db.query(`DELETE FROM jobs WHERE id = ?`).run(id);
          db.query(`INSERT INTO job_cleanup (job_id, parts) VALUES (?, 1) ON CONFLICT DO UPDATE SET parts = 1`).run(id);
        })(),
      ),

    frontier: (id, afterSeq, limit) =>
      read((db) =>
        db
          .query<FrontierUrl, [string, number, number]>(
            `SELECT url, depth, seq FROM job_urls WHERE job_id = ? AND done = 0 AND seq > ? ORDER BY seq LIMIT ?`,
          )
          .all(id, afterSeq, limit),
      ),

    seen: (id, urls) =>
      read((db) => {
        const found = new Set<string>();
        for (const part of chunks(urls, 500)) {
          const marks = part.map(() => "?").join(",");
          for (const row of db
            .query<{ url: string }, string[]>(`SELECT url FROM job_urls WHERE job_id = ? AND url IN (${marks})`)
            .all(id, ...part)) {
            found.add(row.url);
          }
        }
        return found;
      }),

    seenUrls: (id, afterUrl, limit) =>
      read((db) =>
        db
          .query<{ url: string }, [string, string, number]>(`SELECT url FROM job_urls WHERE job_id = ? AND url > ? ORDER BY url LIMIT ?`)
          .all(id, afterUrl ?? "", limit)
          .map((row) => row.url),
      ),

    lastSeq: (id) =>
      read((db) => db.query<{ seq: number | null }, [string]>(`SELECT max(seq) AS seq FROM job_urls WHERE job_id = ?`).get(id)?.seq ?? 0),

    entries: (id, afterLoc, limit) =>
      read((db) =>
        db
          .query<StoredEntry, [string, string, number]>(
            `SELECT loc, lastmod, extra FROM job_entries WHERE job_id = ? AND loc > ? ORDER BY loc LIMIT ?`,
          )
          .all(id, afterLoc ?? "", limit),
      ),

    linksSettled: (id, urls) =>
      read((db) => {
        const found = new Set<string>();
        for (const part of chunks(urls, 500)) {
          const marks = part.map(() => "?").join(",");
          const rows = db
            .query<{ url: string }, string[]>(
              `SELECT u.url FROM job_urls u WHERE u.job_id = ? AND u.done = 1 AND u.url IN (${marks})
                 AND NOT EXISTS (SELECT 1 FROM job_links l WHERE l.job_id = u.job_id AND l.url = u.url)`,
            )
            .all(id, ...part);
          for (const row of rows) found.add(row.url);
        }
        return found;
      }),

    linkRows: (id, which, afterUrl, limit) =>
      read((db) =>
        db
          .query<LinkRowColumns, [string, string, number]>(
            `SELECT url, referrer_count, referrers, followed, fate, sitemap, outcome FROM job_links
             WHERE job_id = ? AND url > ? AND ${which === "linked" ? "fate IS NOT NULL AND referrer_count > 0" : "sitemap IS NOT NULL"}
             ORDER BY url LIMIT ?`,
          )
          .all(id, afterUrl ?? "", limit)
          .map(linkRowFromColumns),
      ),

    linkFates: (id, urls) =>
      read((db) => {
        const found = new Map<string, NonNullable<ReturnType<typeof linkRowFromColumns>["fate"]>>();
        for (const part of chunks(urls, 500)) {
          const marks = part.map(() => "?").join(",");
          const rows = db
            .query<{ url: string; fate: string }, string[]>(
              `SELECT url, fate FROM job_links WHERE job_id = ? AND fate IS NOT NULL AND url IN (${marks})`,
            )
            .all(id, ...part);
          for (const row of rows) found.set(row.url, JSON.parse(row.fate));
        }
        return found;
      }),

    countEntries: (id) =>
      read((db) => db.query<{ n: number }, [string]>(`SELECT count(*) AS n FROM job_entries WHERE job_id = ?`).get(id)!.n),

    putPart: (id, n, gzipped) =>
      write((db) => {
        db.query(`INSERT INTO job_parts (job_id, n, body) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET body = excluded.body`).run(
          id,
          n,
          gzipped,
        );
      }),

    getPart: (id, n) =>
      read((db) => {
        const row = db.query<{ body: Uint8Array }, [string, number]>(`SELECT body FROM job_parts WHERE job_id = ? AND n = ?`).get(id, n);
        return row ? new Uint8Array(row.body) : null;
      }),

    pendingCallback: (id) =>
      read((db) => {
        const row = db
          .query<{ callback_url: string; callback_secret: string }, [string]>(
            `SELECT callback_url, callback_secret FROM jobs WHERE id = ? AND callback_url IS NOT NULL AND callback_secret IS NOT NULL`,
          )
          .get(id);
        return row ? { url: row.callback_url, secret: row.callback_secret } : null;
      }),

    callbackSent: (id) =>
      write((db) => {
        db.query(`UPDATE jobs SET callback_secret = NULL WHERE id = ?`).run(id);
      }),

    expire: (beforeIso, limit) =>
      write((db) =>
        db.transaction(() => {
          const ids = db
            .query<{ id: string }, [string, number]>(
              `SELECT id FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ? AND lease_owner IS NULL LIMIT ?`,
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
          if (!next) return 0;
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
          if (deleted < limit && next.parts === 1) deleted += db.query(`DELETE FROM job_parts WHERE job_id = ?`).run(id).changes;
          if (deleted < limit) db.query(`DELETE FROM job_cleanup WHERE job_id = ?`).run(id);
          return Math.max(deleted, 1);
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
 * One checkpoint's link rows (job-store.ts's LinkCheckpoint, in its order). Referrers merge in SQL:
 * the union of both sorted lists, the 5 smallest kept, in byte order as the report sorts them.
 */
function writeLinks(db: Database, id: string, links: LinkCheckpoint): void {
  const refer = db.query(
    `INSERT INTO job_links (job_id, url, referrer_count, referrers, followed) VALUES (?1, ?2, ?3, ?4, ?5)
     ON CONFLICT DO UPDATE SET
       referrer_count = referrer_count + excluded.referrer_count,
       followed = max(followed, excluded.followed),
       referrers = (SELECT json_group_array(value ORDER BY value) FROM (
         SELECT value FROM json_each(job_links.referrers) UNION SELECT value FROM json_each(excluded.referrers) ORDER BY value LIMIT 5))`,
  );
  for (const r of links.referrers) refer.run(id, r.url, r.count, JSON.stringify(r.referrers), r.followed ? 1 : 0);
  const seed = db.query(
    `INSERT INTO job_links (job_id, url, sitemap, outcome, followed) VALUES (?1, ?2, ?3, ?4, ?5)
     ON CONFLICT DO UPDATE SET sitemap = coalesce(sitemap, excluded.sitemap), outcome = coalesce(outcome, excluded.outcome),
       followed = max(followed, excluded.followed)`,
  );
  for (const s of links.sitemap) seed.run(id, s.url, s.sitemap, s.outcome, s.followed ? 1 : 0);
  const fate = db.query(`INSERT INTO job_links (job_id, url, fate) VALUES (?1, ?2, ?3) ON CONFLICT DO UPDATE SET fate = excluded.fate`);
  for (const f of links.fates) fate.run(id, f.url, JSON.stringify(f.fate));
  const fine = db.query(`DELETE FROM job_links WHERE job_id = ? AND url = ? AND sitemap IS NULL`);
  for (const url of links.fine) fine.run(id, url);
  const outcome = db.query(`UPDATE job_links SET outcome = ? WHERE job_id = ? AND url = ? AND sitemap IS NOT NULL`);
  for (const o of links.outcomes) outcome.run(o.outcome, id, o.url);
}
