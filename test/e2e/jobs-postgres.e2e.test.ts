// Crawl jobs through the compiled executable on a real PostgreSQL (a throwaway cluster started by
// the test): the same suite as on SQLite (test/jobs/e2e-suite.ts), each test on its own database,
// the two-instance and kill -9 tests with several genapi processes sharing it.
import { afterAll } from "bun:test";
import { describeJobs } from "../jobs/e2e-suite.ts";
import { createDatabase, stopCluster } from "../support/postgres.ts";

afterAll(() => stopCluster());

describeJobs({ name: "PostgreSQL", store: createDatabase });
