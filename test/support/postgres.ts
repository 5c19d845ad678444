// One throwaway PostgreSQL cluster per `bun test` process, for the store's tests on a real server:
// initdb in a temp dir owned by `postgres` (the server refuses to run as root), listening on a free
// loopback port and a socket in that dir, started on first use and removed when the process ends,
// however it ends: `bun test` (1.4.4) runs no process "exit" or "beforeExit" handler, so a small
// watchdog process waits for this one to be gone, then stops the server and removes the directory. Host connections need a password (scram-sha-256), so the URLs
// the tests hand to genapi carry one and the tests can check that it never shows.
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresBin } from "./requires.ts";

/** The password of the role every test database belongs to; tests look for it in output. */
export const PASSWORD = "pg-test-Secret-7f3a";
const ROLE = "genapi";

/** Debian's server binaries, newest major version. A test file asks needs(..., "postgresql") first. */
function serverBin(): string {
  const bin = postgresBin();
  if (bin === null) throw new Error("PostgreSQL is not installed (Debian: apt-get install postgresql)");
  return bin;
}

function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** Runs a server tool as `postgres` when we are root (CI), as ourselves otherwise. */
function asPostgres(argv: string[]): string {
  const root = process.getuid?.() === 0;
  const proc = Bun.spawnSync(root ? ["runuser", "-u", "postgres", "--", ...argv] : argv, { stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

interface Cluster {
  dir: string;
  data: string;
  port: number;
  bin: string;
}

let cluster: Cluster | undefined;
let running = false;

function pgCtl(args: string[]): void {
  const { bin, data, dir, port } = cluster!;
  asPostgres([
    `${bin}/pg_ctl`,
    "-D",
    data,
    "-w",
    "-l",
    join(dir, "log"),
    ...args.map((a) => a.replace("$OPTS", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`)),
  ]);
}

/** Once this process is gone (passed, failed or killed): immediate shutdown, then removal. */
function watchdog(dir: string, data: string): void {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 0.5; done
    pid=$(head -n 1 '${data}/postmaster.pid' 2>/dev/null) && kill -QUIT "$pid" 2>/dev/null
    for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -rf '${dir}'`;
  Bun.spawn(["sh", "-c", script], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).unref();
}

/** Immediate shutdown and removal now (stopCluster). */
function destroy(): void {
  if (!cluster) return;
  const { data, dir } = cluster;
  try {
    const postmaster = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    process.kill(postmaster, "SIGQUIT"); // nothing of a throwaway cluster needs saving
    for (let waited = 0; waited < 5_000; waited += 20) {
      process.kill(postmaster, 0); // throws once it is gone
      Bun.sleepSync(20);
    }
  } catch {}
  rmSync(dir, { recursive: true, force: true });
  cluster = undefined;
  running = false;
}

function ensureCluster(): Cluster {
  if (cluster) return cluster;
  const dir = mkdtempSync(join(tmpdir(), "genapi-pg-"));
  const bin = serverBin();
  const data = join(dir, "data");
  const pwfile = join(dir, "password");
  writeFileSync(pwfile, PASSWORD);
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(Bun.spawnSync(["id", flag, "postgres"]).stdout.toString());
    chownSync(dir, id("-u"), id("-g"));
    chownSync(pwfile, id("-u"), id("-g"));
  }
  cluster = { dir, data, port: freePort(), bin };
  watchdog(dir, data);
  asPostgres([
    `${bin}/initdb`,
    "-D",
    data,
    "-U",
    "postgres",
    "--no-sync",
    "--auth-local=trust",
    "--auth-host=scram-sha-256",
    `--pwfile=${pwfile}`,
  ]);
  startServer();
  // The superuser works through the socket (trust); genapi's role only over TCP with its password.
  psql(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`);
  return cluster;
}

/** One statement as the superuser, through the cluster's socket. */
function psql(statement: string): void {
  const { bin, dir, port } = cluster!;
  asPostgres([`${bin}/psql`, "-h", dir, "-p", String(port), "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-c", statement]);
}

/** Starts the server (again, after stopServer); waits until it accepts connections. */
export function startServer(): void {
  if (running) return;
  pgCtl(["-o", "$OPTS", "start"]);
  running = true;
}

/** Stops the server (fast: open connections are cut), for outage tests; the data stays. */
export function stopServer(): void {
  if (!running) return;
  pgCtl(["-m", "fast", "stop"]);
  running = false;
}

let count = 0;

/** A new empty database owned by the password role; its URL (with the password). */
export async function createDatabase(): Promise<string> {
  const { port } = ensureCluster();
  const name = `genapi_${process.pid}_${++count}`;
  psql(`CREATE DATABASE ${name} OWNER ${ROLE}`);
  return `postgresql://${ROLE}:${PASSWORD}@127.0.0.1:${port}/${name}`;
}

/** Stops and removes the cluster now (afterAll); a later createDatabase starts a new one. */
export function stopCluster(): void {
  destroy();
}
