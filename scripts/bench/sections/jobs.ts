// Crawl jobs at scale: one job over a site of 1,000,000 pages that a server generates
// on the fly (deterministic, ~20 links a page, no files), beside the same build's job over a
// 10,000-page site in the same run, the same big job on PostgreSQL (in one attempt, its
// time, RSS and database size beside SQLite's), and wget2 --spider over the same big site. The site
// is served by a Bun.serve that makes each page on request, not by nginx as in the crawl sections: a
// million files would have to be written first. Samples genapi's RSS and pages crawled every second,
// for the report's chart of RSS and pages/s against pages crawled.
//
//   bun scripts/bench/sections/jobs.ts --serve-site PAGES   (the site server; run.ts starts it pinned)
// The smoke plan (every site size under 1,000 pages) measures 300 and 2,000 pages instead;
// `run.ts --job-pages N` sizes the big site, `--job-pg URL` names the PostgreSQL database.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { existsSync, mkdtempSync, statSync } from "node:fs";
import { join } from "node:path";
import { createDatabase } from "../../../test/support/postgres.ts";
import type { Context } from "../harness/context.ts";
import { CORES, pinned, sampleUsage, settlesWithin } from "../harness/proc.ts";
import { missing, row, summarize, type Row, type SectionResult, type Series, type Target } from "../harness/results.ts";
import { BUN, createKey, newDb, startGenapi, startServer } from "../harness/servers.ts";

const LINKS_PER_PAGE = 20;
const FULL_SIZES = { small: 10_000, large: 1_000_000 };
const SMOKE_SIZES = { small: 300, large: 2_000 };
const RSS_TARGET_MB = 256;
const RATE_TARGET = 0.8;
const CONCURRENCY = 8;

/**
 * Page i of a `size`-page site (page 0 is `/`, page i > 0 is `/p<i>`): a breadth-first tree with 18
 * children a page (so every page is reachable), plus links to the home page and the parent: 20
 * links, deterministic.
 */
export function pageHtml(i: number, size: number): string {
  const children = LINKS_PER_PAGE - 2;
  const parent = Math.floor((i - 1) / children);
  let links = i === 0 ? "" : `<a href="/">home</a><a href="${parent === 0 ? "/" : `/p${parent}`}">up</a>`;
  for (let c = children * i + 1; c <= children * i + children && c < size; c++) links += `<a href="/p${c}">page ${c}</a>`;
  return `<!doctype html><html><head><title>Page ${i}</title></head><body><h1>Page ${i}</h1><p>Generated page ${i} of ${size}.</p><nav>${links}</nav></body></html>`;
}

/** The site server: pages on the fly, request counts at /__stats (not counted). */
function serveSite(size: number): void {
  let pages = 0;
  let firstPageAt = 0;
  let lastPageAt = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const { pathname } = new URL(req.url);
      if (pathname === "/__stats") return Response.json({ pages, firstPageAt, lastPageAt });
      if (pathname === "/__reset") {
        pages = firstPageAt = lastPageAt = 0;
        return new Response("ok");
      }
      if (pathname === "/robots.txt") return new Response("User-agent: *\nAllow: /\n");
      // wget2 --spider sends HEAD before GET: pages are the GETs.
      if (req.method !== "GET") return new Response(null, { headers: { "content-type": "text/html; charset=utf-8" } });
      const now = performance.timeOrigin + performance.now();
      pages++;
      firstPageAt ||= now;
      lastPageAt = now;
      const i = pathname === "/" ? 0 : Number(/^\/p([1-9]\d*)$/.exec(pathname)?.[1] ?? -1);
      if (!(i >= 0 && i < size)) return new Response("not found", { status: 404 });
      return new Response(pageHtml(i, size), { headers: { "content-type": "text/html; charset=utf-8" } });
    },
  });
  console.log(JSON.stringify({ address: `http://127.0.0.1:${server.port}` }));
}

