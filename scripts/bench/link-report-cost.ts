// The link report's cost alone (issue 24), without the rest of `npm run bench`: the crawl section's
// "genapi" and "genapi (link_report)" crawls of the generated site through POST /api/generate,
// alternating which goes first, or (--job) one job per variant over the jobs section's site. The
// full bench measures the same in its crawl and jobs sections; this is for a quick answer on a
// shared machine. Prints one line per run and the targets, then the figures as JSON.
//
//   bun scripts/bench/link-report-cost.ts [--pages 10000] [--runs 3] [--binary dist/genapi]
//   bun scripts/bench/link-report-cost.ts --job [--pages 100000] [--binary dist/genapi]
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Binaries } from "./servers.ts";
import { BUN, ROOT } from "./servers.ts";
import { type CrawlRun, genapiCrawler, LINK_REPORT, linkReportTargets, serveSite } from "./crawl.ts";
import { jobRun, withSite } from "./jobs.ts";
import { CORES, run } from "./proc.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    pages: { type: "string" },
    runs: { type: "string", default: "3" },
    binary: { type: "string" },
    job: { type: "boolean", default: false },
  },
});

const log = (line: string) => console.error(`[link-report-cost] ${line}`);
const workDir = mkdtempSync("/tmp/genapi-bench-links-");
run(["taskset", "-a", "-p", "-c", String(CORES.load), String(process.pid)]);
try {
  let genapi = values.binary;
  if (genapi === undefined) {
    genapi = join(workDir, "genapi");
    log("building genapi");
    run([BUN, "scripts/build.ts", "--outfile", genapi], { cwd: ROOT });
  }
  const ctx = { workDir, log, binaries: { genapi } as Binaries };
  if (values.job) await jobs(ctx, Number(values.pages ?? 100_000));
  else await crawls(ctx, Number(values.pages ?? 10_000), Number(values.runs));
} finally {
  rmSync(workDir, { recursive: true, force: true });
}

async function crawls(ctx: { workDir: string; log: typeof log; binaries: Binaries }, pages: number, runs: number) {
  const served = await serveSite(ctx, pages);
  const plain = genapiCrawler(ctx);
  const report = genapiCrawler(ctx, LINK_REPORT);
  const results = new Map<string, CrawlRun[]>([
    [plain.name, []],
    [report.name, []],
  ]);
  try {
    for (let r = 0; r < runs; r++) {
      for (const crawler of r % 2 === 0 ? [plain, report] : [report, plain]) {
        const result = await crawler.crawl(served.site, 600);
        results.get(crawler.name)!.push(result);
        const cpu = result.cpuSeconds === undefined ? "?" : ((result.cpuSeconds / result.pagesServed) * 1000).toFixed(3);
        const rss = result.peakRssBytes === undefined ? "?" : (result.peakRssBytes / 1e6).toFixed(1);
        log(
          `run ${r + 1}/${runs} ${crawler.name}: ${result.pagesServed} pages, ${result.pagesPerSecond.toFixed(0)} pages/s, ` +
            `${result.wallSeconds.toFixed(2)} s, ${cpu} CPU ms/page, peak RSS ${rss} MB${result.error ? `, ${result.error}` : ""}` +
            `${result.links ? `, ${result.links.broken.length} broken, ${result.links.redirects.length} redirects` : ""}`,
        );
      }
    }
  } finally {
    await served.stop();
  }
  const targets = linkReportTargets(`${pages.toLocaleString("en-US")} pages`, results.get(plain.name)!, results.get(report.name)!);
  for (const target of targets) log(`${target.label}: ${target.measured} (goal ${target.goal}) ${target.met ? "met" : "NOT met"}`);
  const strip = (list: CrawlRun[]) => list.map(({ urls: _, links: __, ...figures }) => figures);
  console.log(
    JSON.stringify({ pages, runs, plain: strip(results.get(plain.name)!), linkReport: strip(results.get(report.name)!), targets }, null, 2),
  );
}

async function jobs(ctx: { workDir: string; log: typeof log; binaries: Binaries }, pages: number) {
  const figures = await withSite(ctx, pages, async (url) => {
    const out: Record<string, Omit<Awaited<ReturnType<typeof jobRun>>, "samples">> = {};
    for (const [name, options] of [
      ["plain", {}],
      ["linkReport", { link_report: true }],
    ] as const) {
      ctx.log(`a job over the ${pages}-page site${name === "plain" ? "" : " with link_report"}`);
      const { samples: _, ...result } = await jobRun(ctx, url, pages, 7_200, options);
      ctx.log(
        `${name}: ${result.pages} pages, ${result.pagesPerSecond.toFixed(0)} pages/s, ${result.seconds.toFixed(1)} s, ` +
          `peak RSS ${result.peakRssMB.toFixed(1)} MB, ${result.listed} listed${result.links ? `, links ${JSON.stringify(result.links)}` : ""}` +
          `${result.error ? `, ${result.error}` : ""}`,
      );
      out[name] = result;
    }
    return out;
  });
  console.log(JSON.stringify({ pages, ...figures }, null, 2));
}
