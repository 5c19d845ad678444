// 2. and 3. Crawl throughput and memory: genapi's /api/generate against the tools a user would
// otherwise pick (linkchecker, wget2 --spider, sitemap-generator-cli) on the synthetic site, and
// against the ceilings: wrk fetching the same pages from the same server, and genapi's own page
// parser with no network at all. "genapi (link_report)" is the same crawl with the link report on
// (issue 24: CPU per page and peak RSS within 10% of genapi's); (The standalone link-report-cost.ts of the link report's branch was not merged.)
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultCrawlLimits } from "../../src/crawler/index.ts";
import type { Context } from "./context.ts";
import { CORES, cpuSeconds, peakRss, pinned, run, sampleUsage, settlesWithin, showCommand } from "./proc.ts";
import { missing, ratios, row, summarize, type Check, type Row, type SectionResult, type Table, type Target } from "./results.ts";
import { generateSite } from "./site.ts";
import { BUN, createKey, newDb, ROOT, startGenapi, startServer } from "./servers.ts";
import type { Counts } from "./static-server.ts";
import type { Tool } from "./tools.ts";
import { runWrk, wrkArgv } from "./wrk.ts";

/** Requests in flight: genapi's own per-crawl concurrency, which every peer is raised to. */
const CONCURRENCY = defaultCrawlLimits.concurrency;
const MAX_PAGES = 50_000;

export interface Site {
  url: string;
  control: string;
  dir: string;
  pathsFile: string;
  pages: number;
  expected: Set<string>;
}

export interface CrawlRun {
  /** Pages served per second between the first and the last page the crawler fetched. */
  pagesPerSecond: number;
  pagesServed: number;
  /** The crawler finished by itself (not stopped at the time box, no error). */
  complete: boolean;
  wallSeconds: number;
  peakRssBytes?: number;
  cpuSeconds?: number;
  /** The URLs of the sitemap it wrote, when it wrote one. */
  urls?: string[];
  /** genapi with link_report: its data.links. */
  links?: { broken: unknown[]; redirects: unknown[]; truncated: boolean };
  error?: string;
}

export interface Crawler {
  name: string;
  /** Another crawler whose time limit this one shares (a variant of it). */
  limitAs?: string;
  tool?: Tool;
  /** The command line as the report shows it. */
  command: string;
  crawl(site: Site, limitSeconds: number): Promise<CrawlRun>;
}

export async function crawlBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const tables: Table[] = [];
  const checks: Check[] = [];
  const targets: Target[] = [];
  for (const [index, pages] of ctx.plan.sitePages.entries()) {
    const site = await serveSite(ctx, pages);
    try {
      const result = await benchSite(ctx, site.site, index === 0);
      tables.push(result.table);
      checks.push(...result.checks);
      targets.push(...result.targets);
    } finally {
      await site.stop();
      rmSync(site.site.dir, { recursive: true, force: true });
    }
  }
  return { id: "crawl", title: "Crawl throughput and memory", tables, checks, targets, seconds: (performance.now() - started) / 1000 };
}

/** Generates the site and serves it, pinned to the load core (the crawlers get the other one). */
export async function serveSite(ctx: Pick<Context, "log" | "workDir">, pages: number) {
  ctx.log(`crawl: generating a site of ${pages} pages`);
  const dir = join(ctx.workDir, `site-${pages}`);
  const layout = generateSite(dir, pages);
  const pathsFile = join(ctx.workDir, `paths-${pages}.txt`);
  writeFileSync(pathsFile, `${layout.paths.join("\n")}\n`);
  const server = await startServer([BUN, join(import.meta.dir, "static-server.ts"), dir], ctx.workDir, CORES.load, 180_000);
  const { control } = JSON.parse(server.line) as { control: string };
  const expected = new Set(layout.paths.map((path) => `${server.url}${path}`));
  ctx.log(`crawl: serving ${pages} pages (${(layout.htmlBytes / 1e6).toFixed(0)} MB of HTML) at ${server.url}`);
  return { site: { url: server.url, control, dir, pathsFile, pages, expected }, stop: server.stop };
}

