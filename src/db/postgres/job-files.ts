// A finished job's files on PostgreSQL (JobFiles, src/jobs/job-store.ts): job_parts, gzip-compressed.
import type { SQL } from "bun";
import type { JobFiles } from "../../jobs/job-store.ts";
import type { PgAccess } from "./database.ts";

export function createPostgresJobFiles(access: PgAccess): JobFiles {
  const run = <T>(fn: (sql: SQL) => Promise<T>) => access.query(fn);
  return {
    putPart: (id, n, gzipped) =>
      run(async (sql) => {
        await sql.unsafe(
          `INSERT INTO job_parts (job_id, n, body) VALUES ($1, $2, $3) ON CONFLICT (job_id, n) DO UPDATE SET body = excluded.body`,
          [id, n, gzipped],
        );
      }),

    getPart: (id, n) =>
      run(async (sql) => {
        const rows = await sql.unsafe(`SELECT body FROM job_parts WHERE job_id = $1 AND n = $2`, [id, n]);
        return rows.length ? new Uint8Array((rows[0] as { body: Uint8Array }).body) : null;
      }),
  };
}
