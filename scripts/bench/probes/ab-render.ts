// A/B of rendered crawls between executables, for a change to the renderer (src/crawler/render/):
// the render section's single-page application (sections/render.ts: every route the same shell,
// whose script fetches its links) served by nginx as that section serves it, and for each
// executable in turn (rotating which goes first) a job of max_pages = the site's size with render
// "always" on `genapi serve --render-tabs N`, as the section runs it (not pinned: Chromium renders
// with both cores). The figure is the job's pages/s (pages crawled over started_at to finished_at);
// each executable after the first is also given as the median of its same-round ratios to the first.
//
//   bun scripts/bench/probes/ab-render.ts [--pages 150] [--tabs 1] [--rounds 3] NAME=EXECUTABLE ...
//
// A round of 150 pages at 1 tab takes about 80 s an executable: the section's 2,000 pages at 1 tab
// take 18 minutes, too long to repeat. Needs nginx and Chromium (Debian's; `.ci/run` installs
// Chromium, the bench installs nginx).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { serveSite } from "../fixtures/site-server.ts";
import { executables } from "../harness/proc.ts";
import { ratios, summarize } from "../harness/results.ts";
import { prepareTools } from "../harness/tools.ts";
import { jobRun, writeSite } from "../sections/render.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { pages: { type: "string", default: "150" }, tabs: { type: "string", default: "1" }, rounds: { type: "string", default: "3" } },
  allowPositionals: true,
});
const subjects = executables(positionals, "ab-render.ts [--pages N] [--tabs N] [--rounds N] NAME=EXECUTABLE ...");
const pages = Number(values.pages);
const log = (line: string) => console.error(line);
const workDir = mkdtempSync(join(tmpdir(), "genapi-ab-render-"));
const tools = prepareTools(false, log);
if (tools.nginx.argv === undefined) throw new Error("ab-render.ts needs nginx (Debian's nginx-light)");
const dir = join(workDir, "spa");
writeSite(dir, pages);
const served = await serveSite({ tools, workDir }, dir, "ab-render");
const rates: Record<string, number[]> = Object.fromEntries(subjects.map((s) => [s.name, []]));
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = subjects.map((_, k) => subjects[(round + k) % subjects.length]!);
    for (const subject of order) {
      const run = await jobRun(
        { workDir, binaries: { genapi: subject.path } },
        `${served.timing.url}/`,
        pages,
        ["--render-tabs", values.tabs],
        {
          render: "always",
        },
      );
      if (run.error !== undefined) throw new Error(`${subject.name}: ${run.error}`);
      if (run.listed !== pages) throw new Error(`${subject.name}: listed ${run.listed} of ${pages} pages`);
      rates[subject.name]!.push(run.pages / run.seconds);
      const restarts = run.browserRestarts ?? 0;
      const pss = (run.peak.pss / 2 ** 20).toFixed(0);
      log(
        `round ${round + 1} ${subject.name}: ${(run.pages / run.seconds).toFixed(3)} pages/s, ${restarts} browser restarts, peak PSS ${pss} MiB`,
      );
    }
  }
  const first = subjects[0]!.name;
  for (const { name } of subjects) {
    const s = summarize(rates[name]!)!;
    const same =
      name === first ? "" : `; same-round ratio to ${first} ${summarize(ratios(rates[name]!, rates[first]!))!.median.toFixed(3)}`;
    console.log(`${name}: ${values.tabs} tab(s), median ${s.median.toFixed(3)} pages/s (${s.min.toFixed(3)}-${s.max.toFixed(3)})${same}`);
  }
} finally {
  await served.stop();
  rmSync(workDir, { recursive: true, force: true });
}
