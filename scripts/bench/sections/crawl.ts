// 2. Crawl throughput and memory: genapi (POST /api/generate, and `genapi crawl`) against the tools a
// user would otherwise pick (wget2, linkchecker, sitemap-generator-cli) on the synthetic site served
// by nginx (fixtures/site-server.ts), and against the ceilings: wrk fetching the same pages from the same
// server, and genapi's own page parser with no network at all. "genapi (link_report)" is the same
// crawl with the link report on (target: CPU per page and peak RSS within 10% of genapi's).
//
// wget2 runs in its two ways of walking a site without keeping it: one GET a page (--delete-after)
// and --spider (a HEAD, then a GET for each HTML page), each with the thread count it does best
// with on the first site (a sweep of WGET2_THREADS before the measured runs). genapi runs at its
// defaults (8 requests in flight); linkchecker and sitemap-generator-cli are raised to 8 too.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultCrawlLimits } from "../../../src/crawler/index.ts";
import type { Context } from "../harness/context.ts";
import { profileCrawl } from "./crawl-profile.ts";
import { CORES, cpuSeconds, peakRss, pinned, run, sampleUsage, settlesWithin, showCommand } from "../harness/proc.ts";
import { missing, ratios, row, summarize, type Check, type Row, type SectionResult, type Table, type Target } from "../harness/results.ts";
import { generateSite } from "../fixtures/site.ts";
import { BUN, createKey, newDb, ROOT, startGenapi } from "../harness/servers.ts";
import { serveSite, type ServedSite, type SiteCounts, type SiteServer } from "../fixtures/site-server.ts";
import type { Tool } from "../harness/tools.ts";
import { runWrk, wrkArgv } from "../harness/wrk.ts";

/** Requests in flight: genapi's own per-crawl concurrency, which linkchecker and sitemap-generator-cli are raised to. */
const CONCURRENCY = defaultCrawlLimits.concurrency;
const MAX_PAGES = 50_000;
/** wget2's thread counts tried on the first site; the measured runs use the fastest of each mode. */
const WGET2_THREADS = [4, 8, 16];
const WGET2_MODES = {
  get: {
    label: "wget2, one GET a page",
    args: ["--delete-after"],
    what: "one GET a page (--delete-after: each page is saved, parsed for links and deleted)",
  },
  spider: {
    label: "wget2 --spider (HEAD + GET)",
    args: ["--spider"],
    what: "--spider: a HEAD for every URL, then a GET for each HTML page",
  },
} as const;
type Wget2Mode = keyof typeof WGET2_MODES;

interface Site {
  /** The timing server's origin (no access log); the counting server is `served.counting`. */
  url: string;
  served: ServedSite;
  dir: string;
  pathsFile: string;
  pages: number;
  /** URL paths of every page: what a sitemap of the site lists, whichever server's origin. */
  expected: Set<string>;
}

interface CrawlRun {
  /** Pages fetched over the crawler's wall time (time-boxed peers: first to last page served). */
  pagesPerSecond: number;
  pagesServed: number;
  /** Requests the server answered (stub_status on the timing server, the log on the counting one). */
  requests?: number;
  /** The counting server's detail, when the run was made against it. */
  detail?: SiteCounts["detail"];
  /** The crawler finished by itself (not stopped at the time box, no error). */
  complete: boolean;
  wallSeconds: number;
  peakRssBytes?: number;
  cpuSeconds?: number;
  /** The URL paths of the sitemap it wrote, when it wrote one. */
  paths?: string[];
  /** genapi with link_report: its data.links. */
  links?: { broken: unknown[]; redirects: unknown[]; truncated: boolean };
  error?: string;
}

interface Crawler {
  name: string;
  /** Another crawler whose time limit this one shares (a variant of it). */
  limitAs?: string;
  tool?: Tool;
  /** The command line as the report shows it. */
  command: string;
  crawl(site: Site, server: SiteServer, limitSeconds: number): Promise<CrawlRun>;
}

export async function crawlBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const tables: Table[] = [];
  const checks: Check[] = [];
  const targets: Target[] = [];
  let threads: Record<Wget2Mode, number> | undefined;
  // The sweep's table goes last: the crawl tables are what the section is for.
  let sweepTable: Table | undefined;
  for (const [index, pages] of ctx.plan.sitePages.entries()) {
    const site = await prepareSite(ctx, pages);
    try {
      if (threads === undefined) {
        const sweep = await wget2Sweep(ctx, site);
        threads = sweep.best;
        sweepTable = sweep.table;
      }
      const result = await benchSite(ctx, site, index === 0, threads);
      tables.push(result.table);
      // Where genapi's time goes against wget2, on the first site: crawl-profile.ts.
      if (index === 0) tables.push(...(await profileTables(ctx, site, threads.get)));
      checks.push(...result.checks);
      targets.push(...result.targets);
    } finally {
      await site.served.stop();
      rmSync(site.dir, { recursive: true, force: true });
    }
  }
  if (sweepTable) tables.push(sweepTable);
  return { id: "crawl", title: "Crawl throughput and memory", tables, checks, targets, seconds: (performance.now() - started) / 1000 };
}

