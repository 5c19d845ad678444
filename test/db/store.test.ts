// The store contract (store-suite.ts) on the embedded SQLite file and on a real PostgreSQL.
import { SQL } from "bun";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { openStore } from "../../src/open-store.ts";
import { tempDir } from "../support/binary.ts";
import { createDatabase, startServer, stopServer } from "../support/postgres.ts";
import { needs } from "../support/requires.ts";
import { storeSuite } from "./store-suite.ts";

storeSuite({
  name: "SQLite",
  newSpec: async () => join(tempDir(), "genapi.db"),
  reopen: (spec) => openStore(spec, { purpose: "serve" }),
  problem: "busy",
  async makeUnavailable(spec) {
    // Another process's write lock, held past the store's wait.
    const holder = new Database(spec);
    holder.exec("BEGIN IMMEDIATE");
    return async () => {
      holder.exec("ROLLBACK");
      holder.close();
    };
  },
  async lockJobs(spec) {
    const holder = new Database(spec);
    holder.exec("BEGIN IMMEDIATE");
    return async () => {
      holder.exec("ROLLBACK");
      holder.close();
    };
  },
});

storeSuite({
  name: "PostgreSQL",
  skip: !needs(import.meta.path, "postgresql"),
  newSpec: createDatabase,
  reopen: (spec) => openStore(spec, { purpose: "serve" }),
  problem: "unreachable",
  async makeUnavailable() {
    stopServer();
    return async () => startServer();
  },
  async makeSlow(spec) {
    // Another session holds the counters' table: statements on it wait, as on an overloaded server.
    const sql = new SQL(spec, { max: 1 });
    const holder = await sql.reserve();
    await holder`BEGIN`;
    await holder`LOCK TABLE usage_counters IN ACCESS EXCLUSIVE MODE`;
    return async () => {
      await holder`ROLLBACK`;
      holder.release();
      await sql.close();
    };
  },
  async lockJobs(spec) {
    const sql = new SQL(spec, { max: 1 });
    const holder = await sql.reserve();
    await holder`BEGIN`;
    await holder`LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE`;
    return async () => {
      await holder`ROLLBACK`;
      holder.release();
      await sql.close();
    };
  },
});
