// POST /api/generate crawls one after another on one server, against `genapi crawl`: each
// executable serves the bench's synthetic site's crawl (served by nginx, as the crawl sections
// serve it) N times on one fresh server, pinned to the crawler core, then crawls it N times as
// `genapi crawl`; the figure is CPU ms a page of each crawl (the server's user + system time over
// the request; the command's whole process), so that the first crawl of a server (which pays the
// JIT's compilations, as every `genapi crawl` does) shows apart from the ones after it.
//
//   bun scripts/bench/probes/api-crawls.ts [--pages 10000] [--crawls 3] [--rounds 3] NAME=EXECUTABLE ...
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { probeSite } from "../fixtures/site-server.ts";
import { CORES, cpuSeconds, executables, pinned } from "../harness/proc.ts";
import { summarize } from "../harness/results.ts";
import { createKey, newDb, startGenapi } from "../harness/servers.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    pages: { type: "string", default: "10000" },
    crawls: { type: "string", default: "3" },
    rounds: { type: "string", default: "3" },
  },
  allowPositionals: true,
});
const subjects = executables(positionals, "api-crawls.ts [--pages N] [--crawls N] [--rounds N] NAME=EXECUTABLE ...");
const pages = Number(values.pages);
const crawls = Number(values.crawls);
const log = (line: string) => console.error(line);
const { workDir, site } = await probeSite("genapi-api-crawls-", pages, "api", log);
const url = `${site.timing.url}/`;
/** CPU ms a page, by subject, by crawl: "api 1", "api 2", ..., "cli". */
const figures: Record<string, Record<string, number[]>> = Object.fromEntries(subjects.map((s) => [s.name, {}]));
const add = (name: string, label: string, value: number) => {
  const rows = figures[name]!;
  rows[label] = [...(rows[label] ?? []), value];
};

try {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (let k = 0; k < subjects.length; k++) {
      const subject = subjects[(round + k) % subjects.length]!;
      const db = newDb(workDir);
      const key = createKey(subject.path, db, 1000);
      const server = await startGenapi(subject.path, workDir, ["--allow-private-targets", "--max-pages", String(pages + 10)], db);
      try {
        for (let n = 1; n <= crawls; n++) {
          const before = await cpuSeconds(server.pid);
          const res = await fetch(`${server.url}/api/generate`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": key },
            body: JSON.stringify({ url }),
          });
          const body = (await res.json()) as { data?: { pages_crawled: number } };
          if (res.status !== 200 || body.data === undefined) throw new Error(`${subject.name}: POST /api/generate answered ${res.status}`);
          const ms = ((await cpuSeconds(server.pid)) - before) * 1000;
          add(subject.name, `api ${n}`, ms / body.data.pages_crawled);
        }
      } finally {
        await server.stop();
      }
      const out = join(workDir, "sitemap.xml");
      const proc = Bun.spawn(
        pinned(CORES.server, [subject.path, "crawl", url, "--output", out, "--json", "--quiet", "--max-pages", String(pages + 10)]),
        {
          stdout: "ignore",
          stderr: "pipe",
        },
      );
      const report = JSON.parse(await new Response(proc.stderr).text()) as { pages_crawled: number };
      if ((await proc.exited) !== 0) throw new Error(`${subject.name}: genapi crawl failed`);
      const usage = proc.resourceUsage()!;
      add(subject.name, "cli", Number(usage.cpuTime.total) / 1000 / report.pages_crawled);
      log(
        `round ${round + 1} ${subject.name}: ${Object.entries(figures[subject.name]!)
          .map(([label, v]) => `${label} ${v.at(-1)!.toFixed(4)}`)
          .join(", ")}`,
      );
    }
  }
  for (const { name } of subjects) {
    const rows = figures[name]!;
    const cli = summarize(rows.cli!)!.median;
    for (const [label, values] of Object.entries(rows)) {
      const s = summarize(values)!;
      console.log(
        `${name} ${label}: median ${s.median.toFixed(4)} CPU ms a page (${s.min.toFixed(4)}-${s.max.toFixed(4)}), ${(s.median / cli).toFixed(3)}x the command`,
      );
    }
  }
} finally {
  await site.stop();
  rmSync(workDir, { recursive: true, force: true });
}