async function profileTables(ctx: Context, site: Site, wget2Threads: number): Promise<Table[]> {
  const wget2 = ctx.tools.wget2.argv;
  try {
    return await profileCrawl({
      url: `${site.url}/`,
      pages: site.pages,
      binary: ctx.binaries.genapi,
      wget2: wget2 ? { argv: wget2, threads: wget2Threads } : undefined,
      runs: Math.min(3, ctx.plan.runs),
      dir: mkdtempSync(join(ctx.workDir, "profile-")),
      log: ctx.log,
    });
  } catch (error) {
    const title = `Where the CPU goes: genapi crawl and wget2, ${site.pages.toLocaleString("en-US")} pages`;
    return [{ title, columns: ["CPU ms a page"], rows: [missing("profile", "failed", (error as Error).message)], notes: [] }];
  }
}

/** Generates the site and serves it, pinned to the load core (the crawlers get the other one). */
async function prepareSite(ctx: Context, pages: number): Promise<Site> {
  ctx.log(`crawl: generating a site of ${pages} pages`);
  const dir = join(ctx.workDir, `site-${pages}`);
  const layout = generateSite(dir, pages);
  const pathsFile = join(ctx.workDir, `paths-${pages}.txt`);
  writeFileSync(pathsFile, `${layout.paths.join("\n")}\n`);
  const served = await serveSite(ctx, dir, String(pages));
  ctx.log(
    `crawl: serving ${pages} pages (${(layout.htmlBytes / 1e6).toFixed(0)} MB of HTML) with ${served.server} at ${served.timing.url}`,
  );
  return { url: served.timing.url, served, dir, pathsFile, pages, expected: new Set(layout.paths) };
}

/**
 * wget2's thread count in each mode: every count of WGET2_THREADS crawls the site (rotating, up to 3
 * runs each) and the fastest median wall time wins. Its table goes into the report.
 */
async function wget2Sweep(ctx: Context, site: Site): Promise<{ best: Record<Wget2Mode, number>; table?: Table }> {
  const fallback = { get: CONCURRENCY, spider: CONCURRENCY };
  if (ctx.tools.wget2.argv === undefined) return { best: fallback };
  const runs = Math.min(3, ctx.plan.runs);
  const variants = (Object.keys(WGET2_MODES) as Wget2Mode[]).flatMap((mode) => WGET2_THREADS.map((threads) => ({ mode, threads })));
  const results = variants.map(() => [] as CrawlRun[]);
  for (let r = 0; r < runs; r++) {
    for (let k = 0; k < variants.length; k++) {
      const i = (k + r) % variants.length;
      const { mode, threads } = variants[i]!;
      ctx.log(`crawl ${site.pages}: wget2 sweep, run ${r + 1}/${runs}: ${mode}, ${threads} threads`);
      results[i]!.push(await wget2Crawler(ctx, mode, threads).crawl(site, site.served.timing, ctx.plan.crawlLimitSeconds));
    }
  }
  const wall = (i: number) =>
    summarize(results[i]!.filter((x) => x.complete).map((x) => x.wallSeconds))?.median ?? Number.POSITIVE_INFINITY;
  const best = { ...fallback };
  for (const mode of Object.keys(WGET2_MODES) as Wget2Mode[]) {
    const fastest = variants
      .map((v, i) => ({ ...v, wall: wall(i) }))
      .filter((v) => v.mode === mode)
      .sort((a, b) => a.wall - b.wall)[0]!;
    if (Number.isFinite(fastest.wall)) best[mode] = fastest.threads;
  }
  const rows = variants.map(({ mode, threads }, i) => {
    const ok = results[i]!.filter((x) => x.complete);
    const label = `${WGET2_MODES[mode].label}, ${threads} threads${best[mode] === threads ? " (used below)" : ""}`;
    if (ok.length === 0) return missing(label, "failed", results[i]!.find((x) => x.error)?.error ?? "did not finish");
    return row(label, {
      "pages/s": summarize(ok.map((x) => x.pagesPerSecond)),
      "wall s": summarize(ok.map((x) => x.wallSeconds)),
      "CPU ms per page": summarize(ok.flatMap((x) => (x.cpuSeconds === undefined ? [] : [(x.cpuSeconds / x.pagesServed) * 1000]))),
    });
  });
  return {
    best,
    table: {
      title: `wget2's thread count, on the site of ${site.pages.toLocaleString("en-US")} pages`,
      columns: ["pages/s", "wall s", "CPU ms per page"],
      rows,
      notes: [
        `Each mode with ${WGET2_THREADS.join(", ")} threads (\`--max-threads\`), ${runs} rotating run${runs === 1 ? "" : "s"} each, before the measured runs, against the same server; the count with the shortest median wall time is the one the crawl tables use, for every site size.`,
      ],
    },
  };
}

