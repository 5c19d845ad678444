// A job's crawl state on SQLite (JobCrawlState, src/jobs/job-store.ts): URLs seen and queued, entries
// listed, the link report's rows. A checkpoint is one transaction, written only while the writer
// holds the job's lease. Rows are keyed by the job's seq, not its id (src/db/sqlite/migrations.ts,
// version 8): the interface names jobs by id, and each statement finds the seq by it (JOB_SEQ).
import type { Database } from "bun:sqlite";
import type { Checkpoint, FrontierUrl, JobCrawlState, LinkCheckpoint, StoredEntry } from "../../jobs/job-store.ts";
import { LEASE_HELD, LINK_ROW_COLUMNS, type LinkRowColumns, linkRowFromColumns } from "../rows.ts";
import type { SqliteAccess } from "./database.ts";

/** The job's seq, found by its id (the statement's first parameter): a deleted job's is NULL, which matches no row. */
export const JOB_SEQ = "(SELECT seq FROM jobs WHERE id = ?)";

/** Chunks for `IN (...)` lists, under SQLite's parameter limit. */
function* chunks<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

export function createSqliteCrawlState({ read, write }: SqliteAccess): JobCrawlState {
  return {
    checkpoint: (id, owner, nowMs, leaseMs, batch: Checkpoint) =>
      write((db) =>
        db.transaction(() => {
          const held = db
            .query<{ seq: number }, [number, string, string, string, string]>(
              `UPDATE jobs SET lease_until = ?, progress = ?, crawl = ? WHERE id = ? AND lease_owner = ? AND ${LEASE_HELD} RETURNING seq`,
            )
            .get(nowMs + leaseMs, JSON.stringify(batch.progress), JSON.stringify(batch.crawl), id, owner);
          if (held === null) return false;
          const job = held.seq;
          // Added before marking done: an item may be queued and finished within one checkpoint.
          const add = db.query(`INSERT INTO job_urls (job_seq, url, seq, depth, done) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`);
          for (const link of batch.discovered) add.run(job, link.url, link.seq, link.depth, 0);
          for (const url of batch.seen) add.run(job, url, 0, 0, 1);
          const markDone = db.query(`UPDATE job_urls SET done = 1 WHERE job_seq = ? AND url = ?`);
          for (const url of batch.done) markDone.run(job, url);
          const list = db.query(`INSERT INTO job_entries (job_seq, loc, lastmod, extra) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`);
          for (const entry of batch.entries) list.run(job, entry.loc, entry.lastmod, entry.extra);
          if (batch.links) writeLinks(db, job, batch.links);
          return true;
        })(),
      ),

    frontier: (id, afterSeq, limit) =>
      read((db) =>
        db
          .query<FrontierUrl, [string, number, number]>(
            `SELECT url, depth, seq FROM job_urls WHERE job_seq = ${JOB_SEQ} AND done = 0 AND seq > ? ORDER BY seq LIMIT ?`,
          )
          .all(id, afterSeq, limit),
      ),

    seen: (id, urls) =>
      read((db) => {
        const found = new Set<string>();
        for (const part of chunks(urls, 500)) {
          const marks = part.map(() => "?").join(",");
          for (const row of db
            .query<{ url: string }, string[]>(`SELECT url FROM job_urls WHERE job_seq = ${JOB_SEQ} AND url IN (${marks})`)
            .all(id, ...part)) {
            found.add(row.url);
          }
        }
        return found;
      }),

    seenUrls: (id, afterUrl, limit) =>
      read((db) =>
        db
          .query<{ url: string }, [string, string, number]>(
            `SELECT url FROM job_urls WHERE job_seq = ${JOB_SEQ} AND url > ? ORDER BY url LIMIT ?`,
          )
          .all(id, afterUrl ?? "", limit)
          .map((row) => row.url),
      ),

    lastSeq: (id) =>
      read(
        (db) =>
          db.query<{ seq: number | null }, [string]>(`SELECT max(seq) AS seq FROM job_urls WHERE job_seq = ${JOB_SEQ}`).get(id)?.seq ?? 0,
      ),

    entries: (id, afterLoc, limit) =>
      read((db) =>
        db
          .query<StoredEntry, [string, string, number]>(
            `SELECT loc, lastmod, extra FROM job_entries WHERE job_seq = ${JOB_SEQ} AND loc > ? ORDER BY loc LIMIT ?`,
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
              `SELECT u.url FROM job_urls u WHERE u.job_seq = ${JOB_SEQ} AND u.done = 1 AND u.url IN (${marks})
                 AND NOT EXISTS (SELECT 1 FROM job_links l WHERE l.job_seq = u.job_seq AND l.url = u.url)`,
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
            `SELECT ${LINK_ROW_COLUMNS} FROM job_links
             WHERE job_seq = ${JOB_SEQ} AND url > ? AND ${which === "linked" ? "fate IS NOT NULL AND referrer_count > 0" : "sitemap IS NOT NULL"}
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
              `SELECT url, fate FROM job_links WHERE job_seq = ${JOB_SEQ} AND fate IS NOT NULL AND url IN (${marks})`,
            )
            .all(id, ...part);
          for (const row of rows) found.set(row.url, JSON.parse(row.fate));
        }
        return found;
      }),

    countEntries: (id) =>
      read((db) => db.query<{ n: number }, [string]>(`SELECT count(*) AS n FROM job_entries WHERE job_seq = ${JOB_SEQ}`).get(id)!.n),
  };
}

/**
 * One checkpoint's link rows (src/jobs/job-store.ts's LinkCheckpoint, in its order). Referrers merge in SQL:
 * the union of both sorted lists, the 5 smallest kept, in byte order as the report sorts them.
 */
function writeLinks(db: Database, job: number, links: LinkCheckpoint): void {
  const refer = db.query(
    `INSERT INTO job_links (job_seq, url, referrer_count, referrers, followed) VALUES (?1, ?2, ?3, ?4, ?5)
     ON CONFLICT DO UPDATE SET
       referrer_count = referrer_count + excluded.referrer_count,
       followed = max(followed, excluded.followed),
       referrers = (SELECT json_group_array(value ORDER BY value) FROM (
         SELECT value FROM json_each(job_links.referrers) UNION SELECT value FROM json_each(excluded.referrers) ORDER BY value LIMIT 5))`,
  );
  for (const r of links.referrers) refer.run(job, r.url, r.count, JSON.stringify(r.referrers), r.followed ? 1 : 0);
  const seed = db.query(
    `INSERT INTO job_links (job_seq, url, sitemap, outcome, followed) VALUES (?1, ?2, ?3, ?4, ?5)
     ON CONFLICT DO UPDATE SET sitemap = coalesce(sitemap, excluded.sitemap), outcome = coalesce(outcome, excluded.outcome),
       followed = max(followed, excluded.followed)`,
  );
  for (const s of links.sitemap) seed.run(job, s.url, s.sitemap, s.outcome, s.followed ? 1 : 0);
  const fate = db.query(`INSERT INTO job_links (job_seq, url, fate) VALUES (?1, ?2, ?3) ON CONFLICT DO UPDATE SET fate = excluded.fate`);
  for (const f of links.fates) fate.run(job, f.url, JSON.stringify(f.fate));
  const fine = db.query(`DELETE FROM job_links WHERE job_seq = ? AND url = ? AND sitemap IS NULL`);
  for (const url of links.fine) fine.run(job, url);
  const outcome = db.query(`UPDATE job_links SET outcome = ? WHERE job_seq = ? AND url = ? AND sitemap IS NOT NULL`);
  for (const o of links.outcomes) outcome.run(o.outcome, job, o.url);
}