async function benchSite(ctx: Context, site: Site, referenceRun: boolean) {
  const { plan, tools } = ctx;
  // "genapi (alternates, images)": the same crawl with both extraction options on (issue 11: within 15% of genapi's pages/s).
  const crawlers = [
    genapiCrawler(ctx),
    genapiCrawler(ctx, EXTRACTION),
    genapiCrawler(ctx, LINK_REPORT),
    wget2Crawler(ctx),
    linkcheckerCrawler(ctx),
    sitemapGeneratorCrawler(ctx),
  ];
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
      const limit = plan.fullCrawlTools.includes(crawler.limitAs ?? crawler.name) ? plan.crawlLimitSeconds : plan.crawlTimeBoxSeconds;
      const result = await crawler.crawl(site, limit).catch((error: Error): CrawlRun => failedRun(error.message));
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

  // The same URL set as linkchecker: from a complete run of it, made here when the timed runs were cut.
  const linkchecker = crawlers.find((c) => c.name === "linkchecker")!;
  let reference = runs.get("linkchecker")!.find((run) => run.complete)?.urls;
  if (reference === undefined && referenceRun && linkchecker.tool?.argv) {
    ctx.log(`crawl ${site.pages}: one complete linkchecker run for the URL-set comparison`);
    const full = await linkchecker.crawl(site, plan.crawlLimitSeconds).catch((error: Error) => failedRun(error.message));
    reference = full.complete ? full.urls : undefined;
  }

  const genapiRuns = runs.get("genapi")!;
  const rate = (list: CrawlRun[]) => list.map((run) => (run.error ? Number.NaN : run.pagesPerSecond));
  const genapiRates = rate(genapiRuns);
  const vs = (others: number[]) => summarize(ratios(genapiRates, others).filter(Number.isFinite));
  const rows: Row[] = crawlers.map((crawler) =>
    crawlerRow(crawler, runs.get(crawler.name)!, site, crawler.name === "genapi" ? undefined : vs(rate(runs.get(crawler.name)!))),
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
        command: `taskset -c ${CORES.server} bun scripts/bench/parse-ceiling.ts $SITE $PATHS ${plan.wrkSeconds / 2}`,
        note: "decodeHtml + extractPage (src/crawler/html/links.ts) over the site's pages in memory, one core, no network",
      },
    ),
  );

  const checks: Check[] = [genapiSetCheck(site, genapiRuns), linkReportCheck(site, runs.get(LINK_REPORT.name)!)];
  const lastGenapi = genapiRuns.findLast((run) => run.urls !== undefined)?.urls;
  const agreement = reference && lastGenapi ? precisionRecall(lastGenapi, reference) : undefined;
  if (agreement) {
    checks.push({
      label: `genapi's URL set equals linkchecker's on the ${site.pages}-page site`,
      passed: agreement.precision === 1 && agreement.recall === 1,
      detail: `precision ${agreement.precision.toFixed(4)}, recall ${agreement.recall.toFixed(4)}; linkchecker's sitemap has ${reference!.length} URLs, ${reference!.filter((url) => url.includes("#")).length} of them with a fragment, compared without it`,
    });
  }
  return {
    table: {
      title: `Crawl of the ${site.pages.toLocaleString("en-US")}-page site`,
      columns: ["pages/s", "wall s", "peak RSS MB", "CPU ms per page", "genapi ÷ this"],
      rows,
      notes: crawlNotes(ctx, site, crawlers),
    },
    checks,
    targets: crawlTargets(site, rows, genapiRuns, runs.get(LINK_REPORT.name)!, agreement, referenceRun, runs.get("wget2")!),
  };
}

function crawlerRow(crawler: Crawler, list: CrawlRun[], site: Site, ratio: ReturnType<typeof summarize>): Row {
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
      ? `crawled the whole site in every run (${Math.min(...served)}-${Math.max(...served)} page fetches)`
      : `stopped at the time box in ${ok.length - complete.length} of ${ok.length} runs, after ${Math.min(...served)}-${Math.max(...served)} of ${site.pages} pages: rate, memory and CPU are those of that part of the crawl`;
  return row(
    crawler.name,
    {
      "pages/s": summarize(ok.map((run) => run.pagesPerSecond)),
      "wall s": complete.length === ok.length ? summarize(ok.map((run) => run.wallSeconds)) : undefined,
      "peak RSS MB": summarize(ok.flatMap((run) => (run.peakRssBytes === undefined ? [] : [run.peakRssBytes / 1e6]))),
      "CPU ms per page": summarize(ok.flatMap((run) => (run.cpuSeconds === undefined ? [] : [(run.cpuSeconds / run.pagesServed) * 1000]))),
      "genapi ÷ this": ratio,
    },
    { ...extra, note: errors.length > 0 ? `${how}; failed runs: ${errors.join("; ")}` : how },
  );
}

