// Runs wrk (one thread, pinned to the load core) and reads its summary.
import { CORES, pinned } from "./proc.ts";

export interface WrkOptions {
  url: string;
  connections: number;
  seconds: number;
  /** A Lua script (request generation, POST bodies). */
  script?: string;
  env?: Record<string, string>;
  core?: number;
}

export interface WrkResult {
  requestsPerSecond: number;
  requests: number;
  /** Answers outside 2xx/3xx (the quota benchmark expects all of them to be). */
  non2xx: number;
  socketErrors: number;
  /** Latency percentiles in milliseconds, from wrk's --latency distribution. */
  p50Ms: number;
  p99Ms: number;
}

export function wrkArgv(wrk: string, options: WrkOptions): string[] {
  return [
    wrk,
    "-t1",
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    "--latency",
    ...(options.script ? ["-s", options.script] : []),
    options.url,
  ];
}

export async function runWrk(wrk: string, options: WrkOptions): Promise<WrkResult> {
  const argv = pinned(options.core ?? CORES.load, wrkArgv(wrk, options));
  const proc = Bun.spawn(argv, { env: { ...process.env, ...options.env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`wrk exited with ${code}: ${err.trim() || out.trim()}`);
  return parseWrk(out);
}

export function parseWrk(out: string): WrkResult {
  const number = (re: RegExp) => {
    const match = re.exec(out);
    if (!match) throw new Error(`wrk output lacks ${re}: ${out}`);
    return Number(match[1]);
  };
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/),
    requests: number(/(\d+) requests in/),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    socketErrors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    p50Ms: percentile(out, "50"),
    p99Ms: percentile(out, "99"),
  };
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function percentile(out: string, p: string): number {
  const match = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(out);
  if (!match) throw new Error(`wrk output lacks the ${p}% latency: ${out}`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

/**
 * Measures two subjects `runs` times after a warm-up of each (`warmupSeconds`, none when 0),
 * alternating which goes first so neither always runs on a warmer (or busier) machine. Returns the
 * results of each, run by run.
 */
export async function alternating<T>(
  runs: number,
  warmupSeconds: number,
  log: (run: number) => void,
  first: (seconds?: number) => Promise<T>,
  second: (seconds?: number) => Promise<T>,
): Promise<[T[], T[]]> {
  const [a, b] = await rotating(runs, warmupSeconds, log, [first, second]);
  return [a!, b!];
}

/** As `alternating`, for any number of subjects: run r starts with subject r mod n. */
export async function rotating<T>(
  runs: number,
  warmupSeconds: number,
  log: (run: number) => void,
  subjects: ((seconds?: number) => Promise<T>)[],
): Promise<T[][]> {
  if (warmupSeconds > 0) for (const subject of subjects) await subject(warmupSeconds);
  const results: T[][] = subjects.map(() => []);
  for (let r = 0; r < runs; r++) {
    log(r);
    for (let k = 0; k < subjects.length; k++) {
      const i = (r + k) % subjects.length;
      results[i]!.push(await subjects[i]!());
    }
  }
  return results;
}
