// The Store on a shared PostgreSQL database, through Bun's built-in SQL client. Every query is
// raced against a deadline: a server that is down or slow makes requests answer 503 within
// ~1.5 s (StoreUnavailableError "unreachable") instead of piling up, and the pool reconnects by
// itself once the server is back. The URL's password never leaves this module in a message.
import { SQL } from "bun";
import { generateApiKey, hashApiKey, hasValidChecksum, keyPrefix } from "../../keys/key-format.ts";
import { keyLookup, RECORD_COLUMNS, validateDailyLimit, validateKeyName, type KeyRecord, type RevokeResult } from "../../keys/key-store.ts";
import { admissionOf, assertLimit, pruneBefore, stateOf, utcDay } from "../../quota/quota.ts";
import type { Migration } from "../sqlite/migrations.ts";
import { redactSpec, scrub, StoreOpenError, StoreUnavailableError, type OpenOptions, type Store } from "../store.ts";
import { createPostgresJobStore, postgresJobsMigration, type PgAccess } from "./jobs.ts";

/** How long one store call of a request may take before it answers 503. */
export const QUERY_DEADLINE_MS = 1500;
/** How long a statement cancelled at the deadline gets to confirm it did not go through. */
const CANCEL_GRACE_MS = 250;
/** How long `serve` keeps retrying the first connection at start. */
const CONNECT_RETRY_MS = 30_000;
/** Connections of one process; admission is one short statement, so a few go far. */
const POOL_SIZE = 10;

/** The schema, one step per version, mirroring SQLite's (src/db/sqlite/migrations.ts and the jobs' v3). */
export const postgresMigrations: Migration[] = [
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
  postgresJobsMigration,
];

/** Errors that mean "the server cannot be reached now", as opposed to a bad statement. */
function isConnectionProblem(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  if (typeof code === "string" && code.startsWith("ERR_POSTGRES_") && code !== "ERR_POSTGRES_SERVER_ERROR") {
    // Client-side failures: refused, closed, timed out, TLS, authentication handshake.
    return !/SYNTAX|INVALID_QUERY|UNSUPPORTED|NOT_TAGGED|INVALID_BINARY/.test(code);
  }
  // SQLSTATE class 08 (connection exception), 57P0x (shutting down, cannot connect now), 53300 (too many connections).
  return typeof errno === "string" && (errno.startsWith("08") || /^57P0[1-3]$/.test(errno) || errno === "53300");
}

function raceDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: Timer | undefined;
  let expired = false;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Cancel the statement (still queued for a connection, or running on the server) and give the
      // cancellation a moment to land: a statement that went through after its request was
      // answered 503 would count an admission nobody got. One the server finished anyway wins the
      // race below with its result.
      expired = true;
      (work as { cancel?: () => unknown }).cancel?.();
      timer = setTimeout(() => reject(new StoreUnavailableError("unreachable")), CANCEL_GRACE_MS);
    }, ms);
  });
  // A query that loses the race still settles later; nobody is left waiting for it.
  work.catch(() => {});
  return Promise.race([work, deadline])
    .catch((error) => {
      // Past the deadline any failure, the cancellation's own included, means "not now".
      throw expired ? new StoreUnavailableError("unreachable") : error;
    })
    .finally(() => clearTimeout(timer));
}

/** Runs statements with the deadline; connection problems become StoreUnavailableError. */
export function postgresAccess(sql: SQL, deadlineMs = QUERY_DEADLINE_MS): PgAccess {
  return {
    async query(fn) {
      try {
        return await raceDeadline(fn(sql), deadlineMs);
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw error;
        if (isConnectionProblem(error)) throw new StoreUnavailableError("unreachable");
        throw error;
      }
    },
  };
}

const MIGRATION_LOCK = "genapi.schema";

