// Where `genapi crawl`'s time goes on the bench site (issue 22): the site served as the crawl
// sections serve it (site-server.ts, nginx on the load core), the crawler on the server core.
//
//   bun scripts/bench/crawl-profile.ts --binary dist/genapi [--pages 10000] [--runs 3] [--interval 500]
//
// Two measurements, alternating run by run:
// - the compiled executable, unprofiled: CPU of each of its threads (/proc/PID/task/*/stat, user and
//   system apart, sampled every 10 ms; a thread's last sample is its total) against the crawl's
//   duration from its --json report, so the main thread's idle share is what it did not use;
// - `bun --cpu-prof src/main.ts crawl ...` (the sources, same engine): JSC's samples of the JS
//   thread, each put in the phase of the first genapi source file on its stack (native callees,
//   such as TextDecoder or a socket write, count for the genapi code that called them), so the
//   shares add up to the JS thread's sampled time.
// Prints Markdown tables; notes/bench-profile.md section 9 has a run of it. Installs nothing.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { CORES, pinned, run, settlesWithin } from "./proc.ts";
import { summarize } from "./results.ts";
import { BUN, ROOT } from "./servers.ts";
import { generateSite } from "./site.ts";
import { serveSite } from "./site-server.ts";
import { prepareTools } from "./tools.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    binary: { type: "string" },
    pages: { type: "string", default: "10000" },
    runs: { type: "string", default: "3" },
    interval: { type: "string", default: "500" },
    wget2: { type: "string", default: "8" },
  },
});
if (values.binary === undefined) throw new Error("usage: crawl-profile.ts --binary EXECUTABLE [--pages N] [--runs N] [--interval µs]");
const binary = values.binary;
const pages = Number(values.pages);
const runs = Number(values.runs);
run(["taskset", "-a", "-p", "-c", String(CORES.load), String(process.pid)]);
const log = (line: string) => console.error(`[profile ${new Date().toISOString().slice(11, 19)} load ${loadavg()[0]!.toFixed(2)}] ${line}`);

