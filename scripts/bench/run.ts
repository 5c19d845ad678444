// `npm run bench`: every benchmark, one at a time (never two measurements at once on a
// 2-core machine), then BENCHMARKS.md. `--smoke` runs them all on tiny sizes once, installs
// nothing and writes its report elsewhere: the test suite runs it so the harness cannot rot.
//
//   bun scripts/bench/run.ts [--smoke] [--out FILE] [--json FILE] [--only a,b] [--runs N]
//                            [--sizes PAGES,PAGES] [--job-pages PAGES] [--job-pg URL]
//                            [--site-pages PAGES] [--site-big-pages PAGES] [--site-big-stores LIST]
//                            [--render-pages PAGES]
//                            [--binary PATH] [--keep] [--carry FILE]
// --only picks sections (scripts/bench/sections.ts: startup, password, quota, admission, crawl,
// crawl-cli, jobs, sites, politeness, link-report, render); --binary measures another genapi executable (e.g. a scratch build of a
// proposed change); --keep leaves the work directory; --carry takes the sections this run leaves
// out from an earlier run's --json file (a measuring run whose report holds every section writes it
// beside the report: docs/bench/results.json), marked in the report as carried over. --job-pages sizes the
// jobs section's big site (1,000,000 by default) and --job-pg names an empty PostgreSQL database for
// its PostgreSQL job (by default a throwaway cluster, as the tests start one); --site-pages and
// --site-big-pages size the sites section's sites (powers of ten: 100,000 and 1,000,000 by default), --site-big-stores
// picks the big site's stores (sqlite,postgresql by default); --render-pages sizes
// the render section's application (2,000 by default: about an hour at 1, 2 and 4 tabs).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { FULL_PLAN, SMOKE_PLAN, type Context } from "./harness/context.ts";
import { charts } from "./harness/charts.ts";
import { CORES, run } from "./harness/proc.ts";
import { renderReport } from "./harness/report.ts";
import type { BenchResults, Machine, SectionResult } from "./harness/results.ts";
import { SECTIONS, type SectionId } from "./sections.ts";
import { BUN, buildBinaries, ROOT } from "./harness/servers.ts";
import { prepareTools } from "./harness/tools.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    smoke: { type: "boolean", default: false },
    out: { type: "string" },
    json: { type: "string" },
    only: { type: "string" },
    runs: { type: "string" },
    sizes: { type: "string" },
    "job-pages": { type: "string" },
    "job-pg": { type: "string" },
    "site-pages": { type: "string" },
    "site-big-pages": { type: "string" },
    "site-big-stores": { type: "string" },
    "render-pages": { type: "string" },
    binary: { type: "string" },
    keep: { type: "boolean", default: false },
    carry: { type: "string" },
  },
});

