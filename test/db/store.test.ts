// The store contract (store-suite.ts) on the embedded SQLite file and on a real PostgreSQL.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { openStore } from "../../src/db/open-store.ts";
import { tempDir } from "../support/binary.ts";
import { createDatabase, startServer, stopServer } from "../support/postgres.ts";
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
});

storeSuite({
  name: "PostgreSQL",
  newSpec: createDatabase,
  reopen: (spec) => openStore(spec, { purpose: "serve" }),
  problem: "unreachable",
  async makeUnavailable() {
    stopServer();
    return async () => startServer();
  },
});
