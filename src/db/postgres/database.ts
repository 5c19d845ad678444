// How statements reach the PostgreSQL server (PgAccess, implemented in store.ts with its deadline)
// and how the schema is brought up to date (migratePostgres, the steps in migrations.ts).
import type { SQL } from "bun";
import type { Migration } from "../store.ts";
import { postgresMigrations } from "./migrations.ts";

/** How statements reach the server: H2's connection wrapper (raced against a deadline, then 503). */
export interface PgAccess {
  query<T>(fn: (sql: SQL) => Promise<T>): Promise<T>;
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
