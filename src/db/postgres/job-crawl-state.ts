// A job's crawl state on PostgreSQL (JobCrawlState, src/jobs/job-store.ts): URLs seen and queued,
// entries listed, the link report's rows. A checkpoint is one transaction, written only while the
// writer holds the job's lease.
import type { SQL } from "bun";
import type { FrontierUrl, JobCrawlState, LinkCheckpoint, StoredEntry } from "../../jobs/job-store.ts";
import { LEASE_HELD, LINK_ROW_COLUMNS, type LinkRowColumns, linkRowFromColumns } from "../rows.ts";
import type { PgAccess } from "./database.ts";

/** Rows per multi-row statement: 5 parameters each stays far under PostgreSQL's 65,535. */
const ROWS_PER_STATEMENT = 1000;

/** `INSERT ... VALUES ($1, $2, ...), (...)` over `rows`, `width` parameters a row, chunked. */
async function insertRows(sql: SQL, head: string, tail: string, rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(i, i + ROWS_PER_STATEMENT);
    const params: unknown[] = [];
    const values = chunk.map((row) => {
      const placeholders = row.map((value) => {
        params.push(value);
        return `$${params.length}`;
      });
      return `(${placeholders.join(", ")})`;
    });
    await sql.unsafe(`${head} VALUES ${values.join(", ")} ${tail}`, params);
  }
}

/**
 * Marking a checkpoint's URLs done: the URLs go as one text[] parameter, never as an IN list of
 * placeholders, and the checkpoint is planned afresh each time (force_custom_plan).
 *
 * Bun runs every statement prepared, and after five runs PostgreSQL's plan cache may switch a
 * prepared statement to its generic plan, made once without the parameters' values and kept
 * until the table's statistics change. While job_urls has no statistics (a big job fills it long
 * before autovacuum's first visit) or had them when it was small, that plan finds the job's rows
 * by `job_id` alone and tests each against the URLs; with `url IN ($2, ..., $501)` each test
 * walks the 500 parameters one by one (an IN list of parameters is not hashed). Measured: 1.9 s at
 * 81,513 pages; on a test machine 3.0-4.3 s from 75,500 pages of the same site on, growing with
 * the job, against 9 ms for the plan that probes the primary key (job_id, url) for each URL.
 * A custom plan of `url = ANY($2)` sees the table as it is and the URLs as one hashed array: it
 * probes the primary key once job_urls has statistics, and before that reads the job's rows
 * with a hashed test (0.47 s for a 1,000,000-row job), which statistics() cuts short.
 */
const MARK_DONE = `UPDATE job_urls SET done = true WHERE job_id = $1 AND url = ANY($2::text[])`;
const SEEN = `SELECT url FROM job_urls WHERE job_id = $1 AND url = ANY($2::text[])`;
/** URLs of one job after which a job_urls that has no statistics yet is analyzed (once per process). */
const ANALYZE_AT_URLS = 10_000;

/**
 * Analyzes job_urls if it has no statistics yet: on a new database the first big job would
 * otherwise be planned without them until autovacuum comes by (up to a minute, while the job adds
 * hundreds of thousands of rows). Autovacuum keeps them current from then on.
 */
async function statistics(sql: SQL): Promise<void> {
  const rows = await sql.unsafe(
    `SELECT 1 FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'job_urls' AND attname = 'job_id'`,
  );
  if (rows.length === 0) await sql.unsafe(`ANALYZE job_urls`);
}

