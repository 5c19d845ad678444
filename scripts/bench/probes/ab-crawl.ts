// A/B of `genapi crawl` between executables, for a change that should not move the crawler's cost
// (a refactor): the bench's synthetic site served by nginx (as the crawl sections serve it), each
// executable crawling it in turn (rotating which goes first), pinned to the server core; the figure
// is the crawl's CPU ms a page (the child's user + system time ÷ pages), which the shared machine's
// other work disturbs far less than wall time.
//
//   bun scripts/bench/probes/ab-crawl.ts [--pages 10000] [--runs 6] [--wget2 8] NAME=EXECUTABLE ...
//
// With --wget2 N, wget2 fetching each page once with N threads (the crawl sections' command) takes
// its turn in every round too, and each executable's median is also given as a ratio to wget2's
// CPU a page, so that the ratio comes from one session on the shared machine.
//
// Each executable after the first is also given as the median of its same-round ratios to the
// first, with a bootstrap 95 % interval of that median (10,000 resamples of the rounds).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { probeSite } from "../fixtures/site-server.ts";
import { random } from "../fixtures/site.ts";
import { CORES, executables, pinned } from "../harness/proc.ts";
import { ratios, summarize } from "../harness/results.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { pages: { type: "string", default: "10000" }, runs: { type: "string", default: "6" }, wget2: { type: "string" } },
  allowPositionals: true,
});
const subjects = executables(positionals, "ab-crawl.ts [--pages N] [--runs N] NAME=EXECUTABLE ...");
const pages = Number(values.pages);
const log = (line: string) => console.error(line);
const { workDir, tools, site } = await probeSite("genapi-ab-crawl-", pages, "ab", log);
const wget2Threads = values.wget2 === undefined ? undefined : Number(values.wget2);
if (wget2Threads !== undefined && tools.wget2.argv === undefined) throw new Error("--wget2: wget2 is not installed");
const WGET2 = "wget2";
const names = [...subjects.map((s) => s.name), ...(wget2Threads === undefined ? [] : [WGET2])];
const cpu: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
const rss: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));

/** One crawl: the child's CPU ms and peak RSS (MB), and the pages it fetched. */
async function crawl(name: string): Promise<{ ms: number; rssMb: number; pages: number }> {
  const subject = subjects.find((s) => s.name === name);
  const argv =
    subject === undefined
      ? [
          ...tools.wget2.argv!,
          "--delete-after",
          "--recursive",
          "--level=0",
          `--max-threads=${wget2Threads}`,
          "--no-parent",
          "--no-directories",
          "--quiet",
          `${site.timing.url}/`,
        ]
      : // --output: past 50,000 URLs the sitemap is an index with its parts beside it, never on stdout.
        [
          subject.path,
          "crawl",
          `${site.timing.url}/`,
          "--output",
          join(workDir, "sitemap.xml"),
          "--quiet",
          "--json",
          "--max-pages",
          String(pages * 2),
        ];
  const proc = Bun.spawn(pinned(CORES.server, argv), { cwd: workDir, stdout: "ignore", stderr: "pipe" });
  const stderr = await new Response(proc.stderr).text();
  await proc.exited;
  // wget2 fetches every page of the site once (the crawl sections check it by nginx's request count).
  const crawled = subject === undefined ? pages : (JSON.parse(stderr) as { pages_crawled: number }).pages_crawled;
  const usage = proc.resourceUsage()!;
  return {
    ms: (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1000,
    rssMb: usage.maxRSS / 1024 / 1024,
    pages: crawled,
  };
}

try {
  for (let run = 0; run < Number(values.runs); run++) {
    const order = run % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const { ms, rssMb, pages: crawled } = await crawl(name);
      cpu[name]!.push(ms / crawled);
      rss[name]!.push(rssMb);
      log(`run ${run + 1} ${name}: ${(ms / crawled).toFixed(4)} CPU ms a page (${crawled} pages), peak RSS ${rssMb.toFixed(1)} MB`);
    }
  }
  const base = summarize(cpu[names[0]!]!)!.median;
  const wget2 = wget2Threads === undefined ? undefined : summarize(cpu[WGET2]!)!.median;
  for (const name of names) {
    const s = summarize(cpu[name]!)!;
    const r = summarize(rss[name]!)!;
    const vsWget2 = wget2 === undefined || name === WGET2 ? "" : `, ${(s.median / wget2).toFixed(2)}x wget2`;
    console.log(
      `${name}: median ${s.median.toFixed(4)} CPU ms a page (${s.min.toFixed(4)}-${s.max.toFixed(4)}), ${(s.median / base).toFixed(3)}x ${names[0]}${vsWget2}; peak RSS median ${r.median.toFixed(1)} MB (${r.min.toFixed(1)}-${r.max.toFixed(1)})`,
    );
  }
  for (const name of subjects.slice(1).map((s) => s.name)) {
    const same = ratios(cpu[name]!, cpu[names[0]!]!);
    const [low, high] = bootstrapMedian(same);
    const below = same.filter((r) => r < 1).length;
    console.log(
      `${name} / ${names[0]}: same-round ratio median ${summarize(same)!.median.toFixed(3)} (95 % ${low.toFixed(3)}-${high.toFixed(3)}), below 1 in ${below} of ${same.length} rounds`,
    );
  }
} finally {
  await site.stop();
  rmSync(workDir, { recursive: true, force: true });
}

/** A bootstrap 95 % interval of the median of `values` (resampled with a fixed-seed generator, so a run's figures can be checked). */
function bootstrapMedian(values: number[], resamples = 10_000): [number, number] {
  const next = random(0x9e3779b9);
  const medians: number[] = [];
  for (let i = 0; i < resamples; i++) {
    const sample = values.map(() => values[Math.floor(next() * values.length)]!);
    medians.push(summarize(sample)!.median);
  }
  medians.sort((a, b) => a - b);
  return [medians[Math.floor(resamples * 0.025)]!, medians[Math.ceil(resamples * 0.975) - 1]!];
}
