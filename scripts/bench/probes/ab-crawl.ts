// A/B of `genapi crawl` between executables, for a change that should not move the crawler's cost
// (a refactor): the bench's synthetic site served by nginx (as the crawl sections serve it), each
// executable crawling it in turn (rotating which goes first), pinned to the server core; the figure
// is the crawl's CPU ms a page (the child's user + system time ÷ pages), which the shared machine's
// other work disturbs far less than wall time.
//
//   bun scripts/bench/probes/ab-crawl.ts [--pages 10000] [--runs 6] NAME=EXECUTABLE ...
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { serveSite } from "../fixtures/site-server.ts";
import { generateSite } from "../fixtures/site.ts";
import { CORES, pinned } from "../harness/proc.ts";
import { summarize } from "../harness/results.ts";
import { prepareTools } from "../harness/tools.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { pages: { type: "string", default: "10000" }, runs: { type: "string", default: "6" } },
  allowPositionals: true,
});
const subjects = positionals.map((arg) => {
  const at = arg.indexOf("=");
  return at < 0 ? { name: basename(arg), path: arg } : { name: arg.slice(0, at), path: arg.slice(at + 1) };
});
if (subjects.length === 0) throw new Error("usage: ab-crawl.ts [--pages N] [--runs N] NAME=EXECUTABLE ...");
const pages = Number(values.pages);
const workDir = mkdtempSync(join(tmpdir(), "genapi-ab-crawl-"));
const log = (line: string) => console.error(line);
const tools = prepareTools(false, log);
const dir = join(workDir, "site");
generateSite(dir, pages);
const site = await serveSite({ tools, workDir }, dir, "ab");
const cpu: Record<string, number[]> = Object.fromEntries(subjects.map((s) => [s.name, []]));
try {
  for (let run = 0; run < Number(values.runs); run++) {
    const order = run % 2 === 0 ? subjects : [...subjects].reverse();
    for (const subject of order) {
      const proc = Bun.spawn(
        pinned(CORES.server, [subject.path, "crawl", `${site.timing.url}/`, "--quiet", "--json", "--max-pages", String(pages * 2)]),
        {
          stdout: "ignore",
          stderr: "pipe",
        },
      );
      const report = JSON.parse(await new Response(proc.stderr).text()) as { pages_crawled: number };
      await proc.exited;
      const usage = proc.resourceUsage()!;
      const ms = (Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1000;
      cpu[subject.name]!.push(ms / report.pages_crawled);
      log(`run ${run + 1} ${subject.name}: ${(ms / report.pages_crawled).toFixed(4)} CPU ms a page (${report.pages_crawled} pages)`);
    }
  }
  const base = summarize(cpu[subjects[0]!.name]!)!.median;
  for (const subject of subjects) {
    const s = summarize(cpu[subject.name]!)!;
    console.log(
      `${subject.name}: median ${s.median.toFixed(4)} CPU ms a page (${s.min.toFixed(4)}-${s.max.toFixed(4)}), ${(s.median / base).toFixed(3)}x ${subjects[0]!.name}`,
    );
  }
} finally {
  await site.stop();
  rmSync(workDir, { recursive: true, force: true });
}
