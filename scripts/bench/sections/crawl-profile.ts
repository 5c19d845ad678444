// Where `genapi crawl`'s time goes on the bench site, against wget2 fetching each page
// once: the site served as the crawl sections serve it (fixtures/site-server.ts, nginx on the load core), the
// crawlers on the server core. The crawl section runs it on its first site (its tables go into
// BENCHMARKS.md); run alone, it prints the same tables:
//
//   bun scripts/bench/sections/crawl-profile.ts --binary dist/genapi [--pages 10000] [--runs 3] [--wget2-threads 8]
//
// Two measurements, alternating run by run:
// - the executable and wget2, unprofiled: CPU of each of their threads (/proc/PID/task/*/stat, user
//   and system apart, sampled every 10 ms; a thread's last sample is its total), the main thread's
//   time on a core, runnable and waiting for one, and asleep (schedstat), page faults and context
//   switches;
// - `bun --cpu-prof src/main.ts crawl ...` (the sources, same engine): JSC's samples of the JS
//   thread, each put in the phase of the first genapi source file on its stack (native callees,
//   such as a socket write, count for the genapi code that called them; two of them, Bun.gc and the
//   page's TextDecoder.decode, are phases of their own), so the shares add up to the JS thread's
//   sampled time.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { CORES, pinned, run, settlesWithin } from "../harness/proc.ts";
import { renderTable } from "../harness/report.ts";
import { missing, row, summarize, type Row, type Table } from "../harness/results.ts";
import { BUN, ROOT } from "../harness/servers.ts";
import { generateSite } from "../fixtures/site.ts";
import { serveSite } from "../fixtures/site-server.ts";
import { prepareTools } from "../harness/tools.ts";

