// Opens the store named by `--db`: a postgres:// or postgresql:// URL, else a SQLite file path.
import { openPostgresStore } from "./db/postgres/store.ts";
import { openSqliteStore } from "./db/sqlite/store.ts";
import { isPostgresUrl, type OpenOptions, type Store } from "./db/store.ts";

export function openStore(spec: string, options: OpenOptions): Promise<Store> {
  return isPostgresUrl(spec) ? openPostgresStore(spec, options) : openSqliteStore(spec, options);
}