/** Brings the schema up to date in one transaction under an advisory lock: one process at a time. */
export async function migratePostgres(sql: SQL, migrations: Migration[] = postgresMigrations): Promise<void> {
  await sql.begin(async (tx) => {
    await tx.unsafe(`SELECT pg_advisory_xact_lock(hashtext('${MIGRATION_LOCK}'))`);
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS genapi_schema (version INTEGER NOT NULL)`);
    const rows = await tx.unsafe(`SELECT version FROM genapi_schema`);
    let current = rows.length === 0 ? 0 : Number(rows[0].version);
    if (rows.length === 0) await tx.unsafe(`INSERT INTO genapi_schema (version) VALUES (0)`);
    for (const step of [...migrations].sort((a, b) => a.version - b.version)) {
      if (step.version <= current) continue;
      await tx.unsafe(step.sql);
      current = step.version;
    }
    await tx.unsafe(`UPDATE genapi_schema SET version = $1`, [current]);
  });
}

const toRecord = (row: Record<string, unknown>): KeyRecord => ({
  id: Number(row.id),
  name: row.name as string,
  prefix: row.prefix as string,
  daily_limit: row.daily_limit === null ? null : Number(row.daily_limit),
  created_at: row.created_at as string,
  last_used_at: (row.last_used_at as string | null) ?? null,
  revoked_at: (row.revoked_at as string | null) ?? null,
});

const ROLLBACK = Symbol("rollback");

export async function openPostgresStore(spec: string, options: OpenOptions): Promise<Store> {
  const shown = redactSpec(spec);
  let sql: SQL;
  try {
    sql = new SQL(spec, { max: POOL_SIZE, connectionTimeout: 3, idleTimeout: 60 });
  } catch (error) {
    throw new StoreOpenError(`cannot open database ${shown}: ${scrub(String((error as Error).message), spec)}`);
  }
  const retryFor = options.purpose === "serve" ? (options.connectRetryMs ?? CONNECT_RETRY_MS) : 0;
  const giveUpAt = performance.now() + retryFor;
  for (let attempt = 1; ; attempt++) {
    try {
      await migratePostgres(sql);
      break;
    } catch (error) {
      const reason = scrub(String((error as Error)?.message ?? error).split("\n")[0]!, spec);
      if (!isConnectionProblem(error) || performance.now() >= giveUpAt) {
        await sql.close({ timeout: 0 }).catch(() => {});
        throw new StoreOpenError(`cannot open database ${shown}: ${reason}`);
      }
      if (attempt === 1) options.log?.(`database ${shown} unreachable (${reason}); retrying for up to ${retryFor / 1000} s`);
      await Bun.sleep(500);
    }
  }

  const access = postgresAccess(sql);
  const q = access.query;
  let lastPrunedDay = "";
  return {
    kind: "postgres",
    keys: {
      async create(input, now) {
        const name = validateKeyName(input.name);
        const dailyLimit = validateDailyLimit(input.dailyLimit);
        const key = generateApiKey();
        const rows = await q((s) =>
          s.unsafe(
            `INSERT INTO api_keys (name, prefix, key_hash, daily_limit, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${RECORD_COLUMNS}`,
            [name, keyPrefix(key), Buffer.from(hashApiKey(key)), dailyLimit, now.toISOString()],
          ),
        );
        return { key, record: toRecord(rows[0]) };
      },
      async list() {
        const rows = await q((s) => s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys ORDER BY id`));
        return [...rows].map(toRecord);
      },
      async revoke(idOrPrefix, now): Promise<RevokeResult> {
        const lookup = keyLookup(idOrPrefix);
        if (lookup === null) return { status: "not_found" };
        const rows = await q((s) =>
          lookup.by === "id"
            ? s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE id = $1`, [lookup.id])
            : lookup.by === "hash"
              ? s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE key_hash = $1`, [Buffer.from(lookup.hash)])
              : s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE substr(prefix, 1, $1) = $2 ORDER BY id`, [
                  lookup.prefix.length,
                  lookup.prefix,
                ]),
        );
        const matches = [...rows].map(toRecord);
        if (matches.length === 0) return { status: "not_found" };
        if (matches.length > 1) return { status: "ambiguous", matches };
        const id = matches[0]!.id;
        const revoked = await q((s) =>
          s.unsafe(`UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING ${RECORD_COLUMNS}`, [
            now.toISOString(),
            id,
          ]),
        );
        if (revoked.length === 1) return { status: "revoked", record: toRecord(revoked[0]) };
        const current = await q((s) => s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE id = $1`, [id]));
        return current.length === 1 ? { status: "already_revoked", record: toRecord(current[0]) } : { status: "not_found" };
      },
      async authenticate(key, now) {
        if (!key || !hasValidChecksum(key)) return null;
        const rows = await q((s) =>
          s.unsafe(`UPDATE api_keys SET last_used_at = $1 WHERE key_hash = $2 AND revoked_at IS NULL RETURNING ${RECORD_COLUMNS}`, [
            now.toISOString(),
            Buffer.from(hashApiKey(key)),
          ]),
        );
        return rows.length === 1 ? toRecord(rows[0]) : null;
      },
    },
    quota: {
      async admit(bucket, limit, now) {
        assertLimit(limit);
        const day = utcDay(now);
        if (lastPrunedDay !== day) {
          await q((s) => s.unsafe(`DELETE FROM usage_counters WHERE day < $1`, [pruneBefore(now)]));
          lastPrunedDay = day;
        }
        const rows = await q((s) =>
          s.unsafe(
            `INSERT INTO usage_counters (day, bucket, count) VALUES ($1, $2, 1)
             ON CONFLICT (day, bucket) DO UPDATE SET count = usage_counters.count + 1 WHERE usage_counters.count < $3
             RETURNING count`,
            [day, bucket, limit],
          ),
        );
        return admissionOf(rows.length === 1 ? Number(rows[0].count) : null, limit, now);
      },
      async release(bucket, day) {
        await q((s) => s.unsafe(`UPDATE usage_counters SET count = count - 1 WHERE day = $1 AND bucket = $2 AND count > 0`, [day, bucket]));
      },
      async peek(bucket, limit, now) {
        assertLimit(limit);
        const rows = await q((s) => s.unsafe(`SELECT count FROM usage_counters WHERE day = $1 AND bucket = $2`, [utcDay(now), bucket]));
        return stateOf(rows.length === 1 ? Number(rows[0].count) : 0, limit, now);
      },
    },
    jobs: createPostgresJobStore(access),
    async ready() {
      try {
        await q((s) =>
          s.begin(async (tx) => {
            await tx.unsafe(`INSERT INTO meta (key, value) VALUES ('readyz', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [
              new Date().toISOString(),
            ]);
            throw ROLLBACK;
          }),
        );
        return true;
      } catch (error) {
        // The write went through and was rolled back: the database takes writes.
        return error === ROLLBACK;
      }
    },
    async close() {
      await sql.close({ timeout: 2 }).catch(() => {});
    },
  };
}
