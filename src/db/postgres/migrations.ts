// The PostgreSQL schema, one step per version, mirroring SQLite's (src/db/sqlite/migrations.ts). A
// database records the last step it has run in `genapi_schema`; steps are append-only: never edit
// one that has shipped.
import type { Migration } from "../store.ts";

/** Versions 1-2: metadata, API keys and daily usage counters. */
const keyMigrations: Migration[] = [
  { version: 1, description: "metadata table", sql: `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);` },
  {
    version: 2,
    description: "API keys and daily usage counters",
    sql: `
      CREATE TABLE api_keys (
        id INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        key_hash BYTEA NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
        daily_limit INTEGER CHECK (daily_limit IS NULL OR daily_limit > 0),
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      );
      CREATE TABLE usage_counters (
        day TEXT NOT NULL,
        bucket TEXT NOT NULL,
        count INTEGER NOT NULL CHECK (count >= 0),
        PRIMARY KEY (day, bucket)
      );`,
  },
];

/** Version 3: crawl jobs. */
export const postgresJobsMigration = {
  version: 3,
  description: "crawl jobs: the job rows with their lease, the crawl state, result parts, cleanup queue",
  // Mirrors SQLite's version 3. URLs compare with COLLATE "C" (byte order), so entries come out
  // sorted by loc exactly as on SQLite and as the sitemap lists them.
  sql: `
    CREATE TABLE jobs (
      seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      key_id BIGINT NOT NULL,
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
      lease_until BIGINT
    );
    CREATE INDEX jobs_by_key ON jobs (key_id, seq);
    CREATE INDEX jobs_by_status ON jobs (status, seq);
    CREATE INDEX jobs_by_finish ON jobs (finished_at) WHERE finished_at IS NOT NULL;
    CREATE TABLE job_urls (
      job_id TEXT NOT NULL,
      url TEXT COLLATE "C" NOT NULL,
      seq BIGINT NOT NULL,
      depth INTEGER NOT NULL,
      done BOOLEAN NOT NULL DEFAULT false,
      PRIMARY KEY (job_id, url)
    );
    CREATE INDEX job_urls_frontier ON job_urls (job_id, seq) WHERE NOT done;
    CREATE TABLE job_entries (
      job_id TEXT NOT NULL,
      loc TEXT COLLATE "C" NOT NULL,
      lastmod TEXT,
      extra TEXT,
      PRIMARY KEY (job_id, loc)
    );
    CREATE TABLE job_parts (
      job_id TEXT NOT NULL,
      n INTEGER NOT NULL,
      body BYTEA NOT NULL,
      PRIMARY KEY (job_id, n)
    );
    CREATE TABLE job_cleanup (
      job_id TEXT PRIMARY KEY,
      parts BOOLEAN NOT NULL
    );`,
};

/** Version 4: the link report's rows of a job (link_report). */
export const postgresLinksMigration = {
  version: 6,
  description: "the link report of crawl jobs: per URL its referrer count, 5 smallest referrers, fate and sitemap",
  // Mirrors SQLite's version 4; referrers is JSON text as there, compared in byte order ("C").
  sql: `
    CREATE TABLE job_links (
      job_id TEXT NOT NULL,
      url TEXT COLLATE "C" NOT NULL,
      referrer_count INTEGER NOT NULL DEFAULT 0,
      referrers TEXT NOT NULL DEFAULT '[]',
      followed BOOLEAN NOT NULL DEFAULT false,
      fate TEXT,
      sitemap TEXT,
      outcome TEXT,
      PRIMARY KEY (job_id, url)
    );`,
};

/** Every step, as migratePostgres runs them. */
/** Version 4: the hosts' leases, pauses and start times (as SQLite's version 4). */
export const postgresHostsMigration = {
  version: 4,
  description: "politeness: per-host slot leases of each process, pauses and reserved start times",
  sql: `
    CREATE TABLE host_leases (
      host TEXT NOT NULL,
      owner TEXT NOT NULL,
      slots INTEGER NOT NULL,
      want INTEGER NOT NULL,
      expires_at BIGINT NOT NULL,
      PRIMARY KEY (host, owner)
    );
    CREATE TABLE host_state (
      host TEXT PRIMARY KEY,
      paused_until BIGINT NOT NULL DEFAULT 0,
      next_start BIGINT NOT NULL DEFAULT 0
    );`,
};

/** Version 5: a job's sealed credentials (as SQLite's version 5). */
export const postgresCredentialsMigration = {
  version: 5,
  description: "jobs: sealed credentials of option auth, erased when the job ends",
  sql: `ALTER TABLE jobs ADD COLUMN credentials TEXT;`,
};

/** Version 7: sites, their runs, the page history of runs and their change sets (as SQLite's version 7). */
export const postgresSitesMigration = {
  version: 7,
  description: "sites: scheduled crawls, their runs as jobs, each run's page rows (the next run's history) and change set",
  sql: `
    CREATE TABLE sites (
      seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      key_id BIGINT NOT NULL,
      url TEXT NOT NULL,
      options TEXT NOT NULL,
      credentials TEXT,
      every_hours INTEGER,
      next_run_at BIGINT,
      callback_url TEXT,
      callback_secret TEXT,
      publish_token TEXT UNIQUE,
      indexnow TEXT,
      created_at TEXT NOT NULL,
      last_run TEXT,
      last_success TEXT
    );
    CREATE INDEX sites_by_key ON sites (key_id, seq);
    CREATE INDEX sites_due ON sites (next_run_at) WHERE next_run_at IS NOT NULL;
    ALTER TABLE jobs ADD COLUMN site_id TEXT;
    CREATE INDEX jobs_by_site ON jobs (site_id, seq) WHERE site_id IS NOT NULL;
    CREATE TABLE job_pages (
      job_id TEXT NOT NULL,
      url TEXT COLLATE "C" NOT NULL,
      etag TEXT,
      last_modified TEXT,
      fingerprint TEXT,
      lastmod TEXT,
      exclusion TEXT,
      canonical TEXT,
      links BYTEA NOT NULL,
      extra TEXT,
      PRIMARY KEY (job_id, url)
    );
    CREATE TABLE site_changes (
      job_id TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('added', 'removed', 'changed')),
      url TEXT COLLATE "C" NOT NULL,
      PRIMARY KEY (job_id, kind, url)
    );
    CREATE TABLE page_cleanup (job_id TEXT PRIMARY KEY);`,
};

export const postgresMigrations: Migration[] = [
  ...keyMigrations,
  postgresJobsMigration,
  postgresHostsMigration,
  postgresCredentialsMigration,
  postgresLinksMigration,
  postgresSitesMigration,
];
