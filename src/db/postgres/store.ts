// The Store on a shared PostgreSQL database, through Bun's built-in SQL client. Every query is
// raced against a deadline: a server that is down or slow makes requests answer 503 within
// ~1.5 s (StoreUnavailableError "unreachable") instead of piling up, and the pool reconnects by
// itself once the server is back. The URL's password never leaves this module in a message.
import { SQL } from "bun";
import {
  BACKGROUND_DEADLINE_MS,
  processOwner,
  redactSpec,
  scrub,
  StoreOpenError,
  StoreUnavailableError,
  type OpenOptions,
  type Store,
} from "../store.ts";
import { migratePostgres, type PgAccess } from "./database.ts";
import { createPostgresJobStore } from "./jobs.ts";
import { createPostgresSiteStore } from "./sites.ts";
import { createPostgresKeyStore } from "./keys.ts";
import { createPostgresQuotaStore } from "./quota.ts";
import { createPostgresHostLeases } from "./hosts.ts";

/** How long one store call of a request may take before it answers 503 (background work: BACKGROUND_DEADLINE_MS). */
export const QUERY_DEADLINE_MS = 1500;
/** How long a statement cancelled at the deadline gets to confirm it did not go through. */
const CANCEL_GRACE_MS = 250;
/** How long `serve` keeps retrying the first connection at start. */
const CONNECT_RETRY_MS = 30_000;
/** Connections of one process; admission is one short statement, so a few go far. */
const POOL_SIZE = 10;

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
  return {
    kind: "postgres",
    keys: createPostgresKeyStore(access),
    quota: createPostgresQuotaStore(access),
    jobs: createPostgresJobStore(access),
    hosts: createPostgresHostLeases(access, processOwner()),
    backgroundJobs: createPostgresJobStore(postgresAccess(sql, BACKGROUND_DEADLINE_MS)),
    sites: createPostgresSiteStore(access),
    backgroundSites: createPostgresSiteStore(postgresAccess(sql, BACKGROUND_DEADLINE_MS)),
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
