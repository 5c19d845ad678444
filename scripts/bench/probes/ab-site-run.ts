// A/B of a site's unchanged run 2 between executables, for a change to what a re-crawl costs (the
// 304 path, the history, the crawl state, the store): the sites section's tree site served by
// nginx, run 1 once by the first executable on one SQLite store, then, in each round and for each
// executable in turn (rotating which goes first), a genapi process of that executable on that
// store, pinned to the server core, running run 2 twice: once to warm up, once measured. The figure
// is the measured run's CPU ms a page (the process's user + system time over the run ÷ pages), which
// the shared machine's other work moves far less than wall time; its wall time is given too.
// notes/sites.md names its rounds "ab-site".
//
//   bun scripts/bench/probes/ab-site-run.ts [--pages 100000] [--rounds 4] NAME=EXECUTABLE ...
//
// Each executable after the first is also given as the median of its same-round ratios to the first.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { serveTreeSite } from "../fixtures/tree-site.ts";
import { cpuSeconds, executables } from "../harness/proc.ts";
import { ratios, summarize } from "../harness/results.ts";
import { createKey, genapiApi, newDb, startGenapi } from "../harness/servers.ts";
import { prepareTools } from "../harness/tools.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { pages: { type: "string", default: "100000" }, rounds: { type: "string", default: "4" } },
  allowPositionals: true,
});
const subjects = executables(positionals, "ab-site-run.ts [--pages N] [--rounds N] NAME=EXECUTABLE ...");
const pages = Number(values.pages);
const workDir = mkdtempSync(join(tmpdir(), "genapi-ab-site-run-"));
const log = (line: string) => console.error(line);
const tools = prepareTools(false, log);
const site = await serveTreeSite({ tools, workDir }, pages, "ab");
const db = newDb(workDir);
const serveArgs = ["--allow-private-targets", "--job-max-pages", String(pages + 10)];
const cpu: Record<string, number[]> = Object.fromEntries(subjects.map((s) => [s.name, []]));
const wall: Record<string, number[]> = Object.fromEntries(subjects.map((s) => [s.name, []]));

/** Waits for job `id` to end; throws unless it succeeded. */
async function finished(api: ReturnType<typeof genapiApi>, id: string): Promise<any> {
  for (;;) {
    const job = await api(`/api/jobs/${id}`);
    if (job.status === "succeeded") return job;
    if (job.status === "failed" || job.status === "cancelled") throw new Error(`run ${id} ${job.status}`);
    await Bun.sleep(100);
  }
}

try {
  const first = subjects[0]!;
  const key = createKey(first.path, db, 1000);
  let siteId: string;
  {
    const one = await startGenapi(first.path, workDir, serveArgs, db);
    try {
      const api = genapiApi(one, key);
      const created = await api("/api/sites", { method: "POST", body: JSON.stringify({ url: `${site.url}/`, every_hours: null }) });
      siteId = created.id;
      const job = await finished(api, created.last_run.id);
      log(`run 1 (${first.name}): ${(Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000} s`);
    } finally {
      await one.stop();
    }
  }
  for (let round = 0; round < Number(values.rounds); round++) {
    for (let k = 0; k < subjects.length; k++) {
      const subject = subjects[(round + k) % subjects.length]!;
      const genapi = await startGenapi(subject.path, workDir, serveArgs, db);
      try {
        const api = genapiApi(genapi, key);
        const run2 = async () => (await api(`/api/sites/${siteId}/runs`, { method: "POST" })).id as string;
        await finished(api, await run2());
        await site.reset();
        const before = await cpuSeconds(genapi.pid);
        const job = await finished(api, await run2());
        const ms = ((await cpuSeconds(genapi.pid)) - before) * 1000;
        const answers = await site.answers();
        const seconds = (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000;
        cpu[subject.name]!.push(ms / job.progress.pages_crawled);
        wall[subject.name]!.push(seconds);
        log(
          `round ${round + 1} ${subject.name}: ${(ms / job.progress.pages_crawled).toFixed(4)} CPU ms a page, ${seconds} s, ${answers.notModified} x 304, ${answers.ok} x 200`,
        );
      } finally {
        await genapi.stop();
      }
    }
  }
  const base = subjects[0]!.name;
  for (const { name } of subjects) {
    const c = summarize(cpu[name]!)!;
    const w = summarize(wall[name]!)!;
    const vs =
      name === base ? "" : `; ÷ ${base} in the same round, median ${summarize(ratios(cpu[name]!, cpu[base]!))!.median.toFixed(3)}x`;
    console.log(
      `${name}: run 2 CPU ms a page median ${c.median.toFixed(4)} (${c.min.toFixed(4)}-${c.max.toFixed(4)}), wall median ${w.median.toFixed(2)} s${vs}`,
    );
  }
} finally {
  await site.stop();
  rmSync(workDir, { recursive: true, force: true });
}
