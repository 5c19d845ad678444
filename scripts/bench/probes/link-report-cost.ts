// The link report's cost alone, for a quick answer without the rest of `npm run bench`:
// `genapi crawl` of the crawl section's generated site (served as that section serves it,
// fixtures/site-server.ts) with and without `--link-report`, alternating which goes first, each pinned to the
// server core. The crawl section measures the same through POST /api/generate on 10,000 and
// 50,000 pages, with both ratios as targets; this prints one line per run and the ratios.
//
//   bun scripts/bench/probes/link-report-cost.ts --binary dist/genapi [--pages 10000] [--runs 6] [--profile]
//
// --profile adds, per variant, 3 runs of `bun --cpu-prof src/main.ts crawl` (the sources: the same
// engine) and prints the functions whose samples differ most between the two: where the extra goes.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { profiled } from "../sections/crawl-profile.ts";
import { CORES, pinned, run } from "../harness/proc.ts";
import { ratios, summarize } from "../harness/results.ts";
import { ROOT } from "../harness/servers.ts";
import { generateSite } from "../fixtures/site.ts";
import { serveSite } from "../fixtures/site-server.ts";
import { prepareTools } from "../harness/tools.ts";

interface Run {
  cpuMsPerPage: number;
  peakRssMb: number;
}

/** One `genapi crawl` of `url`, its CPU (user + system, every thread) a page and its peak RSS. */
async function crawl(argv: string[], url: string, dir: string, pages: number, report: boolean): Promise<Run> {
  const args = [...argv, "crawl", url, "--output", join(dir, "sitemap.xml"), "--quiet", "--max-pages", String(pages * 2)];
  if (report) args.push("--link-report", join(dir, "links.json"));
  const proc = Bun.spawn(pinned(CORES.server, args), { cwd: ROOT, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const stderr = await new Response(proc.stderr).text();
  if ((await proc.exited) !== 0) throw new Error(`genapi crawl failed: ${stderr.slice(0, 300)}`);
  const usage = proc.resourceUsage()!;
  const cpuMs = (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1000;
  // maxRSS is in bytes (getrusage gives KiB; Bun converts).
  return { cpuMsPerPage: cpuMs / pages, peakRssMb: usage.maxRSS / 1e6 };
}

/** The median of `values` as the bench reports medians (harness/results.ts). */
const median = (values: number[]) => summarize(values)!.median;

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      binary: { type: "string" },
      pages: { type: "string", default: "10000" },
      runs: { type: "string", default: "6" },
      profile: { type: "boolean", default: false },
    },
  });
  if (values.binary === undefined) throw new Error("usage: link-report-cost.ts --binary EXECUTABLE [--pages N] [--runs N] [--profile]");
  const pages = Number(values.pages);
  const runs = Number(values.runs);
  run(["taskset", "-a", "-p", "-c", String(CORES.load), String(process.pid)]);
  const dir = mkdtempSync("/tmp/genapi-link-report-cost-");
  chmodSync(dir, 0o755);
  generateSite(join(dir, "site"), pages);
  const served = await serveSite({ workDir: dir, tools: prepareTools(false, () => {}) }, join(dir, "site"), "cost");
  const url = `${served.timing.url}/`;
  console.log(`${pages.toLocaleString("en-US")} pages served by ${served.server}; load ${loadavg()[0]!.toFixed(1)} at the start`);
  try {
    const plain: Run[] = [];
    const withReport: Run[] = [];
    for (let r = 0; r < runs; r++) {
      // Alternating which goes first, so neither always follows the other's garbage or cache state.
      for (const report of r % 2 === 0 ? [false, true] : [true, false]) {
        const result = await crawl([values.binary], url, dir, pages, report);
        (report ? withReport : plain).push(result);
      }
      const [a, b] = [plain[r]!, withReport[r]!];
      console.log(
        `run ${r + 1}: CPU ms a page ${a.cpuMsPerPage.toFixed(3)} without, ${b.cpuMsPerPage.toFixed(3)} with (${(b.cpuMsPerPage / a.cpuMsPerPage).toFixed(3)}x); peak RSS MB ${a.peakRssMb.toFixed(0)} and ${b.peakRssMb.toFixed(0)}`,
      );
    }
    const cost = (pick: (result: Run) => number) => ratios(withReport.map(pick), plain.map(pick));
    const [cpu, rss] = [cost((r) => r.cpuMsPerPage), cost((r) => r.peakRssMb)];
    console.log(
      `with ÷ without, median of the runs: CPU a page ${median(cpu).toFixed(3)}x (medians ${median(withReport.map((x) => x.cpuMsPerPage)).toFixed(3)} vs ${median(plain.map((x) => x.cpuMsPerPage)).toFixed(3)} ms), peak RSS ${median(rss).toFixed(3)}x; goal 1.1x; load ${loadavg()[0]!.toFixed(1)} at the end`,
    );
    if (values.profile) {
      const total = (m: Map<string, number>) => [...m.values()].reduce((s, n) => s + n, 0);
      const sum = (into: Map<string, number>, from: Map<string, number>) => {
        for (const [k, n] of from) into.set(k, (into.get(k) ?? 0) + n);
      };
      const [a, b] = [new Map<string, number>(), new Map<string, number>()];
      for (let r = 0; r < 3; r++) {
        // The crawl's --max-pages default (10,000) is raised as for the runs above.
        const args = ["--max-pages", String(pages * 2)];
        sum(a, (await profiled({ url, dir }, r, args)).functions);
        sum(b, (await profiled({ url, dir }, r, [...args, "--link-report", join(dir, "links.json")])).functions);
      }
      console.log(
        `bun --cpu-prof, 3 runs each: ${total(a)} samples without, ${total(b)} with; the functions that differ most (with - without):`,
      );
      const keys = new Set([...a.keys(), ...b.keys()]);
      const diff = [...keys].map((k) => [k, (b.get(k) ?? 0) - (a.get(k) ?? 0)] as const).sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]));
      for (const [k, d] of diff.slice(0, 25)) console.log(`${String(d).padStart(7)}  ${k}`);
    }
  } finally {
    await served.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