async function benchSite(ctx: Context, site: Site, referenceRun: boolean, threads: Record<Wget2Mode, number>) {
  const { plan, tools } = ctx;
  // "genapi (alternates, images)": the same crawl with both extraction options on (target: within 15% of genapi's pages/s).
  const crawlers = [
    genapiCrawler(ctx),
    genapiCrawler(ctx, EXTRACTION),
    genapiCrawler(ctx, LINK_REPORT),
    genapiCliCrawler(ctx),
    wget2Crawler(ctx, "get", threads.get),
    wget2Crawler(ctx, "spider", threads.spider),
    linkcheckerCrawler(ctx),
    sitemapGeneratorCrawler(ctx),
  ];
  const full = (crawler: Crawler) => plan.fullCrawlTools.includes(crawler.limitAs ?? crawler.name);
  const available = crawlers.filter((c) => c.tool === undefined || c.tool.argv !== undefined);
  const runs = new Map<string, CrawlRun[]>(crawlers.map((c) => [c.name, []]));
  const fetchCeiling: number[] = [];
  const parseCeiling: number[] = [];
  const lua = writeWrkScript(ctx.workDir);
  for (let r = 0; r < plan.runs; r++) {
    // Rotate the order so that no crawler always runs first (or last) on a drifting machine.
    const order = available.map((_, i) => available[(i + r) % available.length]!);
    for (const crawler of order) {
      ctx.log(`crawl ${site.pages}: run ${r + 1}/${plan.runs}: ${crawler.name}`);
      // Full crawls are timed against the server without an access log; the time-boxed peers
      // (a few hundred pages/s) run against the counting one, whose log counts their pages.
      const server = full(crawler) ? site.served.timing : site.served.counting;
      const limit = full(crawler) ? plan.crawlLimitSeconds : plan.crawlTimeBoxSeconds;
      const result = await crawler.crawl(site, server, limit).catch((error: Error): CrawlRun => failedRun(error.message));
      if (result.error) ctx.log(`crawl ${site.pages}: ${crawler.name} failed: ${result.error}`);
      runs.get(crawler.name)!.push(result);
    }
    if (tools.wrk.argv) {
      const wrk = await runWrk(tools.wrk.argv[0]!, {
        url: site.url,
        connections: CONCURRENCY,
        seconds: Math.max(1, Math.round(plan.wrkSeconds / 2)),
        script: lua,
        env: { BENCH_PATHS: site.pathsFile },
        core: CORES.server,
      });
      fetchCeiling.push(wrk.requestsPerSecond);
    }
    parseCeiling.push(measureParseCeiling(site, plan.wrkSeconds / 2));
  }

  // One more crawl of every full crawler against the counting server: what it asked for.
  const counted = new Map<string, CrawlRun>();
  for (const crawler of available.filter(full)) {
    ctx.log(`crawl ${site.pages}: counting run: ${crawler.name}`);
    const result = await crawler
      .crawl(site, site.served.counting, plan.crawlLimitSeconds)
      .catch((error: Error): CrawlRun => failedRun(error.message));
    counted.set(crawler.name, result);
  }

  // The same URL set as linkchecker: from a complete run of it, made here when the timed runs were cut.
  const linkchecker = crawlers.find((c) => c.name === "linkchecker")!;
  let reference = runs.get("linkchecker")!.find((run) => run.complete)?.paths;
  if (reference === undefined && referenceRun && linkchecker.tool?.argv) {
    ctx.log(`crawl ${site.pages}: one complete linkchecker run for the URL-set comparison`);
    const whole = await linkchecker
      .crawl(site, site.served.counting, plan.crawlLimitSeconds)
      .catch((error: Error) => failedRun(error.message));
    reference = whole.complete ? whole.paths : undefined;
  }

  const genapiRuns = runs.get("genapi")!;
  const rate = (list: CrawlRun[]) => list.map((run) => (run.error ? Number.NaN : run.pagesPerSecond));
  const genapiRates = rate(genapiRuns);
  const vs = (others: number[]) => summarize(ratios(genapiRates, others).filter(Number.isFinite));
  const rows: Row[] = crawlers.map((crawler) =>
    crawlerRow(
      crawler,
      runs.get(crawler.name)!,
      site,
      counted.get(crawler.name),
      crawler.name === "genapi" ? undefined : vs(rate(runs.get(crawler.name)!)),
    ),
  );
  if (tools.wrk.argv) {
    rows.push(
      row(
        "ceiling: wrk fetching the same pages",
        { "pages/s": summarize(fetchCeiling), "genapi ÷ this": vs(fetchCeiling) },
        {
          command: `taskset -c ${CORES.server} BENCH_PATHS=$PATHS ${showCommand(wrkArgv("wrk", { url: site.url, connections: CONCURRENCY, seconds: Math.max(1, Math.round(plan.wrkSeconds / 2)), script: lua }), names(ctx, site))}`,
          note: "raw HTTP fetch rate of the server on loopback, bodies read, nothing parsed",
        },
      ),
    );
  } else rows.push(missing("ceiling: wrk fetching the same pages", "not installed", tools.wrk.note ?? "not installed"));
  rows.push(
    row(
      "ceiling: genapi's page parser alone",
      { "pages/s": summarize(parseCeiling), "genapi ÷ this": vs(parseCeiling) },
      {
        command: `taskset -c ${CORES.server} bun scripts/bench/sections/parse-ceiling.ts $SITE $PATHS ${plan.wrkSeconds / 2}`,
        note: "decodeHtml + extractPage (src/crawler/html/links.ts) over the site's pages in memory, one core, no network",
      },
    ),
  );

  const checks: Check[] = [
    genapiSetCheck(site, genapiRuns),
    linkReportCheck(site, runs.get(LINK_REPORT.name)!),
    ...countingChecks(site, available.filter(full), runs, counted),
  ];
  const lastGenapi = genapiRuns.findLast((run) => run.paths !== undefined)?.paths;
  const agreement = reference && lastGenapi ? precisionRecall(lastGenapi, reference) : undefined;
  if (agreement) {
    checks.push({
      label: `genapi's URL set equals linkchecker's on the ${site.pages}-page site`,
      passed: agreement.precision === 1 && agreement.recall === 1,
      detail: `precision ${agreement.precision.toFixed(4)}, recall ${agreement.recall.toFixed(4)}; linkchecker's sitemap has ${reference!.length} URLs, ${reference!.filter((path) => path.includes("#")).length} of them with a fragment, compared without it`,
    });
  }
  return {
    table: {
      title: `Crawl of the ${site.pages.toLocaleString("en-US")}-page site`,
      columns: ["pages/s", "wall s", "requests", "peak RSS MB", "CPU ms per page", "genapi ÷ this"],
      rows,
      notes: crawlNotes(ctx, site, crawlers),
    },
    checks,
    targets: crawlTargets(site, rows, runs, agreement, referenceRun, threads),
  };
}

