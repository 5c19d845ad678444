// Finished jobs' callbacks on SQLite (JobCallbacks, src/jobs/job-store.ts): the secret is kept on the
// job's row until the callback has been sent.
import type { JobCallbacks } from "../../jobs/job-store.ts";
import type { SqliteAccess } from "./database.ts";

export function createSqliteJobCallbacks({ read, write }: SqliteAccess): JobCallbacks {
  return {
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
  };
}
