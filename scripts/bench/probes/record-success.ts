// What a site run's change set costs at its end (SiteStore.recordSuccess) on SQLite: a store file
// opened as the server opens it, a site whose run 1 writes N page rows, then runs that read every
// page unchanged (their rows copied from the run before, as a 304 has them), each timed while its
// success is recorded. `--base DIR` times another checkout's sources in the same process's turn
// (its src/db/sqlite/sites.ts), alternating, so that a change to the change set shows as a ratio.
//
//   bun scripts/bench/probes/record-success.ts [--pages 100000] [--runs 6] [--base /tmp/other]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { summarize } from "../harness/results.ts";

const { values } = parseArgs({
  options: { pages: { type: "string", default: "100000" }, runs: { type: "string", default: "6" }, base: { type: "string" } },
});
const pages = Number(values.pages);
const runs = Number(values.runs);
const here = resolve(import.meta.dir, "../../..");
const roots = values.base === undefined ? [here] : [here, resolve(values.base)];

/** Milliseconds of each recordSuccess after the first run's, for the sources at `root`. */
async function timings(root: string): Promise<number[]> {
  const { openDatabase } = await import(`${root}/src/db/sqlite/database.ts`);
  const { sqliteMigrations } = await import(`${root}/src/db/sqlite/migrations.ts`);
  const { createSqliteSiteStore } = await import(`${root}/src/db/sqlite/sites.ts`);
  const { newJobId } = await import(`${root}/src/jobs/job-store.ts`);
  const { defaultCrawlOptions } = await import(`${root}/src/crawler/index.ts`);
  const dir = mkdtempSync(join(tmpdir(), "record-success-"));
  const db = openDatabase(join(dir, "genapi.db"), sqliteMigrations);
  const direct = async <T>(fn: (d: typeof db) => T) => fn(db);
  const store = createSqliteSiteStore({ read: direct, write: direct });
  const origin = "http://127.0.0.1:8080";
  const site = {
    id: newJobId(),
    keyId: 1,
    url: `${origin}/`,
    options: defaultCrawlOptions(pages),
    credentials: null,
    everyHours: null,
    nextRunAt: null,
    callbackUrl: null,
    callbackSecret: null,
    publishToken: null,
    indexnow: null,
    createdAt: new Date().toISOString(),
  };
  await store.create(site);
  const urls = Array.from({ length: pages }, (_, i) => `${origin}/d${i % 10}/d${Math.floor(i / 10) % 10}/page-${i}.html`);
  const links = Array.from({ length: 20 }, (_, i) => `${origin}/d${i % 10}/page-${i}.html`);
  const times: number[] = [];
  let previous: string | null = null;
  for (let n = 0; n < runs; n++) {
    const job = {
      id: newJobId(),
      keyId: 1,
      url: site.url,
      options: site.options,
      callbackUrl: null,
      callbackSecret: null,
      createdAt: site.createdAt,
    };
    await store.startRun(site.id, { job, maxQueued: 100 });
    for (let at = 0; at < pages; at += 500) {
      const part = urls.slice(at, at + 500);
      if (previous !== null) await store.carryPages(job.id, previous, part);
      else {
        const page = { etag: '"e"', lastModified: null, fingerprint: "0123456789abcdef", lastmod: "2026-11-01T00:00:00Z" };
        await store.putPages(
          job.id,
          part.map((url) => ({ url, ...page, exclusion: null, canonical: null, links, extra: null })),
        );
      }
    }
    db.query(`UPDATE jobs SET status = 'succeeded' WHERE id = ?`).run(job.id);
    const started = performance.now();
    const counts = await store.recordSuccess(site.id, job.id);
    if (previous !== null) {
      times.push(performance.now() - started);
      if (counts.unchanged !== pages || counts.added + counts.removed + counts.changed !== 0)
        throw new Error(`changes: ${JSON.stringify(counts)}`);
    }
    previous = job.id;
  }
  db.close();
  rmSync(dir, { recursive: true });
  return times;
}

const median = (xs: number[]) => summarize(xs)!.median;
const figures = new Map<string, number[]>(roots.map((root) => [root, []]));
// Two turns each, alternating, so that the machine's load falls on both alike.
for (let turn = 0; turn < 2; turn++) {
  for (const root of turn % 2 === 0 ? roots : [...roots].reverse()) figures.get(root)!.push(...(await timings(root)));
}
for (const [root, xs] of figures) {
  console.log(
    `${root}: recordSuccess of an unchanged ${pages.toLocaleString("en-US")}-page run: median ${median(xs).toFixed(0)} ms (${xs.map((x) => x.toFixed(0)).join(", ")})`,
  );
}
if (roots.length === 2) console.log(`this ÷ base: ${(median(figures.get(roots[0]!)!) / median(figures.get(roots[1]!)!)).toFixed(3)}`);