const began = performance.now();
const log = (line: string) => console.error(`[bench ${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const plan = { ...(values.smoke ? SMOKE_PLAN : FULL_PLAN) };
if (values.runs !== undefined) plan.runs = Number(values.runs);
if (values.sizes !== undefined) plan.sitePages = values.sizes.split(",").map(Number);
if (values["job-pages"] !== undefined) plan.jobPages = Number(values["job-pages"]);
if (values["job-pg"] !== undefined) plan.jobPostgresUrl = values["job-pg"];
if (values["site-pages"] !== undefined) plan.sitesPages = Number(values["site-pages"]);
if (values["site-big-pages"] !== undefined) plan.sitesBigPages = Number(values["site-big-pages"]);
if (values["site-big-stores"] !== undefined) plan.sitesBigStores = values["site-big-stores"].split(",") as ("sqlite" | "postgresql")[];
if (values["render-pages"] !== undefined) plan.renderPages = Number(values["render-pages"]);
const only = (values.only?.split(",") ?? Object.keys(SECTIONS)) as SectionId[];
const workDir = mkdtempSync("/tmp/genapi-bench-");
// linkchecker, run as root, drops to "nobody", which must reach its output directory in here.
chmodSync(workDir, 0o755);
const nproc = Number(run(["nproc"]));
const loadBefore = loadavg()[0]!;
// The harness itself (polling, spawning) stays off the core of the server under test.
run(["taskset", "-a", "-p", "-c", String(CORES.load), String(process.pid)]);

try {
  const tools = prepareTools(!values.smoke, log);
  log("building the executables");
  const binaries = buildBinaries(workDir, values.binary);
  const ctx: Context = { plan, workDir, binaries, tools, log };
  const startedAt = new Date().toISOString();
  const sections: SectionResult[] = [];
  for (const id of only) {
    log(`${id}: starting`);
    const section = await SECTIONS[id](ctx).catch(
      (error: Error): SectionResult => ({
        id,
        title: id,
        tables: [],
        checks: [],
        targets: [],
        error: error.stack ?? error.message,
        seconds: 0,
      }),
    );
    if (section.error) log(`${id}: FAILED: ${section.error}`);
    sections.push(section);
  }
  let earlier: BenchResults | undefined;
  if (values.carry !== undefined) {
    earlier = JSON.parse(readFileSync(values.carry, "utf8")) as BenchResults;
    const carried = {
      startedAt: earlier.startedAt,
      runs: earlier.runs,
      loadBefore: earlier.machine.loadBefore,
      loadAfter: earlier.machine.loadAfter,
    };
    for (const section of earlier.sections) {
      if (!sections.some((s) => s.id === section.id)) sections.push({ ...section, carried: section.carried ?? carried });
    }
  }
  const carriedIds = new Set(sections.filter((s) => s.carried).map((s) => s.id));
  const results: BenchResults = {
    mode: values.smoke ? "smoke" : "full",
    startedAt,
    seconds: (performance.now() - began) / 1000,
    runs: plan.runs,
    machine: { ...machine(binaries.genapi), loadBefore, loadAfter: loadavg()[0]! },
    tools: Object.values(tools).map((tool) => ({
      label: tool.name,
      status: tool.argv ? "ok" : "not installed",
      cells: {},
      version: tool.version,
      note: tool.note,
    })),
    sections,
  };
  const out = values.out ?? (values.smoke ? join(workDir, "BENCHMARKS.md") : join(ROOT, "BENCHMARKS.md"));
  // Charts from the same figures, as SVG files beside the report (docs/bench/ in the repository).
  const chartRefs = charts(results).map((chart) => {
    const path = `docs/bench/${chart.file}`;
    mkdirSync(join(dirname(out), "docs/bench"), { recursive: true });
    writeFileSync(join(dirname(out), path), chart.svg);
    return { section: chart.section, path, title: chart.title };
  });
  // A carried section whose samples were not kept (charts need its series) keeps the charts it had.
  for (const ref of earlier?.charts ?? [])
    if (carriedIds.has(ref.section) && !chartRefs.some((c) => c.section === ref.section)) chartRefs.push(ref);
  results.charts = chartRefs;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, renderReport(results, chartRefs));
  // A measuring run whose report holds every section (all measured, or the rest carried) keeps its
  // figures beside it (docs/bench/results.json, committed with the report), so that a later partial
  // run can carry the sections it leaves out; a partial run without --carry (an A/B of one section)
  // writes none unless asked, rather than overwrite them with its one section.
  const whole = values.only === undefined || values.carry !== undefined;
  const json = values.json ?? (values.smoke || !whole ? undefined : join(dirname(out), "docs/bench/results.json"));
  if (json) {
    mkdirSync(dirname(json), { recursive: true });
    writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  }
  log(`wrote ${out} in ${results.seconds.toFixed(0)} s`);
  process.exitCode = sections.some((s) => s.error) ? 1 : 0;
} finally {
  if (!values.keep) rmSync(workDir, { recursive: true, force: true });
  else log(`kept ${workDir}`);
}

function machine(genapi: string): Omit<Machine, "loadBefore" | "loadAfter"> {
  return {
    nproc,
    cpuModel: cpus()[0]?.model.trim() || "unknown",
    kernel: run(["uname", "-sr"]),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    bun: run([BUN, "--version"]),
    genapi: run([genapi, "--version"]),
  };
}
