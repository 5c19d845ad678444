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

/** Every step, as the store runs them. */
export const sqliteMigrations = [
  ...migrations,
  sqliteJobsMigration,
  sqliteHostsMigration,
  sqliteCredentialsMigration,
  sqliteLinksMigration,
  sqliteSitesMigration,
];