/** Phases by source file under src/, first match wins. */
const PHASES: [RegExp, string][] = [
  [/crawler\/html\/tag-scanner\.ts$/, "tag scanner (html/tag-scanner.ts)"],
  [/crawler\/html\//, "page extraction around the scanner (html/links.ts, directives.ts)"],
  [/crawler\/net\/(http-client\.ts$|http1\/)/, "HTTP client (net/http-client.ts, net/http1/), its socket writes included"],
  [/crawler\/net\//, "fetch path around the client (net/: guard, hops, body, headers, request)"],
  [/crawler\/url\//, "URL normalisation (url/)"],
  [/crawler\/(state|filter|exclusions|page-budget)\.ts$/, "crawl state, filter and budgets"],
  [/crawler\/engine\.ts$/, "engine loop (engine.ts)"],
  [/crawler\/robots\//, "robots.txt"],
  [/crawler\/output\//, "sitemap writing (output/)"],
  [/commands\/|cli\/|main\.ts$|cli\.ts$|config\//, "command line (flags, output file)"],
];

const MAIN = "main thread";
const GONE = "threads gone between samples";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface ThreadTimes {
  /** Thread name (comm) -> [user s, system s], summed over threads of that name. */
  byName: Map<string, [number, number]>;
  wallSeconds: number;
  /** The main thread's seconds on a core and runnable but waiting for one (schedstat). */
  sched: { onCpu: number; waiting: number };
  /** Minor page faults of the process (its last sample) and context switches (wait4). */
  minorFaults: number;
  switches: { voluntary: number; involuntary: number };
}

export interface ProfileOptions {
  /** The site's origin and size: every crawl must fetch all of its pages. */
  url: string;
  pages: number;
  binary: string;
  /** wget2's command (installed or not) and its thread count; undefined: genapi alone. */
  wget2?: { argv: string[]; threads: number };
  runs: number;
  /** A directory to work in (sitemaps, profiles). */
  dir: string;
  /** µs between JSC's samples. */
  intervalUs?: number;
  log: (line: string) => void;
}

/** The profile's two tables: CPU by thread (genapi and wget2), and genapi's JS thread by phase. */
export async function profileCrawl(options: ProfileOptions): Promise<Table[]> {
  const { runs, pages, log } = options;
  const genapi: ThreadTimes[] = [];
  const wget2: ThreadTimes[] = [];
  const phases: Map<string, number>[] = [];
  const functions: Map<string, number>[] = [];
  const loads = [loadavg()[0]!];
  for (let r = 0; r < runs; r++) {
    log(`profile ${pages}: run ${r + 1}/${runs}: genapi crawl, threads`);
    genapi.push(await threadTimes(options, "genapi"));
    if (options.wget2) {
      log(`profile ${pages}: run ${r + 1}/${runs}: wget2, threads`);
      wget2.push(await threadTimes(options, "wget2"));
    }
    log(`profile ${pages}: run ${r + 1}/${runs}: bun --cpu-prof src/main.ts crawl`);
    const profile = await profiled(options, r);
    phases.push(profile.phases);
    functions.push(profile.functions);
    loads.push(loadavg()[0]!);
  }
  const load = `load average ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}`;
  const perPage = (seconds: number) => (seconds / pages) * 1000;
  const threadRows = (label: string, list: ThreadTimes[]): Row[] => {
    const totals = list.map((t) => [...t.byName.values()].reduce((a, [u, s]) => a + u + s, 0));
    const names = [...new Set(list.flatMap((t) => [...t.byName.keys()]))].sort((a, b) =>
      a === MAIN ? -1 : b === MAIN ? 1 : a.localeCompare(b),
    );
    const rows = names.flatMap((name) => {
      const get = (t: ThreadTimes) => t.byName.get(name) ?? [0, 0];
      const share = list.map((t, i) => ((get(t)[0] + get(t)[1]) / totals[i]!) * 100);
      if (summarize(share)!.median < 0.5) return [];
      return [
        row(`${label}: ${name}`, {
          "user ms a page": summarize(list.map((t) => perPage(get(t)[0]))),
          "system ms a page": summarize(list.map((t) => perPage(get(t)[1]))),
          "% of the process": summarize(share),
        }),
      ];
    });
    const sched = (f: (t: ThreadTimes) => number) => summarize(list.map((t) => (f(t) / t.wallSeconds) * 100))!.median.toFixed(0);
    const per = (f: (t: ThreadTimes) => number) => summarize(list.map((t) => f(t) / pages))!.median.toFixed(2);
    rows.push(
      row(
        `${label}: whole process`,
        { "CPU ms a page": summarize(totals.map(perPage)) },
        {
          note: `main thread on a core ${sched((t) => t.sched.onCpu)} % of the wall time, runnable but waiting for the core ${sched((t) => t.sched.waiting)} %, asleep (waiting for the network or another thread) ${sched((t) => t.wallSeconds - t.sched.onCpu - t.sched.waiting)} %; a page: ${per((t) => t.minorFaults)} minor page faults, ${per((t) => t.switches.voluntary)} voluntary and ${per((t) => t.switches.involuntary)} involuntary context switches`,
        },
      ),
    );
    return rows;
  };
  const wget2Label = options.wget2 ? `wget2, one GET a page, ${options.wget2.threads} threads` : "wget2";
  const threads: Table = {
    title: `Where the CPU goes: genapi crawl and wget2, ${pages.toLocaleString("en-US")} pages, by thread`,
    columns: ["user ms a page", "system ms a page", "% of the process", "CPU ms a page"],
    rows: [
      ...threadRows("genapi crawl", genapi),
      ...(options.wget2 ? threadRows(wget2Label, wget2) : [missing("wget2", "not installed", "not installed")]),
    ],
    notes: [
      `${runs} alternating run${runs === 1 ? "" : "s"} of each (${load}): \`taskset -c ${CORES.server} genapi crawl $SITE/ --output $OUT --json --quiet\` and \`wget2 --delete-after --recursive --level=0 --max-threads=${options.wget2?.threads ?? "N"} --no-parent --no-directories --quiet $SITE/\`, unprofiled. CPU by thread from /proc/PID/task/*/stat every 10 ms (a thread's last sample is its total; JITWorker: JavaScriptCore's compiler threads, mi-scavenger: the allocator returning memory; "${GONE}": wait4's total less the samples); the main thread's states from its schedstat over the wall time, exec to exit.`,
      "Read the states with the load average: on a quiet machine, time runnable but waiting for the core is near 0, and a crawler that sleeps most of the time waits for its server, not for its own work.",
    ],
  };
  const shares = (maps: Map<string, number>[], key: string) =>
    maps.map((m) => ((m.get(key) ?? 0) / [...m.values()].reduce((a, b) => a + b, 0)) * 100);
  const median = (xs: number[]) => summarize(xs)!.median;
  const byShare = (maps: Map<string, number>[]) =>
    [...new Set(maps.flatMap((m) => [...m.keys()]))].sort((a, b) => median(shares(maps, b)) - median(shares(maps, a)));
  const samples = phases.map((m) => [...m.values()].reduce((a, b) => a + b, 0));
  const top = byShare(functions)
    .slice(0, 12)
    .map((f) => `${f} ${median(shares(functions, f)).toFixed(1)} %`);
  const byPhase: Table = {
    title: `Where genapi's JS thread goes, ${pages.toLocaleString("en-US")} pages, by phase`,
    columns: ["% of the JS thread's samples"],
    rows: byShare(phases)
      .filter((p) => median(shares(phases, p)) >= 0.3)
      .map((p) => row(p, { "% of the JS thread's samples": summarize(shares(phases, p)) })),
    notes: [
      `\`bun --cpu-prof --cpu-prof-interval=${options.intervalUs ?? 500} src/main.ts crawl $SITE/ ...\` (the sources: same engine, no bytecode), ${runs} run${runs === 1 ? "" : "s"}, ${summarize(samples)!.median.toFixed(0)} samples a run. Each sample counts for the first genapi source file on its stack (so a native call counts for the genapi code that called it), except Bun.gc and the page's TextDecoder.decode, phases of their own.`,
      `Functions with the most samples of their own (median share): ${top.join("; ")}.`,
    ],
  };
  return [threads, byPhase];
}

/** One crawl by `genapi crawl` (the executable) or wget2, its threads' CPU sampled from /proc until it exits. */
async function threadTimes(options: ProfileOptions, subject: "genapi" | "wget2"): Promise<ThreadTimes> {
  const { url, dir, pages } = options;
  const argv =
    subject === "genapi"
      ? [options.binary, "crawl", url, "--output", join(dir, "profile-sitemap.xml"), "--json", "--quiet"]
      : [
          ...options.wget2!.argv,
          "--delete-after",
          "--recursive",
          "--level=0",
          `--max-threads=${options.wget2!.threads}`,
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
  while (!done) {
    for (const tid of readdirSafe(`/proc/${proc.pid}/task`)) {
      const stat = readSafe(`/proc/${proc.pid}/task/${tid}/stat`);
      if (stat === undefined) continue;
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      last.set(tid, { name, user: Number(fields[11]) / TICKS, system: Number(fields[12]) / TICKS });
    }
    const processStat = readSafe(`/proc/${proc.pid}/stat`);
    if (processStat) minorFaults = Number(processStat.slice(processStat.lastIndexOf(")") + 2).split(" ")[7]);
    const schedstat = readSafe(`/proc/${proc.pid}/task/${proc.pid}/schedstat`)?.split(" ");
    if (schedstat) sched = { onCpu: Number(schedstat[0]) / 1e9, waiting: Number(schedstat[1]) / 1e9 };
    await Bun.sleep(10);
  }
  const wallSeconds = (performance.now() - begin) / 1000;
  const code = await proc.exited;
  if (code !== 0) throw new Error(`${subject} exited with ${code}: ${(await stderr).slice(0, 300)}`);
  if (subject === "genapi") {
    const report = JSON.parse((await stderr).trim().split("\n").at(-1)!) as { pages_crawled: number };
    if (report.pages_crawled !== pages) throw new Error(`genapi crawl fetched ${report.pages_crawled} of ${pages} pages`);
  }
  // The whole process from wait4, so that threads gone between samples are counted too.
  const usage = proc.resourceUsage()!;
  const byName = new Map<string, [number, number]>();
  for (const [tid, { name, user, system }] of last) {
    const key = tid === String(proc.pid) ? MAIN : subject === "wget2" ? "downloader threads" : name.replace(/\d+$/, "");
    const sum = byName.get(key) ?? [0, 0];
    byName.set(key, [sum[0] + user, sum[1] + system]);
  }
  const sampled = [...byName.values()].reduce((a, [u, s]) => a + u + s, 0);
  const total = (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1e6;
  byName.set(GONE, [Math.max(0, total - sampled), 0]);
  return { byName, wallSeconds, sched, minorFaults, switches: usage.contextSwitches };
}

const TICKS = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

/**
 * One crawl by `bun --cpu-prof src/main.ts crawl` (with `extraArgs`), its samples put in phases and
 * counted by function (name, source file and line). probes/link-report-cost.ts uses it too.
 */
export async function profiled(
  options: Pick<ProfileOptions, "url" | "dir" | "intervalUs">,
  r: number,
  extraArgs: string[] = [],
): Promise<{ phases: Map<string, number>; functions: Map<string, number> }> {
  const profDir = join(options.dir, `cpu-prof-${r}`);
  const argv = [
    BUN,
    "--cpu-prof",
    `--cpu-prof-dir=${profDir}`,
    `--cpu-prof-interval=${options.intervalUs ?? 500}`,
    join(ROOT, "src/main.ts"),
    "crawl",
    options.url,
    "--output",
    join(options.dir, "profile-sitemap-prof.xml"),
    "--quiet",
    ...extraArgs,
  ];
  const proc = Bun.spawn(pinned(CORES.server, argv), { cwd: ROOT, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const stderr = new Response(proc.stderr).text();
  if (!(await settlesWithin(proc.exited, 600_000))) proc.kill("SIGKILL");
  if ((await proc.exited) !== 0) throw new Error(`the profiled crawl failed: ${(await stderr).slice(0, 300)}`);
  const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
  if (file === undefined) throw new Error(`no .cpuprofile in ${profDir}`);
  const profile = JSON.parse(readFileSync(join(profDir, file), "utf8")) as { nodes: ProfileNode[]; samples: number[] };
  rmSync(profDir, { recursive: true, force: true });
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const src = join(ROOT, "src");
  const phaseOf = new Map<number, string>();
  const phase = (id: number): string => {
    const known = phaseOf.get(id);
    if (known !== undefined) return known;
    const { functionName, url } = byId.get(id)!.callFrame;
    let result: string | undefined;
    if (url.includes("/src/")) {
      const path = relative(src, url.replace(/^file:\/\//, ""));
      // Modules the command imports but a crawl never calls: their top level, evaluated at start-up.
      result = PHASES.find(([re]) => re.test(path))?.[1] ?? "start-up: other modules' top level";
    } else if (functionName === "(garbage collector)") result = "garbage collector";
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
    // calls when the process has grown by 32 MB (src/crawler/memory/collector.ts), and the UTF-8 decoding of each page before the scanner reads it.
    const p =
      url !== ""
        ? phase(id)
        : functionName === "gc"
          ? "forced collections (Bun.gc after 32 MB of growth)"
          : functionName === "decode"
            ? "page bytes decoded to a string (TextDecoder.decode)"
            : phase(id);
    phases.set(p, (phases.get(p) ?? 0) + 1);
    const where = url.includes("/src/")
      ? `${relative(src, url.replace(/^file:\/\//, ""))}:${lineNumber + 1}`
      : url === ""
        ? "native"
        : url.replace(/^.*node_modules\//, "");
    const key = `${functionName || "(anonymous)"} (${where})`;
    functions.set(key, (functions.get(key) ?? 0) + 1);
  }
  return { phases, functions };
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

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      binary: { type: "string" },
      pages: { type: "string", default: "10000" },
      runs: { type: "string", default: "3" },
      interval: { type: "string", default: "500" },
      "wget2-threads": { type: "string", default: "8" },
    },
  });
  if (values.binary === undefined)
    throw new Error("usage: crawl-profile.ts --binary EXECUTABLE [--pages N] [--runs N] [--wget2-threads N]");
  run(["taskset", "-a", "-p", "-c", String(CORES.load), String(process.pid)]);
  const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)} load ${loadavg()[0]!.toFixed(2)}] ${line}`);
  const dir = mkdtempSync("/tmp/genapi-crawl-profile-");
  chmodSync(dir, 0o755);
  const tools = prepareTools(false, log);
  const pages = Number(values.pages);
  log(`generating a site of ${pages} pages`);
  generateSite(join(dir, "site"), pages);
  const served = await serveSite({ workDir: dir, tools }, join(dir, "site"), "profile");
  try {
    log(`site served by ${served.server} at ${served.timing.url}`);
    const tables = await profileCrawl({
      url: `${served.timing.url}/`,
      pages,
      binary: values.binary,
      wget2: tools.wget2.argv ? { argv: tools.wget2.argv, threads: Number(values["wget2-threads"]) } : undefined,
      runs: Number(values.runs),
      dir,
      intervalUs: Number(values.interval),
      log,
    });
    console.log(tables.flatMap(renderTable).join("\n"));
  } finally {
    await served.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