function crawlerRow(
  crawler: Crawler,
  list: CrawlRun[],
  site: Site,
  counted: CrawlRun | undefined,
  ratio: ReturnType<typeof summarize>,
): Row {
  const extra = { command: crawler.command, version: crawler.tool?.version };
  if (crawler.tool && crawler.tool.argv === undefined)
    return missing(crawler.name, "not installed", crawler.tool.note ?? "not installed", extra);
  const ok = list.filter((run) => !run.error);
  const errors = [...new Set(list.flatMap((run) => (run.error ? [run.error] : [])))];
  if (ok.length === 0) return missing(crawler.name, "failed", errors.join("; "), extra);
  const complete = ok.filter((run) => run.complete);
  const served = ok.map((run) => run.pagesServed);
  const how =
    complete.length === ok.length
      ? `crawled the whole site in every run (${Math.min(...served)}-${Math.max(...served)} pages)`
      : `stopped at the time box in ${ok.length - complete.length} of ${ok.length} runs, after ${Math.min(...served)}-${Math.max(...served)} of ${site.pages} pages: rate, memory and CPU are those of that part of the crawl`;
  // What it asked the server for: from its counting run, or from its own runs on the counting server.
  const detail = counted?.detail ?? ok.at(-1)?.detail;
  const requests = detail ? `${fmt(detail.gets)} GET${detail.heads > 0 ? ` + ${fmt(detail.heads)} HEAD` : ""}` : undefined;
  const pageGets = detail
    ? `${fmt(detail.pageGets)} of its GETs fetched an HTML page${detail.pageGets === detail.distinctPages ? ", each page once" : `, for ${fmt(detail.distinctPages)} distinct pages`}`
    : undefined;
  const asked = detail ? `${counted ? "counting run" : "last run"}: ${requests}; ${pageGets}` : undefined;
  return row(
    crawler.name,
    {
      "pages/s": summarize(ok.map((run) => run.pagesPerSecond)),
      "wall s": complete.length === ok.length ? summarize(ok.map((run) => run.wallSeconds)) : undefined,
      requests: complete.length === ok.length ? requests : undefined,
      "peak RSS MB": summarize(ok.flatMap((run) => (run.peakRssBytes === undefined ? [] : [run.peakRssBytes / 1e6]))),
      "CPU ms per page": summarize(ok.flatMap((run) => (run.cpuSeconds === undefined ? [] : [(run.cpuSeconds / run.pagesServed) * 1000]))),
      "genapi ÷ this": ratio,
    },
    { ...extra, note: [how, asked, errors.length > 0 ? `failed runs: ${errors.join("; ")}` : undefined].filter(Boolean).join("; ") },
  );
}

function crawlNotes(ctx: Context, site: Site, crawlers: Crawler[]): string[] {
  const { plan } = ctx;
  const timeBoxed = crawlers.filter((c) => !plan.fullCrawlTools.includes(c.limitAs ?? c.name)).map((c) => c.name);
  return [
    `Site: ${site.pages.toLocaleString("en-US")} generated HTML pages of 15-30 KB with about 20 internal links each (root-relative, relative, \`./\`, with and without fragments), robots.txt allowing all, a stylesheet and an image, served by ${site.served.description}. Every crawler is pinned to core ${CORES.server}.`,
    "pages/s: pages fetched over the crawler's wall time: from exec to exit for a command (`genapi crawl`, wget2), the request's round trip for `POST /api/generate` (server already started). Start-up and the sitemap writing are included for a command, as a user waits for them.",
    timeBoxed.length === 0
      ? "Every crawler crawls the whole site every run."
      : `The full crawls (${crawlers
          .filter((c) => plan.fullCrawlTools.includes(c.limitAs ?? c.name))
          .map((c) => c.name)
          .join(
            ", ",
          )}) run against the server without an access log, which counts their requests (stub_status): requests is what one more crawl of each asked for, against the same server with an access log. ${timeBoxed.join(" and ")} are stopped after ${plan.crawlTimeBoxSeconds} s, as they would need minutes per site and run; they crawl the logging server (a log line costs nothing at their rate) and their pages/s is from the first to the last page it served. That favours them: their start-up and the slow end of a crawl, with the largest queues and the sitemap writing, are left out.`,
    "peak RSS: the crawler process's VmHWM (genapi's API: after the crawl, a fresh server per run, so start-up included; the others: sampled every 20 ms until they exit or are stopped). CPU ms per page: user + system time of the crawler process (the API: during the crawl, from /proc/PID/stat; the commands: from exec to exit, from wait4's rusage, or up to the stop at the time box) over the pages it fetched.",
    "genapi ÷ this: genapi's (the API's) pages/s divided by this row's, run by run (each run measures every crawler back to back, in rotating order), then median, min and max.",
    `genapi runs \`genapi serve --allow-private-targets --max-pages ${MAX_PAGES}\` and crawls through \`POST /api/generate\`; a fresh server and database per run. \`genapi crawl\` is the same engine from the command line. Both keep ${CONCURRENCY} requests in flight (their default); wget2 runs with its best thread count (last table of this section), linkchecker and sitemap-generator-cli with ${CONCURRENCY}.`,
  ];
}

