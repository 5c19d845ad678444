// Builds (when missing or older than the sources) and starts the compiled executable, so
// end-to-end tests exercise dist/genapi itself rather than src/.
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "../..");
export const BINARY = process.env.GENAPI_BIN ?? join(root, "dist/genapi");

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

let built: Promise<string> | undefined;

// A test that fails half-way must not leave servers behind: kill whatever is still running.
const spawned = new Set<Bun.Subprocess>();
process.on("exit", () => {
  for (const proc of spawned) proc.kill("SIGKILL");
});

/** The path of an up-to-date executable, building it once per test run if needed. */
export function ensureBinary(): Promise<string> {
  built ??= (async () => {
    if (process.env.GENAPI_BIN) return BINARY;
    const sourcesAt = Math.max(newestSource(join(root, "src")), statSync(join(root, "package.json")).mtimeMs);
    let binaryAt = 0;
    try {
      binaryAt = statSync(BINARY).mtimeMs;
    } catch {}
    if (binaryAt < sourcesAt) {
      const proc = Bun.spawn([process.execPath, "scripts/build.ts"], { cwd: root, stdout: "pipe", stderr: "pipe" });
      if ((await proc.exited) !== 0) throw new Error(`build failed: ${await new Response(proc.stderr).text()}`);
    }
    return BINARY;
  })();
  return built;
}

/** A process's NUL-separated /proc file (its environment or command line) as its entries. */
export function procEntries(pid: number, file: "environ" | "cmdline"): string[] {
  return readFileSync(`/proc/${pid}/${file}`, "utf8").split("\0").filter(Boolean);
}

/**
 * The executable's restart without JavaScriptCore's FTL tier (src/commands/ftl.ts), as a test sees
 * it: the variable as the test sets it (unset, or the user's own value) and the entry the running
 * process must hold.
 */
export const FTL_CASES = [
  [undefined, "BUN_JSC_useFTLJIT=0"],
  ["1", "BUN_JSC_useFTLJIT=1"],
] as const;

export function tempDir(prefix = "genapi-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface RunningBinary {
  url: string;
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** Every stdout line so far (one JSON log line per request). */
  stdout: string[];
  stderr: () => string;
  dbPath: string;
  stop: (signal?: NodeJS.Signals) => Promise<number>;
}

export interface StartOptions {
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  dbPath?: string;
  /** Runs the executable through this command line instead (e.g. runuser as another user). */
  wrapper?: string[];
}

/** Starts `genapi serve` on an ephemeral loopback port with a temporary database. */
export async function startBinary(options: StartOptions = {}): Promise<RunningBinary> {
  const binary = await ensureBinary();
  const dbPath = options.dbPath ?? join(tempDir(), "genapi.db");
  const proc = Bun.spawn(
    [...(options.wrapper ?? [binary]), "serve", "--host", "127.0.0.1", "--port", "0", "--db", dbPath, ...(options.args ?? [])],
    {
      cwd: options.cwd ?? (options.wrapper ? "/" : tempDir()),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...options.env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  spawned.add(proc);
  proc.exited.then(() => spawned.delete(proc));
  const stdout: string[] = [];
  let stderr = "";
  let listening: (url: string) => void = () => {};
  const ready = new Promise<string>((resolve) => (listening = resolve));
  (async () => {
    let buffer = "";
    for await (const chunk of proc.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        stdout.push(line);
        const address = line.includes("listening on") ? JSON.parse(line).address : undefined;
        if (address) listening(address);
      }
    }
  })();
  (async () => {
    for await (const chunk of proc.stderr.pipeThrough(new TextDecoderStream())) stderr += chunk;
  })();
  const url = await Promise.race([
    ready,
    proc.exited.then((code) => {
      throw new Error(`genapi exited with ${code} before listening: ${stderr}`);
    }),
    Bun.sleep(10_000).then(() => {
      throw new Error(`genapi did not start within 10 s: ${stderr}`);
    }),
  ]);
  return {
    url,
    proc,
    stdout,
    stderr: () => stderr,
    dbPath,
    stop: async (signal = "SIGTERM") => {
      proc.kill(signal);
      return await proc.exited;
    },
  };
}

/** Runs the executable to completion (for `keys` commands and flag errors). */
export async function runBinary(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}) {
  const binary = await ensureBinary();
  const proc = Bun.spawn([binary, ...args], {
    cwd: options.cwd ?? tempDir(),
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...options.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** Creates a key in `dbPath` with the executable's own command; returns the key. */
export async function createKey(dbPath: string, ...args: string[]): Promise<string> {
  const { stdout, stderr, code } = await runBinary(["keys", "create", "--name", "test", "--db", dbPath, ...args]);
  if (code !== 0) throw new Error(`keys create failed: ${stderr}`);
  return stdout.trim();
}

/** POST /api/generate {"url": url} with the key. */
export function generate(server: RunningBinary, key: string, url: string, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${server.url}/api/generate`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key, ...headers },
    body: JSON.stringify({ url }),
    signal,
  });
}
