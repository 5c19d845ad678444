// A finished job's files on SQLite (JobFiles, src/jobs/job-store.ts): job_parts, gzip-compressed.
import type { JobFiles } from "../../jobs/job-store.ts";
import type { SqliteAccess } from "./database.ts";

export function createSqliteJobFiles({ read, write }: SqliteAccess): JobFiles {
  return {
    putPart: (id, n, gzipped) =>
      write((db) => {
        db.query(`INSERT INTO job_parts (job_id, n, body) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET body = excluded.body`).run(
          id,
          n,
          gzipped,
        );
      }),

    getPart: (id, n) =>
      read((db) => {
        const row = db.query<{ body: Uint8Array }, [string, number]>(`SELECT body FROM job_parts WHERE job_id = ? AND n = ?`).get(id, n);
        return row ? new Uint8Array(row.body) : null;
      }),
  };
}