if (import.meta.main) {
  const index = Bun.argv.indexOf("--serve-site");
  serveSite(Number(Bun.argv[index + 1]));
}

interface Stats {
  pages: number;
  firstPageAt: number;
  lastPageAt: number;
}

interface JobRun {
  pagesPerSecond: number;
  pages: number;
  listed: number;
  seconds: number;
  peakRssMB: number;
  /** Claims the job took (1: it never lost its lease). */
  attempts?: number;
  /** The store on disk when the job finished: SQLite's file and WAL, or pg_database_size. */
  databaseMB?: number;
  samples: Series["points"];
  error?: string;
}

/** A database on a throwaway cluster (the tests' harness), or undefined without PostgreSQL installed. */
async function postgresUrl(): Promise<string | undefined> {
  try {
    return await createDatabase();
  } catch {
    return undefined;
  }
}

/** The job's attempts and the store's size, read from the store itself. */
async function storeFacts(db: string, id: string): Promise<{ attempts?: number; databaseMB: number }> {
  if (/^postgres(ql)?:\/\//.test(db)) {
    const sql = new SQL(db, { max: 1 });
    try {
      const [job] = await sql.unsafe(`SELECT attempts FROM jobs WHERE id = $1`, [id]);
      const [size] = await sql.unsafe(`SELECT pg_database_size(current_database()) AS bytes`);
      return { attempts: job ? Number(job.attempts) : undefined, databaseMB: Number(size.bytes) / 1e6 };
    } finally {
      await sql.close();
    }
  }
  const file = new Database(db, { readonly: true });
  try {
    const job = file.query<{ attempts: number }, [string]>(`SELECT attempts FROM jobs WHERE id = ?`).get(id);
    const bytes = statSync(db).size + (existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0);
    return { attempts: job?.attempts, databaseMB: bytes / 1e6 };
  } finally {
    file.close();
  }
}

async function stats(url: string): Promise<Stats> {
  return (await (await fetch(`${url}/__stats`)).json()) as Stats;
}

async function withSite<T>(ctx: Context, size: number, use: (url: string) => Promise<T>): Promise<T> {
  const site = await startServer([BUN, join(import.meta.dir, "jobs.ts"), "--serve-site", String(size)], ctx.workDir, CORES.load);
  try {
    return await use(site.url);
  } finally {
    await site.stop();
  }
}

