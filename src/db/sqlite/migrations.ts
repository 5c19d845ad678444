// The SQLite schema, one step per version. A database records the last step it has run in
// `PRAGMA user_version`; steps are append-only: never edit one that has shipped. The store runs
// every step (sqliteMigrations); openDatabase, unless given a list, runs versions 1-2 (migrations).
import type { Migration } from "../store.ts";

/** Versions 1-2: metadata, API keys and daily usage counters. */
export const migrations: Migration[] = [
  {
    version: 1,
    description: "metadata table",
    sql: `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;`,
  },
  {
    version: 2,
    description: "API keys and daily usage counters",
    // AUTOINCREMENT: an id names a key on the command line and in quota buckets (`key:<id>`),
    // so it is never reused, even if rows are deleted by hand. Only the key's SHA-256 is stored.
    // Timestamps are ISO 8601 UTC with milliseconds; `day` is the UTC day (YYYY-MM-DD).
    sql: `
      CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        key_hash BLOB NOT NULL UNIQUE CHECK (length(key_hash) = 32),
        daily_limit INTEGER CHECK (daily_limit IS NULL OR daily_limit > 0),
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      ) STRICT;
      CREATE TABLE usage_counters (
        day TEXT NOT NULL,
        bucket TEXT NOT NULL,
        count INTEGER NOT NULL CHECK (count >= 0),
        PRIMARY KEY (day, bucket)
      ) STRICT, WITHOUT ROWID;`,
  },
];

/** Version 3: crawl jobs. */
export const sqliteJobsMigration = {
  version: 3,
  description: "crawl jobs: the job rows with their lease, the crawl state, result parts, cleanup queue",
  // lease_until: Unix ms. progress/result/error/crawl/options: JSON text. job_urls is both the seen
  // set and the frontier (done = 0, in seq order). No foreign keys: a million rows of state are
  // deleted in small batches by the sweeper (job_cleanup), never by one cascading delete.
  sql: `
    CREATE TABLE jobs (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      key_id INTEGER NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      url TEXT NOT NULL,
      options TEXT NOT NULL,
      callback_url TEXT,
      callback_secret TEXT,
      created_at TEXT NOT NULL,
      started_at TEXT,
      finished_at TEXT,
      progress TEXT NOT NULL,
      result TEXT,
      error TEXT,
      crawl TEXT,
      attempts INTEGER NOT NULL DEFAULT 0,
      lease_owner TEXT,
      lease_until INTEGER
    ) STRICT;
    CREATE INDEX jobs_by_key ON jobs (key_id, seq);
    CREATE INDEX jobs_by_status ON jobs (status, seq);
    CREATE INDEX jobs_by_finish ON jobs (finished_at) WHERE finished_at IS NOT NULL;
    CREATE TABLE job_urls (
      job_id TEXT NOT NULL,
      url TEXT NOT NULL,
      seq INTEGER NOT NULL,
      depth INTEGER NOT NULL,
      done INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (job_id, url)
    ) STRICT, WITHOUT ROWID;
    CREATE INDEX job_urls_frontier ON job_urls (job_id, seq) WHERE done = 0;
    CREATE TABLE job_entries (
      job_id TEXT NOT NULL,
      loc TEXT NOT NULL,
      lastmod TEXT,
      extra TEXT,
      PRIMARY KEY (job_id, loc)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE job_parts (
      job_id TEXT NOT NULL,
      n INTEGER NOT NULL,
      body BLOB NOT NULL,
      PRIMARY KEY (job_id, n)
    ) STRICT;
    CREATE TABLE job_cleanup (
      job_id TEXT PRIMARY KEY,
      parts INTEGER NOT NULL
    ) STRICT;`,
};

/** Version 4: the hosts' leases, pauses and start times. */
export const sqliteHostsMigration = {
  version: 4,
  description: "politeness: per-host slot leases of each process, pauses and reserved start times",
  // Times are Unix ms. `slots` is what the owner may use (at least what it has in flight); `want`
  // what it asked for, for the fair share of others.
  sql: `
    CREATE TABLE host_leases (
      host TEXT NOT NULL,
      owner TEXT NOT NULL,
      slots INTEGER NOT NULL,
      want INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      PRIMARY KEY (host, owner)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE host_state (
      host TEXT PRIMARY KEY,
      paused_until INTEGER NOT NULL DEFAULT 0,
      next_start INTEGER NOT NULL DEFAULT 0
    ) STRICT, WITHOUT ROWID;`,
};

