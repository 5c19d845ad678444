// The job store on SQLite (JobStore, src/jobs/job-store.ts): one part per concern, each in its own
// file over the same access (the schema: versions 3 and 4 in migrations.ts).
import type { JobStore } from "../../jobs/job-store.ts";
import type { SqliteAccess } from "./database.ts";
import { createSqliteJobCallbacks } from "./job-callbacks.ts";
import { createSqliteCrawlState } from "./job-crawl-state.ts";
import { createSqliteJobFiles } from "./job-files.ts";
import { createSqliteJobQueue } from "./job-queue.ts";
import { createSqliteJobRetention } from "./job-retention.ts";

export function createSqliteJobStore(access: SqliteAccess): JobStore {
  return {
    ...createSqliteJobQueue(access),
    ...createSqliteCrawlState(access),
    ...createSqliteJobFiles(access),
    ...createSqliteJobCallbacks(access),
    ...createSqliteJobRetention(access),
  };
}
