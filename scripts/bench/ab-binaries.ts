// A/B of two (or more) genapi executables on the bench's two headline paths, in one run: the crawl of
// the synthetic site by `genapi crawl` (pages/s and CPU ms a page) and GET /api.php under wrk
// (requests/s and server CPU µs a request). Rounds alternate which executable goes first; each
// round crawls once with every executable, then loads each one's /api.php once, so a drifting
// machine touches both alike. The ratios are per round (subject ÷ the first subject), then median
// and range. For a "no behaviour change" claim across a refactor (issue 21): build both ends with
// scripts/build.ts and run
//
//   bun scripts/bench/ab-binaries.ts [--runs 5] [--pages 10000] [--seconds 4] [--only crawl,password] \
//     before=/tmp/genapi-before.bin after=/tmp/genapi-after.bin
//
// The site is served as the crawl sections serve it (site-server.ts: nginx when installed, else
// static-server.ts) on the load core; the crawler and the API server run on the server core, wrk on
// the load core, as in the harness. A crawl's pages/s is genapi's own report (pages_crawled over
// duration_ms, from --json), its CPU the whole process's (wait4). Nothing is installed here.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { CORES, cpuSeconds, pinned, run, settlesWithin } from "./proc.ts";
import { ratios, summarize, type Summary } from "./results.ts";
import { startGenapi, type Server } from "./servers.ts";
import { generateSite } from "./site.ts";
import { serveSite, type ServedSite } from "./site-server.ts";
import { prepareTools } from "./tools.ts";
import { runWrk } from "./wrk.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    runs: { type: "string", default: "5" },
    pages: { type: "string", default: "10000" },
    seconds: { type: "string", default: "4" },
    connections: { type: "string", default: "64" },
    only: { type: "string", default: "crawl,password" },
  },
  allowPositionals: true,
});
const subjects = positionals.map((arg) => {
  const at = arg.indexOf("=");
  return at < 0 ? { name: basename(arg), path: arg } : { name: arg.slice(0, at), path: arg.slice(at + 1) };
});
if (subjects.length < 2) throw new Error("usage: ab-binaries.ts [--runs N] [--pages N] [--seconds S] NAME=EXECUTABLE NAME=EXECUTABLE ...");
const runs = Number(values.runs);
const pages = Number(values.pages);
const only = new Set(values.only.split(","));
// This process (polling, spawning) stays off the core under test, as run.ts does.
run(["taskset", "-a", "-p", "-c", String(CORES.load), String(process.pid)]);
const log = (line: string) => console.error(`[ab ${new Date().toISOString().slice(11, 19)} load ${loadavg()[0]!.toFixed(2)}] ${line}`);

interface CrawlMeasure {
  pagesPerSecond: number;
  cpuMsPerPage: number;
  pages: number;
}
interface PasswordMeasure {
  requestsPerSecond: number;
  cpuUsPerRequest: number;
  p99Ms: number;
}