/** Version 5: a job's sealed credentials (option `auth`). */
export const sqliteCredentialsMigration = {
  version: 5,
  description: "jobs: sealed credentials of option auth, erased when the job ends",
  // AES-256-GCM text (src/jobs/job-credentials.ts); NULL once the job has ended, or when it has none.
  sql: `ALTER TABLE jobs ADD COLUMN credentials TEXT;`,
};

/** Version 6: the link report's rows of a job (link_report). */
export const sqliteLinksMigration = {
  version: 6,
  description: "the link report of crawl jobs: per URL its referrer count, 5 smallest referrers, fate and sitemap",
  // Rows exist only for URLs the report may still need (src/crawler/links/model.ts): queued and not
  // requested yet, answered badly (fate: JSON), or listed in the site's own sitemaps. referrers: a
  // JSON array, sorted, at most 5. Swept with the job's other crawl state once it has finished (its
  // lists are then in job_parts as links.json).
  sql: `
    CREATE TABLE job_links (
      job_id TEXT NOT NULL,
      url TEXT NOT NULL,
      referrer_count INTEGER NOT NULL DEFAULT 0,
      referrers TEXT NOT NULL DEFAULT '[]',
      followed INTEGER NOT NULL DEFAULT 0,
      fate TEXT,
      sitemap TEXT,
      outcome TEXT,
      PRIMARY KEY (job_id, url)
    ) STRICT, WITHOUT ROWID;`,
};

/** Version 7: sites, their runs (jobs with a site_id), the page history of runs and their change sets. */
export const sqliteSitesMigration = {
  version: 7,
  description: "sites: scheduled crawls, their runs as jobs, each run's page rows (the next run's history) and change set",
  // next_run_at: Unix ms, NULL for runs on request only. last_run / last_success: job ids.
  // job_pages: a site run's memory of each page it read (src/crawler/history.ts): links packed,
  // extra JSON; kept while the run is its site's latest success (or the run is being read), then swept.
  // site_changes: a successful run's added, removed and changed URLs against the previous one.
  // page_cleanup: runs whose page rows are no longer anyone's history, deleted in batches by the sweeper.
  sql: `
    CREATE TABLE sites (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      key_id INTEGER NOT NULL,
      url TEXT NOT NULL,
      options TEXT NOT NULL,
      credentials TEXT,
      every_hours INTEGER,
      next_run_at INTEGER,
      callback_url TEXT,
      callback_secret TEXT,
      publish_token TEXT UNIQUE,
      indexnow TEXT,
      created_at TEXT NOT NULL,
      last_run TEXT,
      last_success TEXT
    ) STRICT;
    CREATE INDEX sites_by_key ON sites (key_id, seq);
    CREATE INDEX sites_due ON sites (next_run_at) WHERE next_run_at IS NOT NULL;
    ALTER TABLE jobs ADD COLUMN site_id TEXT;
    CREATE INDEX jobs_by_site ON jobs (site_id, seq) WHERE site_id IS NOT NULL;
    CREATE TABLE job_pages (
      job_id TEXT NOT NULL,
      url TEXT NOT NULL,
      etag TEXT,
      last_modified TEXT,
      fingerprint TEXT,
      lastmod TEXT,
      exclusion TEXT,
      canonical TEXT,
      links BLOB NOT NULL,
      extra TEXT,
      PRIMARY KEY (job_id, url)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE site_changes (
      job_id TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('added', 'removed', 'changed')),
      url TEXT NOT NULL,
      PRIMARY KEY (job_id, kind, url)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE page_cleanup (job_id TEXT PRIMARY KEY) STRICT;`,
};

/**
 * Version 8: a job's per-URL rows keyed by the job's seq (an integer) instead of its id (36
 * characters of text). Every row of job_urls, job_entries, job_links, job_pages and site_changes
 * began with the id, which doubled the key of a typical URL row: fewer rows a b-tree page, dearer
 * comparisons. A checkpoint's writes (500 pages' frontier rows, done marks and entries, one
 * transaction; scripts/bench/probes/checkpoint-rows.ts, 100,000 pages) took 0.80-0.85x the CPU and
 * the store 11.6 MB against 16.4 keyed by the seq; an older store is rewritten in about 5 s a million URLs.
 * Rows of jobs already deleted (waiting for the sweeper) are not carried over: nothing reads them.
 * job_cleanup keeps the id (job_parts is keyed by it) and gains the seq, NULL where the job was
 * deleted before this step (its rows are gone with it). PostgreSQL's layout keeps the id (not
 * measured there: its store's work runs in the server's processes).
 */