function crawlNotes(ctx: Context, site: Site, crawlers: Crawler[]): string[] {
  const { plan } = ctx;
  const timeBoxed = crawlers.filter((c) => !plan.fullCrawlTools.includes(c.limitAs ?? c.name)).map((c) => c.name);
  return [
    `Site: ${site.pages.toLocaleString("en-US")} generated HTML pages of 15-30 KB with about 20 internal links each (root-relative, relative, \`./\`, with and without fragments), robots.txt allowing all, served from memory by scripts/bench/static-server.ts (Bun.serve) pinned to core ${CORES.load}; every crawler is pinned to core ${CORES.server} and keeps ${CONCURRENCY} requests in flight (genapi's per-crawl concurrency).`,
    `pages/s: HTML pages the server sent to the crawler, divided by the time from the first to the last of them (process start-up is not counted).`,
    timeBoxed.length === 0
      ? "Every crawler crawls the whole site every run."
      : `${plan.fullCrawlTools.join(" and ")} crawl the whole site every run; ${timeBoxed.join(" and ")} are stopped after ${plan.crawlTimeBoxSeconds} s, as they would need minutes per site and run. That favours them: the slow end of a crawl, with the largest queues and the sitemap writing, is left out.`,
    "peak RSS: the crawler process's VmHWM (genapi: after the crawl, a fresh server per run, so start-up included; the others: sampled every 20 ms until they exit or are stopped). CPU ms per page: user + system time of the crawler process (genapi: during the crawl, from /proc/PID/stat; the others: from exec to exit, from wait4's rusage, or up to the stop at the time box) over the pages it fetched.",
    "genapi ÷ this: genapi's pages/s divided by this row's, run by run (each run measures every crawler back to back), then median, min and max.",
    `genapi runs \`genapi serve --allow-private-targets --max-pages ${MAX_PAGES}\` and crawls through \`POST /api/generate\`; a fresh server and database per run.`,
  ];
}

