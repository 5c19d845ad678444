// The schema, one step per version. A database records the last step it has run in
// `PRAGMA user_version`; steps are append-only: never edit one that has shipped.
export interface Migration {
  version: number;
  description: string;
  sql: string;
}

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