/** One job over the site, sampled every second until it finishes (or `limitSeconds`); on SQLite unless `db` names another store. */
/** One job over the site, sampled every second until it finishes (or `limitSeconds`); on SQLite unless `db` names another store; `body`: more body fields (link_report). */
export async function jobRun(
  ctx: Pick<Context, "binaries" | "workDir">,
  siteUrl: string,
  size: number,
  limitSeconds: number,
  db?: string,
  body: Record<string, boolean> = {},
): Promise<JobRun> {
  const dir = mkdtempSync(join(ctx.workDir, "jobs-"));
  const genapi = await startGenapi(
    ctx.binaries.genapi,
    dir,
    ["--allow-private-targets", "--job-max-pages", String(Math.min(size + 10, 1_000_000))],
    db ?? newDb(dir),
  );
  try {
    const key = createKey(ctx.binaries.genapi, genapi.db, 100);
    await fetch(`${siteUrl}/__reset`);
    const res = await fetch(`${genapi.url}/api/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ url: `${siteUrl}/`, ...body }),
    });
    if (res.status !== 202) throw new Error(`POST /api/jobs answered ${res.status}: ${await res.text()}`);
    const id = ((await res.json()) as { data: { id: string } }).data.id;
    const begin = performance.now();
    const usage = sampleUsage(genapi.pid, 200);
    const samples: Series["points"] = [];
    let job: { status: string; progress: { pages_crawled: number; urls_listed: number }; error?: unknown } | undefined;
    let lastPages = 0;
    let lastAt = begin;
    while ((performance.now() - begin) / 1000 < limitSeconds) {
      await Bun.sleep(1000);
      job = (
        (await (await fetch(`${genapi.url}/api/jobs/${id}`, { headers: { "x-api-key": key } })).json()) as { data: NonNullable<typeof job> }
      ).data;
      const status = await Bun.file(`/proc/${genapi.pid}/status`)
        .text()
        .catch(() => "");
      const rssMB = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
      const now = performance.now();
      const pages = job.progress.pages_crawled;
      samples.push({ seconds: (now - begin) / 1000, pages, rssMB, pagesPerSecond: ((pages - lastPages) * 1000) / (now - lastAt) });
      lastPages = pages;
      lastAt = now;
      if (["succeeded", "failed", "cancelled"].includes(job.status)) break;
    }
    const peak = await usage.stop();
    const served = await stats(siteUrl);
    const seconds = (performance.now() - begin) / 1000;
    const span = (served.lastPageAt - served.firstPageAt) / 1000;
    const run: JobRun = {
      pagesPerSecond: span > 0 ? (served.pages - 1) / span : 0,
      pages: served.pages,
      listed: job?.progress.urls_listed ?? 0,
      seconds,
      peakRssMB: (peak.peakRssBytes ?? 0) / 1e6,
      ...(await storeFacts(genapi.db, id)),
      samples,
    };
    if (job?.status !== "succeeded")
      run.error = `job ${job?.status ?? "unknown"} after ${seconds.toFixed(0)} s ${job?.error ? JSON.stringify(job.error) : ""}`;
    return run;
  } finally {
    await genapi.stop();
  }
}

async function wget2Run(
  ctx: Context,
  siteUrl: string,
  limitSeconds: number,
): Promise<{ pagesPerSecond: number; pages: number; peakRssMB: number; complete: boolean }> {
  const dir = mkdtempSync(join(ctx.workDir, "wget2-"));
  await fetch(`${siteUrl}/__reset`);
  const argv = [
    ...ctx.tools.wget2.argv!,
    "--spider",
    "--recursive",
    "--level=0",
    `--max-threads=${CONCURRENCY}`,
    "--no-parent",
    "--no-directories",
    "--quiet",
    `${siteUrl}/`,
  ];
  const proc = Bun.spawn(pinned(CORES.server, argv), { cwd: dir, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  const usage = sampleUsage(proc.pid, 200);
  const complete = await settlesWithin(proc.exited, limitSeconds * 1000);
  const peak = await usage.stop();
  if (!complete) proc.kill("SIGKILL");
  await proc.exited;
  const served = await stats(siteUrl);
  const span = (served.lastPageAt - served.firstPageAt) / 1000;
  return {
    pagesPerSecond: span > 0 ? (served.pages - 1) / span : 0,
    pages: served.pages,
    peakRssMB: (peak.peakRssBytes ?? 0) / 1e6,
    complete,
  };
}

export async function jobsBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const smoke = ctx.plan.sitePages.every((pages) => pages < 1_000);
  const sizes = { ...(smoke ? SMOKE_SIZES : FULL_SIZES) };
  if (ctx.plan.jobPages !== undefined) sizes.large = ctx.plan.jobPages;
  const limit = smoke ? 60 : 3_600;
  const fmt = (n: number) => n.toLocaleString("en-US");

  ctx.log(`jobs: a job over the ${fmt(sizes.small)}-page site`);
  const small = await withSite(ctx, sizes.small, (url) => jobRun(ctx, url, sizes.small, limit));
  ctx.log(`jobs: a job over the ${fmt(sizes.large)}-page site`);
  const pgUrl = ctx.plan.jobPostgresUrl ?? (await postgresUrl());
  const { large, linkReport, postgres, wget2 } = await withSite(ctx, sizes.large, async (url) => {
    const large = await jobRun(ctx, url, sizes.large, limit);
    ctx.log(`jobs: the same job with link_report`);
    const linkReport = await jobRun(ctx, url, sizes.large, limit, undefined, { link_report: true });
    ctx.log(`jobs: the same job on PostgreSQL`);
    const postgres = pgUrl ? await jobRun(ctx, url, sizes.large, limit, pgUrl) : undefined;
    ctx.log(`jobs: wget2 --spider over the ${fmt(sizes.large)}-page site`);
    const wget2 = ctx.tools.wget2.argv ? await wget2Run(ctx, url, smoke ? 60 : ctx.plan.crawlLimitSeconds * 2) : undefined;
    return { large, linkReport, postgres, wget2 };
  });

  const jobRow = (label: string, run: JobRun, size: number, store = "SQLite"): Row =>
    run.error && run.pages === 0
      ? missing(label, "failed", run.error)
      : row(
          label,
          {
            "pages/s": summarize([run.pagesPerSecond]),
            "pages fetched": summarize([run.pages]),
            "URLs listed": summarize([run.listed]),
            "wall s": summarize([run.seconds]),
            "peak RSS MB": summarize([run.peakRssMB]),
            attempts: summarize(run.attempts === undefined ? [] : [run.attempts]),
            "database MB": summarize(run.databaseMB === undefined ? [] : [run.databaseMB]),
          },
          {
            note: run.error ?? `one job on ${store}, --max-jobs 2, ${CONCURRENCY} requests in flight; the site has ${fmt(size)} pages`,
          },
        );
  const pgLabel = `genapi job on PostgreSQL, ${fmt(sizes.large)} pages`;
  const linkLabel = `genapi job with link_report, ${fmt(sizes.large)} pages`;
  const rows: Row[] = [
    jobRow(`genapi job, ${fmt(sizes.small)} pages`, small, sizes.small),
    jobRow(`genapi job, ${fmt(sizes.large)} pages`, large, sizes.large),
    jobRow(linkLabel, linkReport, sizes.large),
    postgres ? jobRow(pgLabel, postgres, sizes.large, "PostgreSQL") : missing(pgLabel, "not installed", "PostgreSQL not installed"),
  ];
  if (wget2) {
    rows.push(
      row(
        `wget2 --spider, ${fmt(sizes.large)} pages`,
        {
          "pages/s": summarize([wget2.pagesPerSecond]),
          "pages fetched": summarize([wget2.pages]),
          "peak RSS MB": summarize([wget2.peakRssMB]),
        },
        {
          command: `wget2 --spider --recursive --level=0 --max-threads=${CONCURRENCY} --no-parent --no-directories --quiet $SITE/`,
          note: wget2.complete ? "crawled the whole site" : "stopped at its time limit",
        },
      ),
    );
  } else rows.push(missing(`wget2 --spider, ${fmt(sizes.large)} pages`, "not installed", ctx.tools.wget2.note ?? "not installed"));

  const ratio = small.pagesPerSecond > 0 ? large.pagesPerSecond / small.pagesPerSecond : 0;
  const targets: Target[] = [
    {
      label: `jobs: peak RSS of genapi over a ${fmt(sizes.large)}-page job`,
      goal: `under ${RSS_TARGET_MB} MB`,
      measured: `${large.peakRssMB.toFixed(0)} MB`,
      met: large.error ? false : large.peakRssMB < RSS_TARGET_MB,
    },
    {
      label: `jobs: peak RSS of genapi over a ${fmt(sizes.large)}-page job with link_report (issue 24)`,
      goal: `under ${RSS_TARGET_MB} MB`,
      measured: `${linkReport.peakRssMB.toFixed(0)} MB (${(linkReport.peakRssMB / large.peakRssMB).toFixed(2)}x the job without it)`,
      met: linkReport.error ? false : linkReport.peakRssMB < RSS_TARGET_MB,
    },
    ...(postgres
      ? [
          {
            label: `jobs: peak RSS of genapi over a ${fmt(sizes.large)}-page job on PostgreSQL`,
            goal: `under ${RSS_TARGET_MB} MB`,
            measured: `${postgres.peakRssMB.toFixed(0)} MB; ${postgres.seconds.toFixed(1)} s wall against SQLite's ${large.seconds.toFixed(1)} s`,
            met: postgres.error ? false : postgres.peakRssMB < RSS_TARGET_MB,
          },
        ]
      : []),
    {
      label: `jobs: pages/s at ${fmt(sizes.large)} pages ÷ pages/s at ${fmt(sizes.small)}`,
      goal: `at least ${RATE_TARGET}`,
      measured: `${ratio.toFixed(2)} (${large.pagesPerSecond.toFixed(0)} ÷ ${small.pagesPerSecond.toFixed(0)} pages/s)`,
      met: large.error || small.error ? false : ratio >= RATE_TARGET,
    },
  ];
  return {
    id: "jobs",
    title: "Crawl jobs at scale",
    tables: [
      {
        title: `One job over a ${fmt(sizes.large)}-page site generated on the fly`,
        columns: ["pages/s", "pages fetched", "URLs listed", "wall s", "peak RSS MB", "attempts", "database MB"],
        rows,
        notes: [
          `The site server generates page i on request: a tree with ${LINKS_PER_PAGE - 2} children a page plus links home and up (${LINKS_PER_PAGE} links), no files; pinned to core ${CORES.load}, genapi and wget2 to core ${CORES.server}. It is a Bun.serve (scripts/bench/sections/jobs.ts), not nginx as in the crawl sections: as files, the site would be a million of them to write (and to store, a block each) before every run; its rates here compare genapi with itself at two sizes.`,
          "pages/s: pages (GET requests) the site served between its first and last page request; wget2's HEAD requests are not counted. Peak RSS: VmHWM of the process, sampled every 200 ms.",
          "The job's crawl state (frontier, seen set, listed entries) lives in the SQLite store; memory holds a bounded cache. The result is written as gzip-compressed parts of at most 50,000 URLs with a <sitemapindex>.",
          `The PostgreSQL job is the same job with --db on ${ctx.plan.jobPostgresUrl ? "the database --job-pg names" : "a new database of a throwaway PostgreSQL cluster started as the tests start one (fsync=off)"}, after the SQLite one over the same site. attempts: the job's claims (1: it never lost its lease); database MB: SQLite's file and WAL, or pg_database_size, when the job finished (its crawl state not yet swept).`,
        ],
      },
    ],
    checks: [
      {
        label: `the ${fmt(sizes.large)}-page job listed every page`,
        passed: large.listed === sizes.large,
        detail: `${fmt(large.listed)} URLs listed of ${fmt(sizes.large)}`,
      },
      {
        label: `the ${fmt(sizes.large)}-page job with link_report listed every page`,
        passed: linkReport.listed === sizes.large && linkReport.error === undefined,
        detail: `${fmt(linkReport.listed)} URLs listed of ${fmt(sizes.large)}${linkReport.error ? `; ${linkReport.error}` : ""}`,
      },
      ...(postgres
        ? [
            {
              label: `the ${fmt(sizes.large)}-page job on PostgreSQL listed every page in one attempt`,
              passed: postgres.listed === sizes.large && postgres.attempts === 1 && postgres.error === undefined,
              detail: `${fmt(postgres.listed)} URLs listed of ${fmt(sizes.large)} in ${postgres.attempts ?? "?"} attempt(s)${postgres.error ? `; ${postgres.error}` : ""}`,
            },
          ]
        : []),
    ],
    targets,
    series: [
      { label: `genapi job, ${fmt(sizes.large)} pages`, points: large.samples },
      { label: `genapi job, ${fmt(sizes.small)} pages`, points: small.samples },
      { label: linkLabel, points: linkReport.samples },
      ...(postgres ? [{ label: pgLabel, points: postgres.samples }] : []),
    ],
    seconds: (performance.now() - started) / 1000,
  };
}
