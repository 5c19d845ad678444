// Finished jobs' callbacks on PostgreSQL (JobCallbacks, src/jobs/job-store.ts): the secret is kept on
// the job's row until the callback has been sent.
import type { SQL } from "bun";
import type { JobCallbacks } from "../../jobs/job-store.ts";
import type { PgAccess } from "./database.ts";

export function createPostgresJobCallbacks(access: PgAccess): JobCallbacks {
  const run = <T>(fn: (sql: SQL) => Promise<T>) => access.query(fn);
  return {
    pendingCallback: (id) =>
      run(async (sql) => {
        const rows = await sql.unsafe(
          `SELECT callback_url, callback_secret FROM jobs WHERE id = $1 AND callback_url IS NOT NULL AND callback_secret IS NOT NULL`,
          [id],
        );
        const row = rows[0] as { callback_url: string; callback_secret: string } | undefined;
        return row ? { url: row.callback_url, secret: row.callback_secret } : null;
      }),

    callbackSent: (id) =>
      run(async (sql) => {
        await sql.unsafe(`UPDATE jobs SET callback_secret = NULL WHERE id = $1`, [id]);
      }),
  };
}