export function createPostgresCrawlState(access: PgAccess): JobCrawlState {
  const run = <T>(fn: (sql: SQL) => Promise<T>) => access.query(fn);
  /** Whether job_urls has been seen with statistics, or analyzed (see statistics()). */
  let statisticsChecked = false;
  return {
    checkpoint: (id, owner, nowMs, leaseMs, batch) =>
      run((sql) =>
        sql.begin(async (tx) => {
          // See MARK_DONE: planned for the job as it is now, never with a plan kept from when it was small.
          await tx.unsafe(`SET LOCAL plan_cache_mode = force_custom_plan`);
          const held = await tx.unsafe(
            `UPDATE jobs SET lease_until = $1, progress = $2, crawl = $3 WHERE id = $4 AND lease_owner = $5 AND ${LEASE_HELD} RETURNING id`,
            [nowMs + leaseMs, JSON.stringify(batch.progress), JSON.stringify(batch.crawl), id, owner],
          );
          if (held.length !== 1) return false;
          // Added before marking done: an item may be queued and finished within one checkpoint.
          await insertRows(tx, "INSERT INTO job_urls (job_id, url, seq, depth, done)", "ON CONFLICT DO NOTHING", [
            ...batch.discovered.map((link) => [id, link.url, link.seq, link.depth, false]),
            ...batch.seen.map((url) => [id, url, 0, 0, true]),
          ]);
          // One array parameter, not an IN list of placeholders: see MARK_DONE.
          if (batch.done.length) await tx.unsafe(MARK_DONE, [id, batch.done]);
          await insertRows(
            tx,
            "INSERT INTO job_entries (job_id, loc, lastmod, extra)",
            "ON CONFLICT DO NOTHING",
            batch.entries.map((entry) => [id, entry.loc, entry.lastmod, entry.extra]),
          );
          if (batch.links) await writeLinks(tx, id, batch.links);
          return true;
        }),
      ).then((held) => {
        if (held && !statisticsChecked && (batch.discovered.at(-1)?.seq ?? 0) >= ANALYZE_AT_URLS) {
          statisticsChecked = true;
          // Not awaited: the checkpoint is written; this only makes the next ones faster.
          run(statistics).catch(() => {});
        }
        return held;
      }),

    frontier: (id, afterSeq, limit) =>
      run(async (sql) => {
        const rows = await sql.unsafe(
          `SELECT url, depth, seq FROM job_urls WHERE job_id = $1 AND NOT done AND seq > $2 ORDER BY seq LIMIT $3`,
          [id, afterSeq, limit],
        );
        return (rows as { url: string; depth: number; seq: string }[]).map(
          (r) => ({ url: r.url, depth: r.depth, seq: Number(r.seq) }) satisfies FrontierUrl,
        );
      }),

    seen: (id, urls) =>
      run(async (sql) => {
        const found = new Set<string>();
        if (urls.length === 0) return found;
        for (const row of (await sql.unsafe(SEEN, [id, urls])) as { url: string }[]) found.add(row.url);
        return found;
      }),

    seenUrls: (id, afterUrl, limit) =>
      run(async (sql) => {
        const rows = await sql.unsafe(`SELECT url FROM job_urls WHERE job_id = $1 AND url > $2 ORDER BY url LIMIT $3`, [
          id,
          afterUrl ?? "",
          limit,
        ]);
        return (rows as { url: string }[]).map((row) => row.url);
      }),

    lastSeq: (id) =>
      run(async (sql) => {
        const rows = await sql.unsafe(`SELECT max(seq) AS seq FROM job_urls WHERE job_id = $1`, [id]);
        return Number((rows[0] as { seq: string | null }).seq ?? 0);
      }),

    entries: (id, afterLoc, limit) =>
      run(async (sql) => {
        const rows = await sql.unsafe(`SELECT loc, lastmod, extra FROM job_entries WHERE job_id = $1 AND loc > $2 ORDER BY loc LIMIT $3`, [
          id,
          afterLoc ?? "",
          limit,
        ]);
        return [...(rows as StoredEntry[])];
      }),

    linksSettled: (id, urls) =>
      run(async (sql) => {
        const found = new Set<string>();
        for (let i = 0; i < urls.length; i += ROWS_PER_STATEMENT) {
          const part = urls.slice(i, i + ROWS_PER_STATEMENT);
          const rows = await sql.unsafe(
            `SELECT u.url FROM job_urls u WHERE u.job_id = $1 AND u.done AND u.url = ANY($2::text[])
               AND NOT EXISTS (SELECT 1 FROM job_links l WHERE l.job_id = u.job_id AND l.url = u.url)`,
            [id, part],
          );
          for (const row of rows as { url: string }[]) found.add(row.url);
        }
        return found;
      }),

    linkRows: (id, which, afterUrl, limit) =>
      run(async (sql) => {
        const rows = await sql.unsafe(
          `SELECT ${LINK_ROW_COLUMNS} FROM job_links
           WHERE job_id = $1 AND url > $2 AND ${which === "linked" ? "fate IS NOT NULL AND referrer_count > 0" : "sitemap IS NOT NULL"}
           ORDER BY url LIMIT $3`,
          [id, afterUrl ?? "", limit],
        );
        return (rows as LinkRowColumns[]).map(linkRowFromColumns);
      }),

    linkFates: (id, urls) =>
      run(async (sql) => {
        const found = new Map<string, NonNullable<ReturnType<typeof linkRowFromColumns>["fate"]>>();
        for (let i = 0; i < urls.length; i += ROWS_PER_STATEMENT) {
          const part = urls.slice(i, i + ROWS_PER_STATEMENT);
          const rows = await sql.unsafe(
            `SELECT url, fate FROM job_links WHERE job_id = $1 AND fate IS NOT NULL AND url = ANY($2::text[])`,
            [id, part],
          );
          for (const row of rows as { url: string; fate: string }[]) found.set(row.url, JSON.parse(row.fate));
        }
        return found;
      }),

    countEntries: (id) =>
      run(async (sql) =>
        Number(((await sql.unsafe(`SELECT count(*) AS n FROM job_entries WHERE job_id = $1`, [id]))[0] as { n: string }).n),
      ),
  };
}

