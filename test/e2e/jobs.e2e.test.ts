// Crawl jobs through the compiled executable on SQLite (the suite: test/jobs/e2e-suite.ts).
import { join } from "node:path";
import { tempDir } from "../support/binary.ts";
import { describeJobs } from "../jobs/e2e-suite.ts";

describeJobs({ name: "SQLite", store: async () => join(tempDir(), "genapi.db") });
