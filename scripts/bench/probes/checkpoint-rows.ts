// What a crawl's checkpoints cost on SQLite (JobCrawlState.checkpoint): a store file opened as the
// server opens it, a job claimed, then N pages' rows written as a crawl of the sites section's tree
// site writes them: per page one URL done, one found (queued) and one entry listed, 500 pages a
// checkpoint (src/jobs/store-crawl-state.ts's flushPages). The figure is the CPU of the checkpoints, µs a
// page, and the store's size after them (its pages, WAL checkpointed). `--base DIR` runs another checkout's sources (its src/db/sqlite) in the same process,
// alternating, so that a change to the layout or the statements shows as a ratio.
//
//   bun scripts/bench/probes/checkpoint-rows.ts [--pages 100000] [--runs 6] [--base /tmp/other]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ratios, summarize } from "../harness/results.ts";

const { values } = parseArgs({
  options: { pages: { type: "string", default: "100000" }, runs: { type: "string", default: "6" }, base: { type: "string" } },
});
const pages = Number(values.pages);
const runs = Number(values.runs);
const BATCH = 500;
const here = resolve(import.meta.dir, "../../..");
const roots = values.base === undefined ? [here] : [here, resolve(values.base)];

/** CPU µs a page of one job's checkpoints, and the store's MB after them, with the sources at `root`. */
async function once(root: string): Promise<{ cpu: number; mb: number }> {
  const { openDatabase } = await import(`${root}/src/db/sqlite/database.ts`);
  const { sqliteMigrations } = await import(`${root}/src/db/sqlite/migrations.ts`);
  const { createSqliteJobStore } = await import(`${root}/src/db/sqlite/jobs.ts`);
  const { newJobId } = await import(`${root}/src/jobs/job-store.ts`);
  const { defaultCrawlOptions } = await import(`${root}/src/crawler/index.ts`);
  const dir = mkdtempSync(join(tmpdir(), "checkpoint-rows-"));
  try {
    const db = openDatabase(join(dir, "genapi.db"), sqliteMigrations);
    const direct = async <T>(fn: (d: typeof db) => T) => fn(db);
    const store = createSqliteJobStore({ read: direct, write: direct });
    const origin = "http://127.0.0.1:8080";
    const id = newJobId();
    const now = Date.now();
    await store.create(
      { id, keyId: 1, url: `${origin}/`, options: defaultCrawlOptions(pages), callbackUrl: null, callbackSecret: null, createdAt: "x" },
      100,
    );
    if ((await store.claim("bench", now, 600_000, "x"))?.id !== id) throw new Error("the job was not claimed");
    const facts = { url: `${origin}/`, truncated: false, pagesCrawled: 0, urlsListed: 0, queued: 0, excluded: {}, excludedExamples: {} };
    // The tree site's URLs ("/1/2/3/"), in the order a breadth-first crawl meets them.
    const url = (i: number) => `${origin}/${String(i).split("").join("/")}/`;
    let cpu = 0;
    for (let first = 1; first <= pages; first += BATCH) {
      const done: string[] = [];
      const discovered: { url: string; seq: number; depth: number }[] = [];
      const entries: { loc: string; lastmod: string | null; extra: string | null }[] = [];
      for (let i = first; i < first + BATCH; i++) {
        done.push(url(i));
        discovered.push({ url: url(i + BATCH), seq: i + BATCH, depth: 4 });
        entries.push({ loc: url(i), lastmod: "2026-11-28T10:00:00Z", extra: null });
      }
      const progress = { pages_crawled: first, pages_queued: BATCH, urls_listed: first, elapsed_ms: 1 };
      const start = process.cpuUsage();
      const held = await store.checkpoint(id, "bench", now, 600_000, { done, discovered, seen: [], entries, progress, crawl: facts });
      const spent = process.cpuUsage(start);
      if (!held) throw new Error("the lease was lost");
      cpu += spent.user + spent.system;
    }
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    const size = (pragma: string) => Object.values(db.query(`PRAGMA ${pragma}`).get() as object)[0] as number;
    const mb = (size("page_count") * size("page_size")) / 1e6;
    db.close();
    return { cpu: cpu / pages, mb };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const figures = roots.map(() => [] as number[]);
const sizes = roots.map(() => [] as number[]);
for (let run = 0; run < runs; run++)
  for (let k = 0; k < roots.length; k++) {
    const at = (run + k) % roots.length;
    const { cpu, mb } = await once(roots[at]!);
    figures[at]!.push(cpu);
    sizes[at]!.push(mb);
  }
roots.forEach((root, k) => {
  const { median, min, max } = summarize(figures[k]!)!;
  const vs = k === 0 ? "" : `; this checkout ÷ it, same run: median ${summarize(ratios(figures[0]!, figures[k]!))!.median.toFixed(3)}x`;
  const store = summarize(sizes[k]!)!.median.toFixed(1);
  console.log(
    `${root}: ${median.toFixed(2)} CPU µs a page (${min.toFixed(2)}-${max.toFixed(2)}, ${runs} runs)${vs}; the store ${store} MB`,
  );
});
