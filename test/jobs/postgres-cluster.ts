// A throwaway PostgreSQL cluster for the job store tests, until they share the store layer's
// harness: initdb in a temp dir owned by `postgres` (PostgreSQL refuses to run as root), a free
// loopback port, one database per call, the cluster stopped and removed when the process exits.
import { SQL } from "bun";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's server binaries, newest major version first (13 or newer). */
function serverBin(): string {
  const versions = readdirSync("/usr/lib/postgresql", { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join("/usr/lib/postgresql", entry.name, "bin/initdb")))
    .map((entry) => Number(entry.name))
    .sort((a, b) => b - a);
  if (versions.length === 0) throw new Error("PostgreSQL is not installed (Debian: apt-get install postgresql)");
  return join("/usr/lib/postgresql", String(versions[0]), "bin");
}

function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

function asPostgres(argv: string[]): void {
  const root = process.getuid?.() === 0;
  const proc = Bun.spawnSync(root ? ["runuser", "-u", "postgres", "--", ...argv] : argv, { stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${proc.stderr.toString()}`);
}

let cluster: Promise<string> | undefined;
let stop = () => {};

/** Stops and removes the cluster (call it in afterAll); a later createDatabase starts a new one. */
export function stopCluster(): void {
  stop();
  stop = () => {};
  cluster = undefined;
}

/** The cluster's admin URL, starting it on first use. */
function start(): Promise<string> {
  return (cluster ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "genapi-jobs-pg-"));
    if (process.getuid?.() === 0) chownSync(dir, Number(Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString()), Number(Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString()));
    const BIN = serverBin();
    const data = join(dir, "data");
    const port = freePort();
    asPostgres([`${BIN}/initdb`, "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
    asPostgres([`${BIN}/pg_ctl`, "-D", data, "-w", "-l", join(dir, "log"), "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "start"]);
    const postmaster = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    stop = () => {
      // SIGQUIT: immediate shutdown; nothing of a throwaway cluster needs saving.
      try {
        process.kill(postmaster, "SIGQUIT");
        for (let waited = 0; waited < 5_000; waited += 20) {
          process.kill(postmaster, 0); // throws once it is gone
          Bun.sleepSync(20);
        }
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    };
    return `postgres://postgres@127.0.0.1:${port}`;
  })());
}

let count = 0;

/** A new empty database on the cluster; its URL. */
export async function createDatabase(): Promise<string> {
  const admin = await start();
  const name = `jobs_${process.pid}_${++count}`;
  const sql = new SQL(`${admin}/postgres`);
  await sql.unsafe(`CREATE DATABASE ${name}`);
  await sql.close();
  return `${admin}/${name}`;
}