function crawlTargets(
  site: Site,
  rows: Row[],
  genapiRuns: CrawlRun[],
  linkReportRuns: CrawlRun[],
  agreement: { precision: number; recall: number } | undefined,
  referenceRun: boolean,
  wget2Runs: CrawlRun[],
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
  const targets = [versus("linkchecker", 3), versus("sitemap-generator-cli", 3), versus("wget2", 1)];
  targets.push(...linkReportTargets(size, genapiRuns, linkReportRuns));
  // Issue 16: CPU per page at most wget2's, compared run by run (both crawl the whole site every run).
  const cpuPerPage = (list: CrawlRun[]) =>
    list.map((run) =>
      run.error || run.cpuSeconds === undefined || run.pagesServed === 0 ? Number.NaN : (run.cpuSeconds / run.pagesServed) * 1000,
    );
  const cpu = summarize(ratios(cpuPerPage(genapiRuns), cpuPerPage(wget2Runs)).filter(Number.isFinite));
  const ms = (list: CrawlRun[]) => summarize(cpuPerPage(list).filter(Number.isFinite))?.median.toFixed(3);
  targets.push({
    label: `crawl ${size}: genapi CPU ms per page vs wget2`,
    goal: "≤ 1.0× (genapi ÷ wget2)",
    measured: cpu === undefined ? "not measured" : `${cpu.median.toFixed(2)}× (${ms(genapiRuns)} vs ${ms(wget2Runs)} ms)`,
    met: cpu === undefined ? undefined : cpu.median <= 1,
  });
  if (site.pages >= 50_000) {
    const rss = summarize(genapiRuns.flatMap((run) => (run.peakRssBytes === undefined ? [] : [run.peakRssBytes / 1e6])));
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
export function linkReportTargets(size: string, plain: CrawlRun[], report: CrawlRun[]): Target[] {
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
    if (run.urls === undefined) return `no sitemap (${run.error ?? "truncated"})`;
    const found = new Set(run.urls);
    const missingCount = [...site.expected].filter((url) => !found.has(url)).length;
    const extra = [...found].filter((url) => !site.expected.has(url));
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
 * genapi's URLs against linkchecker's. linkchecker lists a page under the first link it followed
 * to it, fragment included ("/a.html#comments"); a fragment names a place in a page, not a page, so
 * it is removed before comparing.
 */
function precisionRecall(found: string[], reference: string[]) {
  const ours = new Set(found);
  const theirs = new Set(reference.map((url) => url.replace(/#.*$/, "")));
  const both = [...ours].filter((url) => theirs.has(url)).length;
  return { precision: ours.size ? both / ours.size : 0, recall: theirs.size ? both / theirs.size : 0 };
}

// ---------------------------------------------------------------------------------------------
// The crawlers

/** A variant of genapi's crawl: its row's name and the body fields it adds. */
interface Variant {
  name: string;
  body: Record<string, boolean>;
}
/** Issue 11: within 15% of genapi's pages/s. */
const EXTRACTION: Variant = { name: "genapi (alternates, images)", body: { alternates: true, images: true } };
/** Issue 24: CPU per page and peak RSS within LINK_REPORT_COST of genapi's. */
export const LINK_REPORT: Variant = { name: "genapi (link_report)", body: { link_report: true } };
export const LINK_REPORT_COST = 1.1;

export function genapiCrawler(ctx: Pick<Context, "binaries" | "workDir">, variant?: Variant): Crawler {
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
    async crawl(site, limitSeconds) {
      const db = newDb(ctx.workDir);
      const key = createKey(binary, db, 10_000_000);
      const args = ["--allow-private-targets", "--max-pages", String(MAX_PAGES), "--crawl-timeout", String(Math.min(3600, limitSeconds))];
      const server = await startGenapi(binary, ctx.workDir, args, db);
      try {
        await fetch(`${site.control}/reset`);
        const cpuBefore = await cpuSeconds(server.pid);
        const begin = performance.now();
        const res = await fetch(`${server.url}/api/generate`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: JSON.stringify({ url: `${site.url}/`, ...options }),
          signal: AbortSignal.timeout((limitSeconds + 10) * 1000),
        });
        const body = (await res.json()) as { data?: { sitemap: string; truncated: boolean; links?: CrawlRun["links"] } };
        const wallSeconds = (performance.now() - begin) / 1000;
        const counts = await stats(site);
        const base = {
          ...measured(counts, wallSeconds),
          peakRssBytes: await peakRss(server.pid),
          cpuSeconds: (await cpuSeconds(server.pid)) - cpuBefore,
        };
        if (res.status !== 200 || body.data === undefined)
          return { ...base, complete: false, error: `HTTP ${res.status}: ${JSON.stringify(body).slice(0, 200)}` };
        const run: CrawlRun = { ...base, complete: !body.data.truncated, urls: locs(body.data.sitemap) };
        if (body.data.links) run.links = body.data.links;
        return run;
      } finally {
        await server.stop();
      }
    },
  };
}

function wget2Crawler(ctx: Context): Crawler {
  const tool = ctx.tools.wget2;
  const args = (url: string) => [
    "--spider",
    "--recursive",
    "--level=0",
    `--max-threads=${CONCURRENCY}`,
    "--no-parent",
    "--no-directories",
    "--quiet",
    url,
  ];
  return {
    name: "wget2",
    tool,
    command: `taskset -c ${CORES.server} wget2 ${args("http://127.0.0.1:$SITE/").join(" ")}`,
    crawl: (site, limitSeconds) => spawnCrawler(ctx, [...tool.argv!, ...args(`${site.url}/`)], site, limitSeconds),
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
    async crawl(site, limitSeconds) {
      // linkchecker run as root drops to "nobody": its output directory must be writable by it.
      const dir = mkdtempSync(join(ctx.workDir, "linkchecker-"));
      chmodSync(dir, 0o777);
      const out = join(dir, "sitemap.xml");
      const result = await spawnCrawler(ctx, [...tool.argv!, ...args(`${site.url}/`, out)], site, limitSeconds, dir);
      return result.complete ? { ...result, urls: locs(await Bun.file(out).text()) } : result;
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
    async crawl(site, limitSeconds) {
      const dir = mkdtempSync(join(ctx.workDir, "sitemap-generator-"));
      const out = join(dir, "sitemap.xml");
      const result = await spawnCrawler(ctx, [...tool.argv!, ...args(`${site.url}/`, out)], site, limitSeconds, dir);
      return result.complete ? { ...result, urls: locs(await Bun.file(out).text()) } : result;
    },
  };
}

/** Runs a crawler process pinned to the crawler core until it exits or `limitSeconds` pass. */
async function spawnCrawler(ctx: Context, argv: string[], site: Site, limitSeconds: number, cwd?: string): Promise<CrawlRun> {
  const dir = cwd ?? mkdtempSync(join(ctx.workDir, "crawler-"));
  await fetch(`${site.control}/reset`);
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
  const counts = await stats(site);
  const result: CrawlRun = { ...measured(counts, wallSeconds), ...usage, complete: !stopped && code === 0 };
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

function failedRun(error: string): CrawlRun {
  return { pagesPerSecond: 0, pagesServed: 0, complete: false, wallSeconds: 0, error };
}

async function stats(site: Site): Promise<Counts> {
  return (await (await fetch(`${site.control}/stats`)).json()) as Counts;
}

function measured(counts: Counts, wallSeconds: number) {
  const span = (counts.lastPageAt - counts.firstPageAt) / 1000;
  return { pagesServed: counts.pages, pagesPerSecond: counts.pages > 1 && span > 0 ? (counts.pages - 1) / span : 0, wallSeconds };
}

/** The <loc> URLs of a sitemap. */
function locs(xml: string): string[] {
  const entities: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'" };
  return [...xml.matchAll(/<loc>\s*([^<]*?)\s*<\/loc>/g)].map((m) => m[1]!.replace(/&(amp|lt|gt|quot|apos);/g, (e) => entities[e]!));
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
