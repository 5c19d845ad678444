// The executables under test: genapi built from the current sources (as shipped, and without bytecode)
// and the bare compiled Bun.serve ceiling; starting them pinned, with their logs in files.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { CORES, pinned, run, settlesWithin, waitForLine } from "./proc.ts";

export const ROOT = join(import.meta.dir, "../../..");
export const BUN = process.execPath;

export interface Binaries {
  genapi: string;
  /** genapi built with --no-bytecode: what the bytecode saves at start-up. */
  sourceOnly: string;
  ceiling: string;
  /** The fair ceiling: a bare Bun.serve doing /api.php's own work (fixtures/fair-ceiling-server.ts). */
  fairCeiling: string;
  buildCommand: string;
}

/** Builds every executable into `dir`; `genapi` replaces the default build (e.g. a scratch variant). */
export function buildBinaries(dir: string, genapi?: string): Binaries {
  const out = (name: string) => join(dir, name);
  if (genapi === undefined) run([BUN, "scripts/build.ts", "--outfile", out("genapi")], { cwd: ROOT });
  run([BUN, "scripts/build.ts", "--no-bytecode", "--outfile", out("genapi-source-only")], { cwd: ROOT });
  for (const [name, source] of [
    ["ceiling", "ceiling-server.ts"],
    ["fair-ceiling", "fair-ceiling-server.ts"],
  ]) {
    run(
      [BUN, "build", "--compile", "--minify-whitespace", "--minify-syntax", "--outfile", out(name!), `scripts/bench/fixtures/${source}`],
      {
        cwd: ROOT,
      },
    );
  }
  return {
    genapi: genapi ?? out("genapi"),
    sourceOnly: out("genapi-source-only"),
    ceiling: out("ceiling"),
    fairCeiling: out("fair-ceiling"),
    buildCommand: "bun scripts/build.ts [--no-bytecode] --outfile ...",
  };
}

export interface Server {
  url: string;
  pid: number;
  argv: string[];
  /** Resolves with the exit code. */
  exited: Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts an executable that prints a JSON line with "address" once it listens (genapi serve, the
 * ceiling), pinned to the server core; stdout (genapi's request log) goes to a file, as under a
 * service manager, so draining it costs the benchmark nothing.
 */
export async function startServer(
  argv: string[],
  dir: string,
  core = CORES.server,
  timeoutMs = 10_000,
): Promise<Server & { line: string }> {
  const log = join(dir, `server-${Date.now()}-${Math.random().toString(36).slice(2)}.log`);
  const proc = Bun.spawn(pinned(core, argv), { stdin: "ignore", stdout: Bun.file(log), stderr: Bun.file(`${log}.err`) });
  try {
    const line = await waitForLine(log, (l) => l.includes('"address"'), timeoutMs, proc.exited);
    const url = (JSON.parse(line) as { address: string }).address;
    return {
      url,
      line,
      pid: proc.pid,
      argv,
      exited: proc.exited,
      stop: async () => {
        proc.kill("SIGTERM");
        if (!(await settlesWithin(proc.exited, 5_000))) proc.kill("SIGKILL");
        await proc.exited;
      },
    };
  } catch (error) {
    proc.kill("SIGKILL");
    const stderr = await Bun.file(`${log}.err`)
      .text()
      .catch(() => "");
    throw new Error(`${argv[0]} did not start: ${(error as Error).message} ${stderr.slice(0, 500)}`);
  }
}

/** `genapi serve` on an ephemeral loopback port with a fresh database; returns the server and its db. */
export async function startGenapi(binary: string, dir: string, args: string[] = [], db = newDb(dir)): Promise<Server & { db: string }> {
  const server = await startServer([binary, "serve", "--host", "127.0.0.1", "--port", "0", "--db", db, ...args], dir);
  return { ...server, db };
}

export function newDb(dir: string): string {
  return join(mkdtempSync(join(dir, "db-")), "genapi.db");
}

/** genapi's API with `key`: a request's `data`, or an error naming the method, path and status. */
export function genapiApi(server: Pick<Server, "url">, key: string) {
  return async (path: string, init: RequestInit = {}): Promise<any> => {
    const res = await fetch(`${server.url}${path}`, { ...init, headers: { "content-type": "application/json", "x-api-key": key } });
    if (res.status >= 300) throw new Error(`${init.method ?? "GET"} ${path} answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { data: unknown }).data;
  };
}

/** `genapi keys create`: prints only the key. */
export function createKey(binary: string, db: string, dailyLimit?: number): string {
  return run([
    binary,
    "keys",
    "create",
    "--name",
    "bench",
    ...(dailyLimit === undefined ? [] : ["--daily-limit", String(dailyLimit)]),
    "--db",
    db,
  ]);
}