const dir = mkdtempSync("/tmp/genapi-ab-binaries-");
const loads = [loadavg()[0]!];
const crawls: CrawlMeasure[][] = subjects.map(() => []);
const passwords: PasswordMeasure[][] = subjects.map(() => []);
let site: ServedSite | undefined;
const apis: Server[] = [];
try {
  if (only.has("crawl")) {
    log(`generating a site of ${pages} pages`);
    generateSite(join(dir, "site"), pages);
    chmodSync(dir, 0o755);
    const tools = prepareTools(false, log);
    site = await serveSite({ workDir: dir, tools }, join(dir, "site"), "ab");
    log(`site served by ${site.server} at ${site.timing.url}`);
  }
  if (only.has("password")) for (const { path } of subjects) apis.push(await startGenapi(path, dir));

  const crawl = async (binary: string): Promise<CrawlMeasure> => {
    const argv = [
      binary,
      "crawl",
      `${site!.timing.url}/`,
      "--output",
      join(dir, "sitemap.xml"),
      "--json",
      "--quiet",
      "--max-pages",
      "50000",
    ];
    const proc = Bun.spawn(pinned(CORES.server, argv), { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
    const stderr = new Response(proc.stderr).text();
    if (!(await settlesWithin(proc.exited, 600_000))) proc.kill("SIGKILL");
    const code = await proc.exited;
    const report =
      code === 0 ? (JSON.parse((await stderr).trim().split("\n").at(-1)!) as { pages_crawled: number; duration_ms: number }) : undefined;
    if (report?.pages_crawled !== pages) throw new Error(`${binary} crawl: exit ${code}, ${report?.pages_crawled} of ${pages} pages`);
    const cpu = Number(proc.resourceUsage()!.cpuTime.total) / 1e6;
    return { pagesPerSecond: report.pages_crawled / (report.duration_ms / 1000), cpuMsPerPage: (cpu / pages) * 1000, pages };
  };
  const password = async (server: Server, seconds: number): Promise<PasswordMeasure> => {
    const before = await cpuSeconds(server.pid);
    const wrk = await runWrk("wrk", { url: `${server.url}/api.php`, connections: Number(values.connections), seconds });
    if (wrk.non2xx + wrk.socketErrors > 0) throw new Error(`${server.argv[0]}: ${wrk.non2xx} non-2xx, ${wrk.socketErrors} socket errors`);
    return {
      requestsPerSecond: wrk.requestsPerSecond,
      cpuUsPerRequest: (((await cpuSeconds(server.pid)) - before) / wrk.requests) * 1e6,
      p99Ms: wrk.p99Ms,
    };
  };

  // One unmeasured crawl and a 1 s load of each, so that no executable is measured cold.
  for (const [i, { path }] of subjects.entries()) {
    if (only.has("crawl")) await crawl(path);
    if (only.has("password")) await password(apis[i]!, 1);
  }
  for (let r = 0; r < runs; r++) {
    const order = subjects.map((_, k) => (r + k) % subjects.length);
    log(`round ${r + 1}/${runs}: ${order.map((i) => subjects[i]!.name).join(", ")}`);
    if (only.has("crawl")) for (const i of order) crawls[i]!.push(await crawl(subjects[i]!.path));
    if (only.has("password")) for (const i of order) passwords[i]!.push(await password(apis[i]!, Number(values.seconds)));
    loads.push(loadavg()[0]!);
  }
} finally {
  for (const server of apis) await server.stop();
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
}

const show = (s: Summary | undefined, digits: number) =>
  s ? `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})` : "";
const vsFirst = (series: number[][], i: number) => (i === 0 ? "" : show(summarize(ratios(series[i]!, series[0]!)), 3));
console.log(
  `${runs} alternating rounds, ${pages.toLocaleString("en-US")}-page site served by ${site?.server ?? "nothing"}; load average (1 min) ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}; ratios per round against ${subjects[0]!.name}: median (range)\n`,
);
if (only.has("crawl")) {
  console.log(`| genapi crawl | pages/s | ÷ ${subjects[0]!.name} | CPU ms a page | ÷ ${subjects[0]!.name} |\n|---|---:|---:|---:|---:|`);
  subjects.forEach(({ name }, i) => {
    const rate = crawls.map((list) => list.map((m) => m.pagesPerSecond));
    const cpu = crawls.map((list) => list.map((m) => m.cpuMsPerPage));
    console.log(
      `| ${name} | ${show(summarize(rate[i]!), 0)} | ${vsFirst(rate, i)} | ${show(summarize(cpu[i]!), 3)} | ${vsFirst(cpu, i)} |`,
    );
  });
  console.log("");
}
if (only.has("password")) {
  console.log(
    `| GET /api.php, ${values.connections} connections, ${values.seconds} s | requests/s | ÷ ${subjects[0]!.name} | CPU µs a request | ÷ ${subjects[0]!.name} | p99 ms |\n|---|---:|---:|---:|---:|---:|`,
  );
  subjects.forEach(({ name }, i) => {
    const rate = passwords.map((list) => list.map((m) => m.requestsPerSecond));
    const cpu = passwords.map((list) => list.map((m) => m.cpuUsPerRequest));
    console.log(
      `| ${name} | ${show(summarize(rate[i]!), 0)} | ${vsFirst(rate, i)} | ${show(summarize(cpu[i]!), 1)} | ${vsFirst(cpu, i)} | ${show(summarize(passwords[i]!.map((m) => m.p99Ms)), 2)} |`,
    );
  });
}