function crawlTargets(
  site: Site,
  rows: Row[],
  runs: Map<string, CrawlRun[]>,
  agreement: { precision: number; recall: number } | undefined,
  referenceRun: boolean,
  threads: Record<Wget2Mode, number>,
): Target[] {
  const ratioOf = (name: string) => {
    const cell = rows.find((r) => r.label === name)?.cells["genapi ÷ this"];
    return typeof cell === "object" ? cell.median : undefined;
  };
  const size = `${site.pages.toLocaleString("en-US")} pages`;
  const versus = (name: string, goal: number): Target => {
    const ratio = ratioOf(name);
    return {
      label: `crawl ${size}: genapi pages/s vs ${name}`,
      goal: `≥ ${goal}×`,
      measured: ratio === undefined ? "not measured" : `${ratio.toFixed(2)}×`,
      met: ratio === undefined ? undefined : ratio >= goal,
    };
  };
  const targets = [versus("linkchecker", 3), versus("sitemap-generator-cli", 3)];
  // Targets: pages/s at least wget2's and CPU per page at most wget2's, compared run by run (both
  // crawl the whole site every run), against both of wget2's modes, each at its best.
  const cpuPerPage = (list: CrawlRun[]) =>
    list.map((run) =>
      run.error || run.cpuSeconds === undefined || run.pagesServed === 0 ? Number.NaN : (run.cpuSeconds / run.pagesServed) * 1000,
    );
  const rates = (list: CrawlRun[]) => list.map((run) => (run.error ? Number.NaN : run.pagesPerSecond));
  const ms = (list: CrawlRun[]) => summarize(cpuPerPage(list).filter(Number.isFinite))?.median.toFixed(3);
  const genapi = runs.get("genapi")!;
  const cli = runs.get("genapi crawl")!;
  for (const mode of Object.keys(WGET2_MODES) as Wget2Mode[]) {
    const name = WGET2_MODES[mode].label;
    const wget2 = runs.get(name)!;
    const against = (ours: CrawlRun[], f: (list: CrawlRun[]) => number[]) => summarize(ratios(f(ours), f(wget2)).filter(Number.isFinite));
    const rate = against(genapi, rates);
    const rateCli = against(cli, rates);
    const cpu = against(genapi, cpuPerPage);
    const cpuCli = against(cli, cpuPerPage);
    const label = `${name}, ${threads[mode]} threads`;
    targets.push(
      {
        label: `crawl ${size}: genapi pages/s vs ${label}`,
        goal: "≥ 1×",
        measured:
          rate === undefined
            ? "not measured"
            : `${rate.median.toFixed(2)}×${rateCli ? `; genapi crawl ${rateCli.median.toFixed(2)}×` : ""}`,
        met: rate === undefined ? undefined : rate.median >= 1,
      },
      {
        label: `crawl ${size}: genapi CPU ms per page vs ${label}`,
        goal: "≤ 1.0× (genapi ÷ wget2)",
        measured:
          cpu === undefined
            ? "not measured"
            : `${cpu.median.toFixed(2)}× (${ms(genapi)} vs ${ms(wget2)} ms)${cpuCli ? `; genapi crawl ${cpuCli.median.toFixed(2)}× (${ms(cli)} ms)` : ""}`,
        met: cpu === undefined ? undefined : cpu.median <= 1,
      },
    );
  }
  targets.push(...linkReportTargets(size, genapi, runs.get(LINK_REPORT.name)!));
  if (site.pages >= 50_000) {
    const rss = summarize(genapi.flatMap((run) => (run.peakRssBytes === undefined ? [] : [run.peakRssBytes / 1e6])));
    targets.push({
      label: `genapi peak RSS crawling ${size}`,
      goal: "< 150 MB",
      measured: rss === undefined ? "not measured" : `${rss.median.toFixed(0)} MB`,
      met: rss === undefined ? undefined : rss.median < 150,
    });
  }
  if (referenceRun) {
    targets.push({
      label: `same URL set as linkchecker (${size})`,
      goal: "precision and recall 1.0",
      measured: agreement ? `${agreement.precision.toFixed(4)} / ${agreement.recall.toFixed(4)}` : "not measured",
      met: agreement ? agreement.precision === 1 && agreement.recall === 1 : undefined,
    });
  }
  return targets;
}

/**
 * The link report's cost, run by run (each run measures both back to back): CPU per page and peak
 * RSS of the crawl with link_report over the same figures without it.
 */
function linkReportTargets(size: string, plain: CrawlRun[], report: CrawlRun[]): Target[] {
  const cpuPerPage = (run: CrawlRun) =>
    run.error || run.cpuSeconds === undefined || run.pagesServed === 0 ? Number.NaN : (run.cpuSeconds / run.pagesServed) * 1000;
  const rss = (run: CrawlRun) => (run.error || run.peakRssBytes === undefined ? Number.NaN : run.peakRssBytes / 1e6);
  const target = (what: string, of: (run: CrawlRun) => number, unit: string): Target => {
    const ratio = summarize(ratios(report.map(of), plain.map(of)).filter(Number.isFinite));
    const median = (list: CrawlRun[]) => summarize(list.map(of).filter(Number.isFinite))?.median.toFixed(unit === "MB" ? 0 : 3);
    return {
      label: `crawl ${size}: ${what} with link_report vs without`,
      goal: `≤ ${LINK_REPORT_COST}× (link_report ÷ genapi)`,
      measured: ratio === undefined ? "not measured" : `${ratio.median.toFixed(2)}× (${median(report)} vs ${median(plain)} ${unit})`,
      met: ratio === undefined ? undefined : ratio.median <= LINK_REPORT_COST,
    };
  };
  return [target("CPU ms per page", cpuPerPage, "ms"), target("peak RSS", rss, "MB")];
}