/**
 * One checkpoint's link rows (src/jobs/job-store.ts's LinkCheckpoint, in its order), in multi-row statements.
 * Referrers merge in SQL: the union of both sorted lists, the 5 smallest kept, in byte order ("C")
 * as the report sorts them. A URL appears once per statement (ON CONFLICT cannot touch a row twice).
 */
async function writeLinks(sql: SQL, id: string, links: LinkCheckpoint): Promise<void> {
  await insertRows(
    sql,
    "INSERT INTO job_links AS l (job_id, url, referrer_count, referrers, followed)",
    `ON CONFLICT (job_id, url) DO UPDATE SET
       referrer_count = l.referrer_count + excluded.referrer_count,
       followed = l.followed OR excluded.followed,
       referrers = (SELECT coalesce(jsonb_agg(r ORDER BY r COLLATE "C"), '[]'::jsonb)::text FROM (
         SELECT r FROM (SELECT DISTINCT r FROM jsonb_array_elements_text(l.referrers::jsonb || excluded.referrers::jsonb) AS r) d
         ORDER BY r COLLATE "C" LIMIT 5) s)`,
    links.referrers.map((r) => [id, r.url, r.count, JSON.stringify(r.referrers), r.followed]),
  );
  await insertRows(
    sql,
    "INSERT INTO job_links AS l (job_id, url, sitemap, outcome, followed)",
    `ON CONFLICT (job_id, url) DO UPDATE SET sitemap = coalesce(l.sitemap, excluded.sitemap),
       outcome = coalesce(l.outcome, excluded.outcome), followed = l.followed OR excluded.followed`,
    links.sitemap.map((s) => [id, s.url, s.sitemap, s.outcome, s.followed]),
  );
  await insertRows(
    sql,
    "INSERT INTO job_links AS l (job_id, url, fate)",
    "ON CONFLICT (job_id, url) DO UPDATE SET fate = excluded.fate",
    links.fates.map((f) => [id, f.url, JSON.stringify(f.fate)]),
  );
  for (let i = 0; i < links.fine.length; i += ROWS_PER_STATEMENT) {
    const part = links.fine.slice(i, i + ROWS_PER_STATEMENT);
    await sql.unsafe(`DELETE FROM job_links WHERE job_id = $1 AND sitemap IS NULL AND url = ANY($2::text[])`, [id, part]);
  }
  for (let i = 0; i < links.outcomes.length; i += ROWS_PER_STATEMENT) {
    const part = links.outcomes.slice(i, i + ROWS_PER_STATEMENT);
    const params: unknown[] = [id];
    const values = part.map((o) => {
      params.push(o.url, o.outcome);
      return `($${params.length - 1}, $${params.length})`;
    });
    await sql.unsafe(
      `UPDATE job_links AS l SET outcome = v.outcome FROM (VALUES ${values.join(", ")}) AS v (url, outcome)
       WHERE l.job_id = $1 AND l.url = v.url AND l.sitemap IS NOT NULL`,
      params,
    );
  }
}
