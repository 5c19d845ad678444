// The job store on PostgreSQL (JobStore, src/jobs/job-store.ts): one part per concern, each in its
// own file over the same access (the schema: versions 3 and 4 in migrations.ts).
import type { JobStore } from "../../jobs/job-store.ts";
import type { PgAccess } from "./database.ts";
import { createPostgresJobCallbacks } from "./job-callbacks.ts";
import { createPostgresCrawlState } from "./job-crawl-state.ts";
import { createPostgresJobFiles } from "./job-files.ts";
import { createPostgresJobQueue } from "./job-queue.ts";
import { createPostgresJobRetention } from "./job-retention.ts";

export function createPostgresJobStore(access: PgAccess): JobStore {
  return {
    ...createPostgresJobQueue(access),
    ...createPostgresCrawlState(access),
    ...createPostgresJobFiles(access),
    ...createPostgresJobCallbacks(access),
    ...createPostgresJobRetention(access),
  };
}