export const sqliteJobSeqMigration = {
  version: 8,
  description: "a job's per-URL rows keyed by the job's seq, not its id",
  sql: `
    CREATE TABLE job_urls_new (
      job_seq INTEGER NOT NULL,
      url TEXT NOT NULL,
      seq INTEGER NOT NULL,
      depth INTEGER NOT NULL,
      done INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (job_seq, url)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO job_urls_new SELECT j.seq, u.url, u.seq, u.depth, u.done FROM job_urls u JOIN jobs j ON j.id = u.job_id;
    DROP TABLE job_urls;
    ALTER TABLE job_urls_new RENAME TO job_urls;
    CREATE INDEX job_urls_frontier ON job_urls (job_seq, seq) WHERE done = 0;

    CREATE TABLE job_entries_new (
      job_seq INTEGER NOT NULL,
      loc TEXT NOT NULL,
      lastmod TEXT,
      extra TEXT,
      PRIMARY KEY (job_seq, loc)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO job_entries_new SELECT j.seq, e.loc, e.lastmod, e.extra FROM job_entries e JOIN jobs j ON j.id = e.job_id;
    DROP TABLE job_entries;
    ALTER TABLE job_entries_new RENAME TO job_entries;

    CREATE TABLE job_links_new (
      job_seq INTEGER NOT NULL,
      url TEXT NOT NULL,
      referrer_count INTEGER NOT NULL DEFAULT 0,
      referrers TEXT NOT NULL DEFAULT '[]',
      followed INTEGER NOT NULL DEFAULT 0,
      fate TEXT,
      sitemap TEXT,
      outcome TEXT,
      PRIMARY KEY (job_seq, url)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO job_links_new
      SELECT j.seq, l.url, l.referrer_count, l.referrers, l.followed, l.fate, l.sitemap, l.outcome FROM job_links l JOIN jobs j ON j.id = l.job_id;
    DROP TABLE job_links;
    ALTER TABLE job_links_new RENAME TO job_links;

    CREATE TABLE job_pages_new (
      job_seq INTEGER NOT NULL,
      url TEXT NOT NULL,
      etag TEXT,
      last_modified TEXT,
      fingerprint TEXT,
      lastmod TEXT,
      exclusion TEXT,
      canonical TEXT,
      links BLOB NOT NULL,
      extra TEXT,
      PRIMARY KEY (job_seq, url)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO job_pages_new
      SELECT j.seq, p.url, p.etag, p.last_modified, p.fingerprint, p.lastmod, p.exclusion, p.canonical, p.links, p.extra
      FROM job_pages p JOIN jobs j ON j.id = p.job_id;
    DROP TABLE job_pages;
    ALTER TABLE job_pages_new RENAME TO job_pages;

    CREATE TABLE site_changes_new (
      job_seq INTEGER NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('added', 'removed', 'changed')),
      url TEXT NOT NULL,
      PRIMARY KEY (job_seq, kind, url)
    ) STRICT, WITHOUT ROWID;
    INSERT INTO site_changes_new SELECT j.seq, c.kind, c.url FROM site_changes c JOIN jobs j ON j.id = c.job_id;
    DROP TABLE site_changes;
    ALTER TABLE site_changes_new RENAME TO site_changes;

    CREATE TABLE page_cleanup_new (job_seq INTEGER PRIMARY KEY) STRICT;
    INSERT INTO page_cleanup_new SELECT j.seq FROM page_cleanup p JOIN jobs j ON j.id = p.job_id;
    DROP TABLE page_cleanup;
    ALTER TABLE page_cleanup_new RENAME TO page_cleanup;

    ALTER TABLE job_cleanup ADD COLUMN job_seq INTEGER;
    UPDATE job_cleanup SET job_seq = (SELECT seq FROM jobs WHERE jobs.id = job_cleanup.job_id);`,
};

/** Every step, as the store runs them. */
export const sqliteMigrations = [
  ...migrations,
  sqliteJobsMigration,
  sqliteHostsMigration,
  sqliteCredentialsMigration,
  sqliteLinksMigration,
  sqliteSitesMigration,
  sqliteJobSeqMigration,
];
