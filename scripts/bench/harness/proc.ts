// Processes of the benchmark: pinned to a core, their peak memory and CPU time, loopback ports.
import { availableParallelism } from "node:os";
import { basename } from "node:path";

/** The two cores measurements use: the server under test on one, the load generator on the other. */
export const CORES = availableParallelism() >= 2 ? { server: 1, load: 0 } : { server: 0, load: 0 };

/** `taskset -c CORE ...argv`: taskset execs, so the process keeps the spawned pid. */
export function pinned(core: number, argv: string[]): string[] {
  return ["taskset", "-c", String(core), ...argv];
}

/** A loopback port that was free a moment ago. */
export function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** Peak resident set size so far (VmHWM), in bytes; undefined once the process is gone. */
export async function peakRss(pid: number): Promise<number | undefined> {
  const status = await Bun.file(`/proc/${pid}/status`)
    .text()
    .catch(() => "");
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}

/** User + system CPU seconds the process has used so far (its threads included). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await Bun.file(`/proc/${pid}/stat`).text();
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}
const clockTicks = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

export interface Usage {
  peakRssBytes?: number;
  cpuSeconds?: number;
}

/**
 * Samples a child's peak RSS and CPU time every `everyMs` while it runs (Bun's resourceUsage()
 * has reported other processes' maxRSS here). `stop()` takes a last sample, so calling it just
 * before killing a process gives exact figures; for a process that exits by itself they are
 * those of the last sample, at most `everyMs` before its exit.
 */
export function sampleUsage(pid: number, everyMs = 20): { stop: () => Promise<Usage> } {
  const usage: Usage = {};
  const sample = async () => {
    usage.peakRssBytes = (await peakRss(pid)) ?? usage.peakRssBytes;
    usage.cpuSeconds = (await cpuSeconds(pid).catch(() => undefined)) ?? usage.cpuSeconds;
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop: async () => {
      clearInterval(timer);
      await sample();
      return usage;
    },
  };
}

export function which(command: string): string | undefined {
  return Bun.which(command) ?? undefined;
}

/** Runs a command to completion; its stdout, trimmed. Throws with stderr when it fails. */
export function run(argv: string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): string {
  const proc = Bun.spawnSync(argv, { cwd: options.cwd, env: options.env ?? process.env, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) {
    throw new Error(`${argv.join(" ")} exited with ${proc.exitCode}: ${proc.stderr.toString().trim().split("\n").slice(-3).join(" / ")}`);
  }
  return proc.stdout.toString().trim();
}

/** Polls `url` until it answers 200; the time of that answer (performance.now()). */
export async function waitFor200(url: string, timeoutMs: number, exited?: Promise<number>): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let gone = false;
  void exited?.then(() => (gone = true));
  while (performance.now() < deadline && !gone) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return performance.now();
    } catch {}
    await Bun.sleep(1);
  }
  throw new Error(gone ? `${url}: the server exited before answering` : `${url} did not answer 200 within ${timeoutMs} ms`);
}

/** Waits for the first line of a file that `match` accepts (a child writing its log there). */
export async function waitForLine(
  path: string,
  match: (line: string) => boolean,
  timeoutMs: number,
  exited: Promise<number>,
): Promise<string> {
  const deadline = performance.now() + timeoutMs;
  let code: number | undefined;
  void exited.then((c) => (code = c));
  while (performance.now() < deadline) {
    const text = await Bun.file(path)
      .text()
      .catch(() => "");
    const line = text.split("\n").find(match);
    if (line !== undefined) return line;
    if (code !== undefined) throw new Error(`exited with ${code}: ${text.slice(0, 500)}`);
    await Bun.sleep(5);
  }
  throw new Error(`no ready line in ${path} within ${timeoutMs} ms`);
}

/** Whether `promise` settles within `ms`; the timer is cleared either way, so it never holds the process. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A probe's NAME=EXECUTABLE arguments (a bare path is named by its file name); none is an error showing `usage`. */
export function executables(args: string[], usage: string): { name: string; path: string }[] {
  const subjects = args.map((arg) => {
    const at = arg.indexOf("=");
    return at < 0 ? { name: basename(arg), path: arg } : { name: arg.slice(0, at), path: arg.slice(at + 1) };
  });
  if (subjects.length === 0) throw new Error(`usage: ${usage}`);
  return subjects;
}

/** A command line as the report shows it: temp paths and ports replaced by names. */
export function showCommand(argv: string[], names: Record<string, string>): string {
  let line = argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)).join(" ");
  for (const [value, name] of Object.entries(names).sort(([a], [b]) => b.length - a.length)) line = line.replaceAll(value, name);
  return line;
}