/** The bench site has no broken link or redirect: the report must say so, and list the same pages. */
function linkReportCheck(site: Site, list: CrawlRun[]): Check {
  const details = list.map((run) => {
    if (run.links === undefined) return `no report (${run.error ?? "missing"})`;
    const { broken, redirects } = run.links;
    return broken.length === 0 && redirects.length === 0 ? "empty" : `${broken.length} broken, ${redirects.length} redirects`;
  });
  return {
    label: `genapi (link_report) found no broken link and no redirect on the ${site.pages}-page site, which has none`,
    passed: details.length > 0 && details.every((d) => d === "empty"),
    detail: `per run: ${details.join("; ")}`,
  };
}

function genapiSetCheck(site: Site, list: CrawlRun[]): Check {
  const details = list.map((run) => {
    if (run.paths === undefined) return `no sitemap (${run.error ?? "truncated"})`;
    const found = new Set(run.paths);
    const missingCount = [...site.expected].filter((path) => !found.has(path)).length;
    const extra = [...found].filter((path) => !site.expected.has(path));
    return missingCount === 0 && extra.length === 0 && run.complete
      ? "exact"
      : `${missingCount} missing, ${extra.length} extra${extra.length ? ` (e.g. ${extra[0]})` : ""}${run.complete ? "" : ", truncated"}`;
  });
  return {
    label: `genapi listed exactly the ${site.pages} pages of the site`,
    passed: details.length > 0 && details.every((d) => d === "exact"),
    detail: `per run: ${details.join("; ")}`,
  };
}

/**
 * What the counting runs show: wget2's one-GET mode fetches every page exactly once, and every
 * timed run of a full crawler made as many requests as its counting run (so the timed runs did
 * the same work as the one that was counted).
 */
function countingChecks(site: Site, crawlers: Crawler[], runs: Map<string, CrawlRun[]>, counted: Map<string, CrawlRun>): Check[] {
  const checks: Check[] = [];
  const get = counted.get(WGET2_MODES.get.label)?.detail;
  if (get) {
    checks.push({
      label: `${WGET2_MODES.get.label} fetched each of the ${site.pages} pages once, with no HEAD`,
      passed: get.pageGets === site.pages && get.distinctPages === site.pages && get.heads === 0,
      detail: `counting run: ${fmt(get.pageGets)} page GETs of ${fmt(get.distinctPages)} distinct pages, ${fmt(get.gets)} GETs and ${fmt(get.heads)} HEADs in all`,
    });
  }
  const same = crawlers.flatMap((crawler) => {
    const expected = counted.get(crawler.name)?.requests;
    const timed = runs.get(crawler.name)!.flatMap((run) => (run.error || run.requests === undefined ? [] : [run.requests]));
    if (expected === undefined || timed.length === 0) return [];
    return [{ name: crawler.name, expected, timed, ok: timed.every((n) => n === expected) }];
  });
  if (same.length > 0) {
    checks.push({
      label: "every timed full crawl made as many requests as its counting run",
      passed: same.every((s) => s.ok),
      detail: same
        .map((s) => `${s.name}: ${fmt(s.expected)}${s.ok ? "" : ` counted, timed runs ${[...new Set(s.timed)].map(fmt).join(", ")}`}`)
        .join("; "),
    });
  }
  return checks;
}

/**
 * genapi's URLs against linkchecker's, as paths (each ran against its own server's origin).
 * linkchecker lists a page under the first link it followed to it, fragment included
 * ("/a.html#comments"); a fragment names a place in a page, not a page, so it is removed first.
 */