/** Phases by source file under src/, first match wins. */
const PHASES: [RegExp, string][] = [
  [/crawler\/html\/tag-scanner\.ts$/, "tag scanner (html/tag-scanner.ts)"],
  [/crawler\/html\//, "page extraction around the scanner (html/links.ts, directives.ts)"],
  [/crawler\/net\/http-client\.ts$/, "HTTP client (net/http-client.ts)"],
  [/crawler\/net\//, "fetch path around the client (net/: guard, hops, body, headers, request)"],
  [/crawler\/url\//, "URL normalisation (url/)"],
  [/crawler\/(state|filter|exclusions|page-budget)\.ts$/, "crawl state, filter and budgets"],
  [/crawler\/engine\.ts$/, "engine loop (engine.ts)"],
  [/crawler\/robots\//, "robots.txt"],
  [/crawler\/output\//, "sitemap writing (output/)"],
  [/commands\/|cli\/|main\.ts$|cli\.ts$|config\//, "command line (flags, output file)"],
];

const MAIN = "main thread (genapi: the JS thread and its event loop)";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

interface ThreadTimes {
  /** Thread name (comm) -> [user s, system s], summed over threads of that name. */
  byName: Map<string, [number, number]>;
  /** The crawl's duration: genapi's --json report, wget2's wall time. */
  durationMs: number;
  wallSeconds: number;
  /** The main thread's seconds on a core and runnable but waiting for one (schedstat). */
  sched: { onCpu: number; waiting: number };
  /** Minor page faults of the process (its last sample) and context switches (wait4). */
  minorFaults: number;
  switches: { voluntary: number; involuntary: number };
}

type Subject = "genapi" | "wget2";
const GONE = "(not sampled: threads gone between samples)";

const dir = mkdtempSync("/tmp/genapi-crawl-profile-");
chmodSync(dir, 0o755);
const tools = prepareTools(false, log);
log(`generating a site of ${pages} pages`);
generateSite(join(dir, "site"), pages);
const served = await serveSite({ workDir: dir, tools }, join(dir, "site"), "profile");
const url = `${served.timing.url}/`;
log(`site served by ${served.server} at ${url}`);
const threadRuns: ThreadTimes[] = [];
const wget2Runs: ThreadTimes[] = [];
const phaseRuns: Map<string, number>[] = [];
const functionRuns: Map<string, number>[] = [];
try {
  for (let r = 0; r < runs; r++) {
    log(`run ${r + 1}/${runs}: compiled, threads`);
    threadRuns.push(await threadTimes("genapi"));
    log(`run ${r + 1}/${runs}: wget2, threads`);
    wget2Runs.push(await threadTimes("wget2"));
    log(`run ${r + 1}/${runs}: bun --cpu-prof`);
    const { phases, functions } = await profiled(r);
    phaseRuns.push(phases);
    functionRuns.push(functions);
  }
} finally {
  await served.stop();
  rmSync(dir, { recursive: true, force: true });
}
report();

/**
 * One crawl by `genapi crawl` (the executable) or wget2, its threads' CPU sampled from /proc until it
 * exits, and the main thread's schedstat: time on a core, time runnable but waiting for one.
 */
async function threadTimes(subject: Subject): Promise<ThreadTimes> {
  const argv =
    subject === "genapi"
      ? [binary, "crawl", url, "--output", join(dir, "sitemap.xml"), "--json", "--quiet"]
      : [
          "wget2",
          "--delete-after",
          "--recursive",
          "--level=0",
          `--max-threads=${values.wget2}`,
          "--no-parent",
          "--no-directories",
          "--quiet",
          url,
        ];
  const begin = performance.now();
  const proc = Bun.spawn(pinned(CORES.server, argv), { cwd: dir, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const stderr = new Response(proc.stderr).text();
  const last = new Map<string, { name: string; user: number; system: number }>();
  let sched = { onCpu: 0, waiting: 0 };
  let minorFaults = 0;
  let done = false;
  void proc.exited.then(() => (done = true));
  const ticks = Number(run(["getconf", "CLK_TCK"])) || 100;
  while (!done) {
    for (const tid of readdirSafe(`/proc/${proc.pid}/task`)) {
      const stat = readSafe(`/proc/${proc.pid}/task/${tid}/stat`);
      if (stat === undefined) continue;
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      last.set(tid, { name, user: Number(fields[11]) / ticks, system: Number(fields[12]) / ticks });
    }
    const processStat = readSafe(`/proc/${proc.pid}/stat`);
    if (processStat) minorFaults = Number(processStat.slice(processStat.lastIndexOf(")") + 2).split(" ")[7]);
    const schedstat = readSafe(`/proc/${proc.pid}/task/${proc.pid}/schedstat`)?.split(" ");
    if (schedstat) sched = { onCpu: Number(schedstat[0]) / 1e9, waiting: Number(schedstat[1]) / 1e9 };
    await Bun.sleep(10);
  }
  const wallSeconds = (performance.now() - begin) / 1000;
  const code = await proc.exited;
  if (code !== 0) throw new Error(`${subject} exited with ${code}: ${await stderr}`);
  let durationMs = wallSeconds * 1000;
  if (subject === "genapi") {
    const report = JSON.parse((await stderr).trim().split("\n").at(-1)!) as { pages_crawled: number; duration_ms: number };
    if (report.pages_crawled !== pages) throw new Error(`crawled ${report.pages_crawled} of ${pages} pages`);
    durationMs = report.duration_ms;
  }
  // The whole process from wait4, so the threads that exited between samples are counted too.
  const usage = proc.resourceUsage()!;
  const byName = new Map<string, [number, number]>();
  for (const [tid, { name, user, system }] of last) {
    const key = tid === String(proc.pid) ? MAIN : subject === "wget2" ? "other threads (wget2's downloaders)" : name.replace(/\d+$/, "#");
    const sum = byName.get(key) ?? [0, 0];
    byName.set(key, [sum[0] + user, sum[1] + system]);
  }
  const sampled = [...byName.values()].reduce((a, [u, s]) => a + u + s, 0);
  const total = (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1e6;
  byName.set(GONE, [Math.max(0, total - sampled), 0]);
  return { byName, durationMs, wallSeconds, sched, minorFaults, switches: usage.contextSwitches };
}

/** One crawl by `bun --cpu-prof src/main.ts crawl`, its samples put in phases. */
async function profiled(r: number): Promise<{ phases: Map<string, number>; functions: Map<string, number> }> {
  const profDir = join(dir, `prof-${r}`);
  const argv = [
    BUN,
    "--cpu-prof",
    `--cpu-prof-dir=${profDir}`,
    `--cpu-prof-interval=${values.interval}`,
    join(ROOT, "src/main.ts"),
    "crawl",
    url,
    "--output",
    join(dir, "sitemap-prof.xml"),
    "--quiet",
  ];
  const proc = Bun.spawn(pinned(CORES.server, argv), { cwd: ROOT, stdin: "ignore", stdout: "ignore", stderr: "inherit" });
  if (!(await settlesWithin(proc.exited, 600_000))) proc.kill("SIGKILL");
  if ((await proc.exited) !== 0) throw new Error("the profiled crawl failed");
  const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
  if (file === undefined) throw new Error(`no .cpuprofile in ${profDir}`);
  const profile = JSON.parse(readFileSync(join(profDir, file), "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const phaseOf = new Map<number, string>();
  const phase = (id: number): string => {
    const known = phaseOf.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const { functionName, url } = node.callFrame;
    let result: string | undefined;
    if (url.includes("/src/")) {
      const path = relative(join(ROOT, "src"), url.replace(/^file:\/\//, ""));
      // Modules the command imports but a crawl never calls: their top level, evaluated at start-up.
      result = PHASES.find(([re]) => re.test(path))?.[1] ?? "start-up: other modules' top level";
    } else if (functionName === "(garbage collector)") result = "garbage collector (JS thread)";
    else if (functionName === "(idle)") result = "idle (JS thread waiting)";
    else if (functionName === "(program)" || functionName === "(root)") result = "runtime outside JS frames";
    const up = parent.get(id);
    result ??= up === undefined ? "runtime outside JS frames" : phase(up);
    phaseOf.set(id, result);
    return result;
  };
  const phases = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const id of profile.samples) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    // Two native calls are phases of their own, not their caller's: Bun.gc(true), which the engine
    // calls every 5,000 pages, and the UTF-8 decoding of each page before the scanner reads it.
    const p =
      url !== ""
        ? phase(id)
        : functionName === "gc"
          ? "forced collections (Bun.gc every 5,000 pages)"
          : functionName === "decode"
            ? "page bytes decoded to a string (TextDecoder.decode)"
            : phase(id);
    phases.set(p, (phases.get(p) ?? 0) + 1);
    const where = url.includes("/src/")
      ? `${relative(join(ROOT, "src"), url.replace(/^file:\/\//, ""))}:${lineNumber + 1}`
      : url === ""
        ? `native, under ${p}`
        : url.replace(/^.*node_modules\//, "");
    const key = `${functionName || "(anonymous)"} (${where})`;
    functions.set(key, (functions.get(key) ?? 0) + 1);
  }
  return { phases, functions };
}

function report(): void {
  const median = (xs: number[]) => summarize(xs)!.median;
  const range = (xs: number[], digits: number) => {
    const s = summarize(xs)!;
    return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})`;
  };
  console.log(
    `${runs} runs, ${pages.toLocaleString("en-US")}-page site served by ${served.server}; load average now ${loadavg()[0]!.toFixed(2)}\n`,
  );
  threadTable("`genapi crawl` (the executable)", threadRuns);
  threadTable(`wget2, one GET a page, ${values.wget2} threads`, wget2Runs);
  console.log("Phases of `bun --cpu-prof src/main.ts crawl` (share of the JS thread's samples): median (range)\n");
  console.log("| phase | share |\n|---|---:|");
  const allPhases = [...new Set(phaseRuns.flatMap((p) => [...p.keys()]))];
  const shares = (maps: Map<string, number>[], key: string) =>
    maps.map((m) => (m.get(key) ?? 0) / [...m.values()].reduce((a, b) => a + b, 0));
  for (const p of allPhases.sort((a, b) => median(shares(phaseRuns, b)) - median(shares(phaseRuns, a)))) {
    const s = shares(phaseRuns, p).map((x) => x * 100);
    console.log(`| ${p} | ${range(s, 1)} % |`);
  }
  const samples = phaseRuns.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
  console.log(`\n${range(samples, 0)} samples a run, one every ${values.interval} µs of the JS thread.\n`);
  console.log("Top functions by self samples (share of the JS thread's samples, median over the runs)\n");
  console.log("| function | share |\n|---|---:|");
  const allFunctions = [...new Set(functionRuns.flatMap((m) => [...m.keys()]))];
  for (const f of allFunctions.sort((a, b) => median(shares(functionRuns, b)) - median(shares(functionRuns, a))).slice(0, 25)) {
    console.log(`| ${f.replaceAll("|", "\\|")} | ${(median(shares(functionRuns, f)) * 100).toFixed(1)} % |`);
  }
}

function threadTable(title: string, list: ThreadTimes[]): void {
  const median = (xs: number[]) => summarize(xs)!.median;
  const range = (xs: number[], digits: number) => {
    const s = summarize(xs)!;
    return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})`;
  };
  const perPage = (seconds: number) => (seconds / pages) * 1000;
  console.log(`${title}: CPU ms a page by thread, median (range)\n`);
  console.log("| thread | user | system | share of the process |\n|---|---:|---:|---:|");
  const totals = list.map((t) => [...t.byName.values()].reduce((a, [u, s]) => a + u + s, 0));
  const names = [...new Set(list.flatMap((t) => [...t.byName.keys()]))];
  for (const name of names.sort((a, b) => (a === MAIN ? -1 : b === MAIN ? 1 : a.localeCompare(b)))) {
    const user = list.map((t) => perPage(t.byName.get(name)?.[0] ?? 0));
    const system = list.map((t) => perPage(t.byName.get(name)?.[1] ?? 0));
    const share = list.map((t, i) => ((t.byName.get(name)?.[0] ?? 0) + (t.byName.get(name)?.[1] ?? 0)) / totals[i]!);
    if (median(share) < 0.005) continue;
    console.log(`| ${name} | ${range(user, 4)} | ${range(system, 4)} | ${(median(share) * 100).toFixed(1)} % |`);
  }
  console.log(`| whole process | | | ${range(totals.map(perPage), 4)} ms a page |`);
  const share = (f: (t: ThreadTimes) => number) =>
    range(
      list.map((t) => (f(t) / t.wallSeconds) * 100),
      0,
    );
  console.log(
    `\nDuration ${range(
      list.map((t) => t.durationMs),
      0,
    )} ms, wall from exec to exit ${range(
      list.map((t) => t.wallSeconds * 1000),
      0,
    )} ms. Of that wall time the main thread was on a core ${share((t) => t.sched.onCpu)} %, runnable but waiting for the core ${share((t) => t.sched.waiting)} %, asleep (waiting for the network or another thread) ${share((t) => t.wallSeconds - t.sched.onCpu - t.sched.waiting)} %. A page: ${range(
      list.map((t) => t.minorFaults / pages),
      2,
    )} minor page faults, ${range(
      list.map((t) => t.switches.voluntary / pages),
      2,
    )} voluntary and ${range(
      list.map((t) => t.switches.involuntary / pages),
      2,
    )} involuntary context switches (the process).\n`,
  );
}

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

function readSafe(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
