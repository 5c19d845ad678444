// A/B of a site's unchanged run 2 between executables, for a change to what a re-crawl costs (the
// 304 path, the history, the crawl state, the store): the sites section's tree site served by
// nginx, run 1 once by the first executable on one SQLite store, then, in each round and for each
// executable in turn (rotating which goes first), a genapi process of that executable on that
// store, pinned to the server core, running run 2 twice: once to warm up, once measured. The figure
// is the measured run's CPU ms a page (the process's user + system time over the run ÷ pages), which
// the shared machine's other work moves far less than wall time; its wall time is given too.
// notes/sites.md names its rounds "ab-site".
//
// With --first, each process measures the sites section's goal instead: on a new store, a new
// site's run 1, then its run 2 straight after (no warm-up run). The figure is run 2's wall time ÷
// run 1's, the section's ratio; each run's CPU ms a page is summarised beside it.
//
//   bun scripts/bench/probes/ab-site-run.ts [--pages 100000] [--rounds 4] [--first] NAME=EXECUTABLE ...
//
// Each executable after the first is also given as the median of its same-round ratios to the first.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { serveTreeSite } from "../fixtures/tree-site.ts";
import { cpuSeconds, executables } from "../harness/proc.ts";
import { ratios, summarize } from "../harness/results.ts";
import { createKey, genapiApi, newDb, startGenapi } from "../harness/servers.ts";
import { prepareTools } from "../harness/tools.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    pages: { type: "string", default: "100000" },
    rounds: { type: "string", default: "4" },
    first: { type: "boolean", default: false },
  },
  allowPositionals: true,
});
const subjects = executables(positionals, "ab-site-run.ts [--pages N] [--rounds N] [--first] NAME=EXECUTABLE ...");
const pages = Number(values.pages);
const workDir = mkdtempSync(join(tmpdir(), "genapi-ab-site-run-"));
const log = (line: string) => console.error(line);
const tools = prepareTools(false, log);
const site = await serveTreeSite({ tools, workDir }, pages, "ab");
const db = newDb(workDir);
const serveArgs = ["--allow-private-targets", "--job-max-pages", String(pages + 10)];
const perSubject = () => Object.fromEntries(subjects.map((s) => [s.name, [] as number[]]));
/** Each round's figure: run 2's CPU ms a page, or with --first run 2's wall time ÷ run 1's. */
const figures = perSubject();
const wall = perSubject();
const run1Cpu = perSubject();
const run2Cpu = perSubject();

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
  let key = "";
  let siteId = "";
  // The site whose run 2s the rounds measure (--first: each round makes its own, on its own store).
  if (!values.first) {
    key = createKey(first.path, db, 1000);
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
      // --first: a store of its own, as each round of the sites section has (a shared one grows, and slows later run 1s).
      const store = values.first ? newDb(workDir) : db;
      const storeKey = values.first ? createKey(subject.path, store, 1000) : key;
      const genapi = await startGenapi(subject.path, workDir, serveArgs, store);
      try {
        const api = genapiApi(genapi, storeKey);
        /** Starts a run and measures it: CPU ms a page, wall s, the site's answers. */
        const measured = async (start: () => Promise<string>) => {
          await site.reset();
          const before = await cpuSeconds(genapi.pid);
          const job = await finished(api, await start());
          const ms = ((await cpuSeconds(genapi.pid)) - before) * 1000;
          const answers = await site.answers();
          const seconds = (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000;
          const perPage = ms / job.progress.pages_crawled;
          return {
            perPage,
            seconds,
            text: `${perPage.toFixed(4)} CPU ms a page, ${seconds} s, ${answers.notModified} x 304, ${answers.ok} x 200`,
          };
        };
        let id = siteId;
        let one = "";
        let firstSeconds = 0;
        if (values.first) {
          const run1 = await measured(async () => {
            const created = await api("/api/sites", { method: "POST", body: JSON.stringify({ url: `${site.url}/`, every_hours: null }) });
            id = created.id;
            return created.last_run.id as string;
          });
          firstSeconds = run1.seconds;
          one = `run 1 ${run1.text}; `;
          run1Cpu[subject.name]!.push(run1.perPage);
        }
        const run2 = async () => (await api(`/api/sites/${id}/runs`, { method: "POST" })).id as string;
        if (!values.first) await finished(api, await run2());
        const two = await measured(run2);
        figures[subject.name]!.push(values.first ? two.seconds / firstSeconds : two.perPage);
        run2Cpu[subject.name]!.push(two.perPage);
        wall[subject.name]!.push(two.seconds);
        log(
          `round ${round + 1} ${subject.name}: ${one}run 2 ${two.text}${values.first ? `; run 2 ÷ run 1 ${(two.seconds / firstSeconds).toFixed(3)}` : ""}`,
        );
      } finally {
        await genapi.stop();
        if (store !== db) rmSync(dirname(store), { recursive: true, force: true });
      }
    }
  }
  const base = subjects[0]!.name;
  /** A figure's median and range, and past the first executable its same-round ratio to it. */
  const line = (of: Record<string, number[]>, name: string, digits: number) => {
    const { median, min, max } = summarize(of[name]!)!;
    const vs = name === base ? "" : ` (÷ ${base} in the same round, median ${summarize(ratios(of[name]!, of[base]!))!.median.toFixed(3)}x)`;
    return `median ${median.toFixed(digits)} (${min.toFixed(digits)}-${max.toFixed(digits)})${vs}`;
  };
  for (const { name } of subjects) {
    const figure = values.first
      ? `run 2 ÷ run 1 wall time ${line(figures, name, 3)}; run 1 CPU ms a page ${line(run1Cpu, name, 4)}; run 2 ${line(run2Cpu, name, 4)}`
      : `run 2 CPU ms a page ${line(figures, name, 4)}`;
    console.log(`${name}: ${figure}; run 2 wall median ${summarize(wall[name]!)!.median.toFixed(2)} s`);
  }
} finally {
  await site.stop();
  rmSync(workDir, { recursive: true, force: true });
}