function precisionRecall(found: string[], reference: string[]) {
  const ours = new Set(found);
  const theirs = new Set(reference.map((path) => path.replace(/#.*$/, "")));
  const both = [...ours].filter((path) => theirs.has(path)).length;
  return { precision: ours.size ? both / ours.size : 0, recall: theirs.size ? both / theirs.size : 0 };
}

// ---------------------------------------------------------------------------------------------
// The crawlers

/** A variant of genapi's crawl: its row's name and the body fields it adds. */
interface Variant {
  name: string;
  body: Record<string, boolean>;
}
/** Target: within 15% of genapi's pages/s. */
const EXTRACTION: Variant = { name: "genapi (alternates, images)", body: { alternates: true, images: true } };
/** Target: CPU per page and peak RSS within LINK_REPORT_COST of genapi's. */
const LINK_REPORT: Variant = { name: "genapi (link_report)", body: { link_report: true } };
const LINK_REPORT_COST = 1.1;

function genapiCrawler(ctx: Context, variant?: Variant): Crawler {
  const binary = ctx.binaries.genapi;
  const options = variant?.body;
  const extra = options
    ? Object.keys(options)
        .map((key) => `, "${key}": true`)
        .join("")
    : "";
  return {
    name: variant?.name ?? "genapi",
    limitAs: variant ? "genapi" : undefined,
    command: `taskset -c ${CORES.server} genapi serve --allow-private-targets --max-pages ${MAX_PAGES} ...; POST /api/generate {"url": "http://127.0.0.1:$SITE/"${extra}}`,
    async crawl(_site, server, limitSeconds) {
      const db = newDb(ctx.workDir);
      const key = createKey(binary, db, 10_000_000);
      const args = ["--allow-private-targets", "--max-pages", String(MAX_PAGES), "--crawl-timeout", String(Math.min(3600, limitSeconds))];
      const genapi = await startGenapi(binary, ctx.workDir, args, db);
      try {
        await server.reset();
        const cpuBefore = await cpuSeconds(genapi.pid);
        const begin = performance.now();
        const res = await fetch(`${genapi.url}/api/generate`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: JSON.stringify({ url: `${server.url}/`, ...options }),
          signal: AbortSignal.timeout((limitSeconds + 10) * 1000),
        });
        const body = (await res.json()) as {
          data?: { sitemap: string; truncated: boolean; pages_crawled: number; links?: CrawlRun["links"] };
        };
        const wallSeconds = (performance.now() - begin) / 1000;
        const cpu = (await cpuSeconds(genapi.pid)) - cpuBefore;
        const counts = await server.counts();
        const peak = await peakRss(genapi.pid);
        if (res.status !== 200 || body.data === undefined) {
          return { ...failedRun(`HTTP ${res.status}: ${JSON.stringify(body).slice(0, 200)}`), wallSeconds, ...fromCounts(counts) };
        }
        const pages = body.data.pages_crawled;
        return {
          pagesPerSecond: pages / wallSeconds,
          pagesServed: pages,
          ...fromCounts(counts),
          complete: !body.data.truncated,
          wallSeconds,
          peakRssBytes: peak,
          cpuSeconds: cpu,
          paths: paths(locs(body.data.sitemap), server.url),
          ...(body.data.links ? { links: body.data.links } : {}),
        };
      } finally {
        await genapi.stop();
      }
    },
  };
}

/** `genapi crawl`: the command line, timed from exec to exit like the other commands. */
function genapiCliCrawler(ctx: Context): Crawler {
  const args = (url: string, out: string) => ["crawl", url, "--output", out, "--json", "--quiet", "--max-pages", String(MAX_PAGES)];
  return {
    name: "genapi crawl",
    limitAs: "genapi",
    command: `taskset -c ${CORES.server} genapi ${args("http://127.0.0.1:$SITE/", "$OUT/sitemap.xml").join(" ")}`,
    async crawl(site, server, limitSeconds) {
      const dir = mkdtempSync(join(ctx.workDir, "genapi-crawl-"));
      const out = join(dir, "sitemap.xml");
      const argv = [ctx.binaries.genapi, ...args(`${server.url}/`, out), "--crawl-timeout", String(Math.min(3600, limitSeconds))];
      const result = await spawnCrawler(ctx, argv, site, server, limitSeconds, dir);
      if (!result.complete) return result;
      // --json: the crawl report on stderr; pages_crawled counts page requests (robots.txt not).
      const report = JSON.parse((await Bun.file(join(dir, "stderr.log")).text()).trim().split("\n").at(-1)!) as {
        pages_crawled: number;
        truncated: boolean;
      };
      const pages = report.pages_crawled;
      return {
        ...result,
        pagesServed: pages,
        pagesPerSecond: pages / result.wallSeconds,
        complete: !report.truncated,
        paths: paths(locs(await Bun.file(out).text()), server.url),
      };
    },
  };
}

function wget2Crawler(ctx: Context, mode: Wget2Mode, threads: number): Crawler {
  const tool = ctx.tools.wget2;
  const args = (url: string) => [
    ...WGET2_MODES[mode].args,
    "--recursive",
    "--level=0",
    `--max-threads=${threads}`,
    "--no-parent",
    "--no-directories",
    "--quiet",
    url,
  ];
  return {
    name: WGET2_MODES[mode].label,
    limitAs: "wget2",
    tool,
    command: `taskset -c ${CORES.server} wget2 ${args("http://127.0.0.1:$SITE/").join(" ")}`,
    // wget2 reports no count: a run that ended well fetched the site (the counting run shows how,
    // and every timed run is checked to have made as many requests).
    crawl: (site, server, limitSeconds) => spawnCrawler(ctx, [...tool.argv!, ...args(`${server.url}/`)], site, server, limitSeconds),
  };
}

function linkcheckerCrawler(ctx: Context): Crawler {
  const tool = ctx.tools.linkchecker;
  // Its default of 10 requests/s per host is lifted by the site's "LinkChecker" header plus this setting.
  const config = join(ctx.workDir, "linkcheckerrc");
  writeFileSync(config, "[checking]\nmaxrequestspersecond=1000000\n");
  const args = (url: string, out: string) => [
    "-f",
    config,
    "--threads",
    String(CONCURRENCY),
    "--no-status",
    "--no-warnings",
    "-o",
    "none",
    "-F",
    `sitemap/utf-8/${out}`,
    url,
  ];
  return {
    name: "linkchecker",
    tool,
    command: `taskset -c ${CORES.server} linkchecker ${showCommand(args("http://127.0.0.1:$SITE/", "$OUT/sitemap.xml"), { [config]: "$RC" })}  # $RC: [checking] maxrequestspersecond=1000000`,
    async crawl(site, server, limitSeconds) {
      // linkchecker run as root drops to "nobody": its output directory must be writable by it.
      const dir = mkdtempSync(join(ctx.workDir, "linkchecker-"));
      chmodSync(dir, 0o777);
      const out = join(dir, "sitemap.xml");
      const result = await spawnCrawler(ctx, [...tool.argv!, ...args(`${server.url}/`, out)], site, server, limitSeconds, dir);
      return result.complete ? { ...result, paths: paths(locs(await Bun.file(out).text()), server.url) } : result;
    },
  };
}

function sitemapGeneratorCrawler(ctx: Context): Crawler {
  const tool = ctx.tools.sitemapGenerator;
  const args = (url: string, out: string) => ["--max-concurrency", String(CONCURRENCY), "--filepath", out, url];
  return {
    name: "sitemap-generator-cli",
    tool,
    command: `taskset -c ${CORES.server} node --require $PEERS/unthrottle.cjs $PEERS/node_modules/sitemap-generator-cli/index.js ${args("http://127.0.0.1:$SITE/", "$OUT/sitemap.xml").join(" ")}`,
    async crawl(site, server, limitSeconds) {
      const dir = mkdtempSync(join(ctx.workDir, "sitemap-generator-"));
      const out = join(dir, "sitemap.xml");
      const result = await spawnCrawler(ctx, [...tool.argv!, ...args(`${server.url}/`, out)], site, server, limitSeconds, dir);
      return result.complete ? { ...result, paths: paths(locs(await Bun.file(out).text()), server.url) } : result;
    },
  };
}

/**
 * Runs a crawler process pinned to the crawler core until it exits or `limitSeconds` pass. A crawl
 * that ends by itself: the pages the server counted (the counting server) or, when it counts only
 * requests, the site's pages (wget2 reports none; the callers that know better fill in their own),
 * over the wall time. A crawl stopped at the time box: the counting server's pages, from the first
 * to the last one served.
 */
async function spawnCrawler(
  ctx: Context,
  argv: string[],
  site: Site,
  server: SiteServer,
  limitSeconds: number,
  cwd?: string,
): Promise<CrawlRun> {
  const dir = cwd ?? mkdtempSync(join(ctx.workDir, "crawler-"));
  await server.reset();
  const begin = performance.now();
  const proc = Bun.spawn(pinned(CORES.server, argv), {
    cwd: dir,
    stdin: "ignore",
    stdout: Bun.file(join(dir, "stdout.log")),
    stderr: Bun.file(join(dir, "stderr.log")),
  });
  const sampler = sampleUsage(proc.pid);
  const stopped = !(await settlesWithin(proc.exited, limitSeconds * 1000));
  const usage = await sampler.stop();
  if (stopped) {
    proc.kill("SIGTERM");
    if (!(await settlesWithin(proc.exited, 3_000))) proc.kill("SIGKILL");
  }
  const code = await proc.exited;
  const wallSeconds = (performance.now() - begin) / 1000;
  const counts = await server.counts();
  const detail = counts.detail;
  const complete = !stopped && code === 0;
  const pagesServed = detail?.pageGets ?? (complete ? site.pages : 0);
  const span = detail ? (detail.lastPageAt - detail.firstPageAt) / 1000 : 0;
  const result: CrawlRun = {
    pagesServed,
    pagesPerSecond: complete ? pagesServed / wallSeconds : detail && detail.pageGets > 1 && span > 0 ? (detail.pageGets - 1) / span : 0,
    ...fromCounts(counts),
    wallSeconds,
    ...usage,
    complete,
  };
  // A crawler that exited by itself: its exact CPU time from wait4 (the last sample may be 20 ms old).
  const rusage = stopped ? undefined : proc.resourceUsage()?.cpuTime;
  if (rusage) result.cpuSeconds = Number(rusage.total) / 1e6;
  if (!stopped && code !== 0) {
    const stderr = await Bun.file(join(dir, "stderr.log"))
      .text()
      .catch(() => "");
    result.error = `exit code ${code}: ${stderr.trim().split("\n").slice(-2).join(" / ").slice(0, 300)}`;
  }
  return result;
}

function fromCounts(counts: SiteCounts): Pick<CrawlRun, "requests" | "detail"> {
  return { requests: counts.requests, detail: counts.detail };
}

function failedRun(error: string): CrawlRun {
  return { pagesPerSecond: 0, pagesServed: 0, complete: false, wallSeconds: 0, error };
}

function fmt(n: number): string {
  return n.toLocaleString("en-US");
}

/** The <loc> URLs of a sitemap. */
function locs(xml: string): string[] {
  const entities: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'" };
  return [...xml.matchAll(/<loc>\s*([^<]*?)\s*<\/loc>/g)].map((m) => m[1]!.replace(/&(amp|lt|gt|quot|apos);/g, (e) => entities[e]!));
}

/** URLs of `origin` as paths (with query and fragment); others stay whole, so they never match a page. */
function paths(urls: string[], origin: string): string[] {
  return urls.map((url) => (url.startsWith(`${origin}/`) ? url.slice(origin.length) : url));
}

function writeWrkScript(dir: string): string {
  const path = join(dir, "pages.lua");
  writeFileSync(
    path,
    `-- Requests every page of the site in turn (the list comes from BENCH_PATHS).
local paths = {}
for line in io.lines(os.getenv("BENCH_PATHS")) do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
`,
  );
  return path;
}

function measureParseCeiling(site: Site, seconds: number): number {
  const out = run(pinned(CORES.server, [BUN, join(import.meta.dir, "parse-ceiling.ts"), site.dir, site.pathsFile, String(seconds)]), {
    cwd: ROOT,
  });
  return (JSON.parse(out) as { pagesPerSecond: number }).pagesPerSecond;
}

function names(ctx: Context, site: Site): Record<string, string> {
  return { [site.url]: "http://127.0.0.1:$SITE", [ctx.workDir]: "$WORK", [site.pathsFile]: "$PATHS" };
}
