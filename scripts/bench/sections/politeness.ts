// Politeness toward crawled sites, three measurements:
// - A site that throttles (scripts/bench/fixtures/rate-limited-site.ts: 20-200 ms a page, 429 with
//   Retry-After: 1 past 20 request arrivals a second), crawled by `genapi crawl` at its defaults, by
//   Crawlee's CheerioCrawler at its own defaults and tuned to the same limits, and by wget2 paced
//   with --wait: time, pages listed, 429s received, most requests in flight. One run each: at full
//   size each takes about 100 s, and the site's pace, not the machine, sets the time.
// - A crawl that ends with throttled and failed pages says so: its summary line and its report.
// - The synthetic 10,000-page site on loopback, politeness at its defaults against the same build
//   with it switched off (--host-concurrency 64): the contract's "at least 0.9x".
// - What the limiter costs a request, alone and sharing the host through SQLite and PostgreSQL
//   (limiter-cost.ts, in this process).
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Context } from "../harness/context.ts";
import { limiterCost } from "./limiter-cost.ts";
import { CORES, pinned, run, settlesWithin, which } from "../harness/proc.ts";
import { type RateLimitedSite, type SiteFigures, startRateLimitedSite } from "../fixtures/rate-limited-site.ts";
import {
  type Check,
  missing,
  ratios,
  row,
  type Row,
  type SectionResult,
  type Summary,
  summarize,
  type Table,
  type Target,
} from "../harness/results.ts";
import { generateSite } from "../fixtures/site.ts";
import { serveSite } from "../fixtures/site-server.ts";
import { PEERS_DIR, type Tool } from "../harness/tools.ts";

/** The site's limit: request arrivals in any one second. */
const RATE = 20;
/** genapi's default --host-concurrency: the cap no crawler should pass. */
const CAP = 4;
/** Crawlee tuned to the same limits: the issue's figures (19 requests a second, under the site's 20). */
const CRAWLEE_TUNED = { maxConcurrency: CAP, maxRequestsPerMinute: 1140, maxRequestRetries: 3 };
/** wget2 waits --wait between downloads *per thread*: 4 threads x 1 / 0.2 s = 20 requests/s at most. */
const WGET2_THREADS = CAP;
const WGET2_WAIT = (WGET2_THREADS / RATE).toFixed(2);
const CRAWLEE = "crawlee@3.18.1";
/** Above the synthetic site's sizes, so no crawl is cut by its page budget. */
const MAX_PAGES = 50_000;
/** The summary-line check's site: its pages answered the same error every time (those under its size). */
const BROKEN: Record<string, number> = { "/page/5.html": 500, "/page/7.html": 429, "/page/10.html": 503 };

interface PeerRun {
  code: number;
  wallSeconds: number;
  cpuSeconds: number;
  stderr: string;
  figures: SiteFigures;
  /** Pages the crawler says it listed or visited (genapi's sitemap, Crawlee's handler); undefined: it keeps no list. */
  listed?: number;
  /** Listed pages that are not the site's, or site pages it did not list. */
  listMismatch?: string;
  note?: string;
}

interface Peer {
  label: string;
  tool?: Tool;
  command: string;
  crawl(site: RateLimitedSite): Promise<PeerRun>;
}

export async function politenessBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const crawlee = crawleeTool(ctx.plan.installPeers, ctx.log);
  const pages = ctx.plan.politenessPages;
  const allowedSeconds = (pages + 1) / RATE;

  // 1. The rate-limited site, one crawler at a time, each on a fresh site.
  const peers = [genapiPeer(ctx), crawleePeer(ctx, crawlee, "defaults"), crawleePeer(ctx, crawlee, "tuned"), wget2Peer(ctx)];
  const peerRows: Row[] = [];
  let genapiRun: PeerRun | undefined;
  for (const peer of peers) {
    if (peer.tool !== undefined && peer.tool.argv === undefined) {
      peerRows.push(missing(peer.label, "not installed", peer.tool.note ?? "not installed", { command: peer.command }));
      continue;
    }
    ctx.log(`politeness: ${peer.label} on the rate-limited site (${pages} pages)`);
    const site = startRateLimitedSite({ pages, ratePerSecond: RATE });
    try {
      const result = await peer.crawl(site);
      ctx.log(
        `politeness: ${peer.label}: ${result.figures.pagesServed} pages served, ${result.figures.throttled} 429s, ${result.figures.requests} requests, ${result.figures.spanSeconds.toFixed(1)} s`,
      );
      if (peer.label === "genapi crawl") genapiRun = result;
      peerRows.push(peerRow(peer, result, pages, allowedSeconds));
    } catch (error) {
      peerRows.push(missing(peer.label, "failed", (error as Error).message, { command: peer.command, version: peer.tool?.version }));
    } finally {
      await site.stop();
    }
  }

  // 2. Throttled and failed pages named by the summary line and counted by the report.
  // Small: after a page that keeps answering 429/503, genapi goes on at about a request a second.
  const summaryCheck = await summaryLineCheck(ctx, Math.min(60, Math.max(10, Math.ceil(pages / 3))));

  // 3. The loopback site, politeness at its defaults and switched off.
  const loopback = await loopbackBench(ctx);

  // 4. What the limiter costs a request, alone and through each store.
  ctx.log("politeness: the limiter's cost a request");
  const cost = await limiterCost(ctx, pages * 50).catch(
    (error: Error): Table => ({
      title: "What the per-host limiter costs a request",
      columns: [],
      rows: [missing("limiter", "failed", error.message)],
      notes: [],
    }),
  );

  const checks: Check[] = [];
  if (genapiRun !== undefined) {
    const reported = reportOf(genapiRun.stderr)?.politeness?.throttled;
    checks.push({
      label: "genapi's report counts the 429s the rate-limited site sent it",
      passed: reported === genapiRun.figures.throttled,
      detail: `report: ${reported ?? "none"}, site: ${genapiRun.figures.throttled}`,
    });
    checks.push({
      label: `genapi's sitemap lists exactly the ${pages.toLocaleString("en-US")} pages of the rate-limited site`,
      passed: genapiRun.listMismatch === undefined && genapiRun.listed === pages,
      detail: genapiRun.listMismatch ?? `${genapiRun.listed} URLs`,
    });
  }
  checks.push(...summaryCheck.checks);

  const g = genapiRun?.figures;
  const size = `${pages.toLocaleString("en-US")} pages`;
  const ratio = g ? g.spanSeconds / allowedSeconds : undefined;
  const targets: Target[] = [
    {
      label: `politeness, rate-limited site (${size}, ${RATE} requests/s): genapi crawl lists every page`,
      goal: `${size}`,
      measured: genapiRun ? `${genapiRun.listed ?? 0} listed, ${g!.pagesServed} served` : "not measured",
      met: genapiRun ? genapiRun.listed === pages && genapiRun.listMismatch === undefined : undefined,
    },
    {
      label: `politeness, rate-limited site: genapi requests over the cap (${CAP} in flight)`,
      goal: "0",
      measured: g ? `${g.overCap} (most in flight: ${g.maxInFlight})` : "not measured",
      met: g ? g.overCap === 0 : undefined,
    },
    {
      label: "politeness, rate-limited site: genapi requests answered 429",
      goal: "< 1%",
      measured: g ? `${percent(g.throttled, g.requests)} (${g.throttled} of ${g.requests})` : "not measured",
      met: g ? g.throttled / g.requests < 0.01 : undefined,
    },
    {
      label: `politeness, rate-limited site: genapi time against what the site's rate allows (${allowedSeconds.toFixed(1)} s)`,
      goal: "≤ 1.2×",
      measured: ratio === undefined ? "not measured" : `${ratio.toFixed(2)}× (${g!.spanSeconds.toFixed(1)} s)`,
      met: ratio === undefined ? undefined : ratio <= 1.2,
    },
    summaryCheck.target,
    loopback.target,
  ];

  const rateTable: Table = {
    title: `A site that throttles: ${size}, 429 past ${RATE} requests/s, 20-200 ms a page (one run each)`,
    columns: [
      "pages listed",
      "pages served",
      "requests",
      "429s",
      "429 share",
      "most in flight",
      `over the cap (${CAP})`,
      "time s",
      "time ÷ allowed",
      "wall s",
      "CPU s",
      "goals missed",
    ],
    rows: peerRows,
    notes: [
      `The site (scripts/bench/fixtures/rate-limited-site.ts) is a Bun.serve in the harness's own process: what matters here is its latency and its limit, not its speed. ${size} that link to each other (page i to 2i+1, 2i+2, its neighbours, its parent, one far page and the home page; robots.txt allows all), each answered after its own 20-200 ms (seeded: every crawler meets the same site). It counts request *arrivals* in a sliding 1 s window, every request included (robots.txt, and those it answers 429); past ${RATE} it answers 429 with \`Retry-After: 1\` at once. Each crawler gets a fresh site and runs pinned to the other core.`,
      `pages listed: the crawler's own list (genapi's sitemap URLs; Crawlee's request handler, the pages it visited); wget2 keeps none. pages served: distinct pages the site answered 200. most in flight: the site's count of requests it had not answered when one arrived (that one included); over the cap: requests that arrived while ${CAP} (genapi's default --host-concurrency) were in flight.`,
      `time s: from the site's first request arrival to its last answer (process start-up left out; wall s is the whole process). allowed: ${pages + 1} requests (the pages and robots.txt) / ${RATE} per second = ${allowedSeconds.toFixed(1)} s. goals missed (the issue's): every page listed (served, for wget2), 0 requests over the cap, under 1% of requests answered 429, time ≤ 1.2× allowed (a crawl that did not fetch every page "gave up": its time is not a time to crawl the site).`,
      `Crawlee (npm ${CRAWLEE}, run by Node.js): CheerioCrawler with enqueueLinks({strategy: "same-hostname"}); "defaults" sets nothing else (its autoscaled pool, up to 200 at once; 3 retries; a 429 retires the session and is retried at once: it has no Retry-After pause); "tuned" sets maxConcurrency ${CRAWLEE_TUNED.maxConcurrency}, maxRequestsPerMinute ${CRAWLEE_TUNED.maxRequestsPerMinute} and maxRequestRetries ${CRAWLEE_TUNED.maxRequestRetries} (genapi's 3 retries). maxRequestsPerMinute is a budget per minute, not a pace: it lets a burst of 20 and more through within a second. Neither reads robots.txt (respectRobotsTxtFile is off by default). A page that fails takes the links only it leads to with it: a crawler that loses the first pages never finds the rest.`,
      `wget2: --wait is per thread, so it runs ${WGET2_THREADS} threads (genapi's cap) with --wait=${WGET2_WAIT}: at most ${RATE} requests/s whatever the latency (with its 5 default threads, --wait=0.05 would allow 100/s). --delete-after: one GET per page (--spider asks twice, HEAD then GET); it does not retry a 429.`,
    ],
  };

  return {
    id: "politeness",
    title: "Politeness toward crawled sites",
    tables: [rateTable, summaryCheck.table, loopback.table, cost],
    checks,
    targets,
    seconds: (performance.now() - started) / 1000,
  };
}

// ---------------------------------------------------------------------------------------------
// The crawlers of the rate-limited site

function peerRow(peer: Peer, result: PeerRun, pages: number, allowedSeconds: number): Row {
  const f = result.figures;
  const one = (value: number) => summarize([value]);
  const listedOrServed = result.listed ?? f.pagesServed;
  // A crawl that gave up early is quick: its time is no time to crawl the site.
  const finished = f.pagesServed === pages;
  const missed = [
    listedOrServed === pages && result.listMismatch === undefined ? undefined : "every page",
    f.overCap === 0 ? undefined : "cap",
    f.requests > 0 && f.throttled / f.requests < 0.01 ? undefined : "<1% 429",
    finished && f.spanSeconds / allowedSeconds <= 1.2 ? undefined : "≤1.2×",
  ].filter((x) => x !== undefined);
  const when =
    f.throttledAt.length === 0
      ? undefined
      : f.throttledAt.length <= 12
        ? `429s at ${f.throttledAt.map((s) => s.toFixed(1)).join(", ")} s`
        : `429s from ${f.throttledAt[0]!.toFixed(1)} s to ${f.throttledAt.at(-1)!.toFixed(1)} s`;
  const pace =
    f.ratePerTenSeconds.length >= 3
      ? `requests a second in each 10 s: ${f.ratePerTenSeconds.map((n) => n.toFixed(1)).join(" ")}`
      : undefined;
  const note = [result.note, when, pace, result.listMismatch, result.code === 0 ? undefined : `exit code ${result.code}`]
    .filter((x) => x !== undefined)
    .join("; ");
  return row(
    peer.label,
    {
      "pages listed": result.listed === undefined ? "no list" : one(result.listed),
      "pages served": one(f.pagesServed),
      requests: one(f.requests),
      "429s": one(f.throttled),
      "429 share": f.requests === 0 ? undefined : percent(f.throttled, f.requests),
      "most in flight": one(f.maxInFlight),
      [`over the cap (${CAP})`]: one(f.overCap),
      "time s": one(f.spanSeconds),
      "time ÷ allowed": finished ? one(f.spanSeconds / allowedSeconds) : "gave up",
      "wall s": one(result.wallSeconds),
      "CPU s": Number.isFinite(result.cpuSeconds) ? one(result.cpuSeconds) : undefined,
      "goals missed": missed.length === 0 ? "none" : missed.join(", "),
    },
    { command: peer.command, version: peer.tool?.version, note: note || undefined },
  );
}

const percent = (part: number, whole: number) => `${((part / whole) * 100).toFixed(2)}%`;

/** Runs a crawler pinned to the crawler core until it exits (killed past the plan's limit). */
async function spawnCrawl(ctx: Context, argv: string[], cwd: string, env?: Record<string, string>) {
  const limit = ctx.plan.crawlLimitSeconds;
  const begin = performance.now();
  const proc = Bun.spawn(pinned(CORES.server, argv), {
    cwd,
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const stderr = new Response(proc.stderr).text();
  if (!(await settlesWithin(proc.exited, (limit + 10) * 1000))) proc.kill("SIGKILL");
  const code = await proc.exited;
  const wallSeconds = (performance.now() - begin) / 1000;
  const usage = proc.resourceUsage();
  return { code, wallSeconds, cpuSeconds: usage ? Number(usage.cpuTime.total) / 1e6 : Number.NaN, stderr: await stderr };
}

interface CrawlReportJson {
  url_count?: number;
  pages_crawled?: number;
  excluded?: Record<string, number>;
  politeness?: { throttled: number; retries: number; paused_ms: number; max_concurrency: number };
}

/** The JSON report `genapi crawl --json` prints as its last stderr line. */
function reportOf(stderr: string): CrawlReportJson | undefined {
  const line = stderr.trim().split("\n").at(-1);
  try {
    return line ? (JSON.parse(line) as CrawlReportJson) : undefined;
  } catch {
    return undefined;
  }
}

const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]!);

/** What a crawler's list has that the site has not, and the reverse; undefined when they agree. */
function compareList(found: string[], site: RateLimitedSite): string | undefined {
  const expected = new Set(site.paths.map((path) => `${site.url}${path}`));
  const have = new Set(found);
  const extra = [...have].filter((url) => !expected.has(url));
  const absent = [...expected].filter((url) => !have.has(url)).length;
  if (extra.length === 0 && absent === 0) return undefined;
  return `${absent} of the site's pages not listed, ${extra.length} URLs not the site's${extra.length ? ` (e.g. ${extra[0]})` : ""}`;
}

function genapiPeer(ctx: Context): Peer {
  return {
    label: "genapi crawl",
    command: `taskset -c ${CORES.server} genapi crawl http://127.0.0.1:$SITE/ --output $OUT/sitemap.xml --json`,
    async crawl(site) {
      const dir = mkdtempSync(join(ctx.workDir, "politeness-genapi-"));
      const out = join(dir, "sitemap.xml");
      const result = await spawnCrawl(ctx, [ctx.binaries.genapi, "crawl", `${site.url}/`, "--output", out, "--json"], dir);
      const figures = site.figures(CAP);
      const urls = existsSync(out) ? locs(readFileSync(out, "utf8")) : [];
      const report = reportOf(result.stderr);
      const p = report?.politeness;
      return {
        ...result,
        figures,
        listed: urls.length,
        listMismatch: compareList(urls, site),
        note: p ? `report: throttled ${p.throttled}, retries ${p.retries}, paused ${p.paused_ms} ms` : "no report",
      };
    },
  };
}

/**
 * Crawlee, installed like sitemap-generator-cli (npm, into the peers' directory outside the
 * project) by a full run that finds it missing; the smoke run installs nothing.
 */
export function crawleeTool(install: boolean, log: (line: string) => void): Tool {
  const name = "crawlee";
  const node = which("node");
  if (node === undefined) return { name, note: "not installed (no node)" };
  const manifest = join(PEERS_DIR, "node_modules/crawlee/package.json");
  if (!existsSync(manifest) && install) {
    log(`installing ${CRAWLEE} into ${PEERS_DIR}`);
    try {
      run(["npm", "install", "--prefix", PEERS_DIR, "--no-audit", "--no-fund", CRAWLEE], { cwd: "/tmp" });
    } catch (error) {
      return { name, note: `npm install failed: ${(error as Error).message}` };
    }
  }
  if (!existsSync(manifest)) return { name, note: "not installed" };
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
  return { name, argv: [node], version: `crawlee ${version} (npm) on Node.js ${run([node, "--version"])}` };
}

/** The Crawlee crawl, a script Node runs: `node crawlee-crawl.mjs PEERS_DIR URL defaults|tuned OUT.json`. */
const CRAWLEE_SCRIPT = `// Written by genapi's benchmark (scripts/bench/sections/politeness.ts).
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
const [peers, url, mode, out] = process.argv.slice(2);
const { CheerioCrawler, Configuration, log } = createRequire(\`\${peers}/package.json\`)("crawlee");
log.setLevel(log.LEVELS.OFF);
const visited = new Set();
const failed = [];
const tuned = mode === "tuned" ? ${JSON.stringify(CRAWLEE_TUNED)} : {};
const crawler = new CheerioCrawler(
  {
    ...tuned,
    async requestHandler({ request, enqueueLinks }) {
      visited.add(request.loadedUrl ?? request.url);
      await enqueueLinks({ strategy: "same-hostname" });
    },
    failedRequestHandler({ request }) {
      failed.push(request.url);
    },
  },
  new Configuration({ persistStorage: false }),
);
const stats = await crawler.run([url]);
writeFileSync(out, JSON.stringify({ visited: [...visited], failed, stats }));
`;

function crawleePeer(ctx: Context, tool: Tool, mode: "defaults" | "tuned"): Peer {
  const script = join(ctx.workDir, "crawlee-crawl.mjs");
  return {
    label: `Crawlee CheerioCrawler (${mode === "defaults" ? "its defaults" : "tuned to the same limits"})`,
    tool,
    command: `taskset -c ${CORES.server} node crawlee-crawl.mjs $PEERS http://127.0.0.1:$SITE/ ${mode} $OUT/visited.json  # ${
      mode === "defaults"
        ? "new CheerioCrawler({requestHandler})"
        : `new CheerioCrawler({...${JSON.stringify(CRAWLEE_TUNED)}, requestHandler})`
    }`,
    async crawl(site) {
      writeFileSync(script, CRAWLEE_SCRIPT);
      const dir = mkdtempSync(join(ctx.workDir, "politeness-crawlee-"));
      const out = join(dir, "visited.json");
      const result = await spawnCrawl(ctx, [...tool.argv!, script, PEERS_DIR, `${site.url}/`, mode, out], dir, {
        CRAWLEE_STORAGE_DIR: join(dir, "storage"),
      });
      const figures = site.figures(CAP);
      if (!existsSync(out)) return { ...result, figures, note: `no result: ${result.stderr.trim().split("\n").slice(-3).join(" / ")}` };
      const visited = JSON.parse(readFileSync(out, "utf8")) as {
        visited: string[];
        failed: string[];
        stats: { requestsFinished: number; requestsFailed: number };
      };
      const urls = visited.visited;
      return {
        ...result,
        figures,
        listed: new Set(urls).size,
        listMismatch: compareList(urls, site),
        note: `Crawlee: ${visited.stats.requestsFinished} requests finished, ${visited.stats.requestsFailed} failed after its retries`,
      };
    },
  };
}

function wget2Peer(ctx: Context): Peer {
  const tool = ctx.tools.wget2;
  const args = (url: string) => [
    "--recursive",
    "--level=0",
    "--no-parent",
    "--no-directories",
    "--delete-after",
    `--max-threads=${WGET2_THREADS}`,
    `--wait=${WGET2_WAIT}`,
    "--no-random-wait",
    "--quiet",
    url,
  ];
  return {
    label: `wget2 --wait=${WGET2_WAIT}`,
    tool,
    command: `taskset -c ${CORES.server} wget2 ${args("http://127.0.0.1:$SITE/").join(" ")}`,
    async crawl(site) {
      const dir = mkdtempSync(join(ctx.workDir, "politeness-wget2-"));
      const result = await spawnCrawl(ctx, [...tool.argv!, ...args(`${site.url}/`)], dir);
      // wget2 exits 8 when the server answered an error (a 429): the crawl still ran.
      return {
        ...result,
        code: result.code === 8 ? 0 : result.code,
        figures: site.figures(CAP),
        note: result.code === 8 ? "exit code 8 (server error answers)" : undefined,
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Throttled and failed pages: the summary line and the report

async function summaryLineCheck(ctx: Context, pages: number): Promise<{ table: Table; checks: Check[]; target: Target }> {
  const broken = Object.fromEntries(Object.entries(BROKEN).filter(([path]) => Number(/\d+/.exec(path)![0]) < pages));
  const crawl = async (json: boolean) => {
    const site = startRateLimitedSite({ pages, ratePerSecond: RATE, broken });
    try {
      const dir = mkdtempSync(join(ctx.workDir, "politeness-summary-"));
      const out = join(dir, "sitemap.xml");
      const argv = [ctx.binaries.genapi, "crawl", `${site.url}/`, "--output", out, ...(json ? ["--json"] : [])];
      const result = await spawnCrawl(ctx, argv, dir);
      const urls = existsSync(out) ? locs(readFileSync(out, "utf8")) : [];
      return { ...result, figures: site.figures(CAP), listed: urls.length, after: afterLastThrottle(site) };
    } finally {
      await site.stop();
    }
  };
  ctx.log(`politeness: summary line and report of a crawl with throttled and failed pages (${pages} pages)`);
  const plain = await crawl(false);
  const json = await crawl(true);
  const line = (
    plain.stderr
      .trim()
      .split("\n")
      .findLast((l) => l.startsWith("genapi:")) ?? ""
  ).replace(/ written to \S+?(;|$)/, " written to $OUT/sitemap.xml$1");
  const report = reportOf(json.stderr);
  const brokenCount = Object.keys(broken).length;
  const throttledInLine = Number(/the site throttled ([\d,]+) requests?/.exec(line)?.[1]?.replaceAll(",", "") ?? Number.NaN);
  const errorsInLine = Number(/([\d,]+) pages? answered an HTTP error/.exec(line)?.[1]?.replaceAll(",", "") ?? Number.NaN);
  const lineOk = throttledInLine === plain.figures.throttled && errorsInLine === brokenCount;
  const p = report?.politeness;
  const reportOk =
    p !== undefined && p.throttled === json.figures.throttled && p.retries > 0 && report?.excluded?.http_error === brokenCount;
  const one = (value: number | undefined) => (value === undefined ? undefined : summarize([value]));
  const cells = (run: typeof plain, r?: CrawlReportJson) => ({
    "pages listed": one(run.listed),
    "time s": one(run.figures.spanSeconds),
    "429/503 sent": one(run.figures.throttled),
    requests: one(run.figures.requests),
    "report: throttled": one(r?.politeness?.throttled),
    "report: retries": one(r?.politeness?.retries),
    "report: paused ms": one(r?.politeness?.paused_ms),
    "report: http_error": one(r?.excluded?.http_error),
    "report: failed": one(r?.excluded?.failed),
  });
  const brokenList = Object.entries(broken)
    .map(([path, status]) => `${path} ${status}`)
    .join(", ");
  const table: Table = {
    title: `A crawl that ends with throttled and failed pages (${pages} pages, ${brokenList})`,
    columns: [
      "pages listed",
      "time s",
      "429/503 sent",
      "requests",
      "report: throttled",
      "report: retries",
      "report: paused ms",
      "report: http_error",
      "report: failed",
    ],
    rows: [
      row("genapi crawl (summary line)", cells(plain), {
        command: `genapi crawl http://127.0.0.1:$SITE/ --output $OUT/sitemap.xml`,
        note: [line ? `its summary line: \`${line}\`` : `no summary line: ${plain.stderr.slice(0, 300)}`, plain.after]
          .filter((x) => x !== undefined)
          .join("; "),
      }),
      row("genapi crawl --json", cells(json, report), {
        command: `genapi crawl http://127.0.0.1:$SITE/ --output $OUT/sitemap.xml --json`,
        note: json.after,
      }),
    ],
    notes: [
      `The same rate-limited site with ${pages} pages, of which ${brokenCount} answer the same error every time after their latency (the 429 and 503 with \`Retry-After: 1\`): genapi asks a throttled page 4 times, then counts it as http_error. Two crawls, one for each output; "429/503 sent" counts both those pages' answers and the rate limit's.`,
    ],
  };
  const checks: Check[] = [
    {
      label: "the summary line names the throttled requests and the pages that answered an error",
      passed: lineOk,
      detail: `line says ${throttledInLine} throttled and ${errorsInLine} with an HTTP error; the site sent ${plain.figures.throttled} 429/503, ${brokenCount} pages are broken`,
    },
    {
      label: "the report's politeness and excluded counts show them",
      passed: reportOk,
      detail: `throttled ${p?.throttled} (site: ${json.figures.throttled}), retries ${p?.retries}, http_error ${report?.excluded?.http_error} (broken: ${brokenCount})`,
    },
  ];
  return {
    table,
    checks,
    target: {
      label: "politeness: a crawl with throttled and failed pages says so (summary line, report counts)",
      goal: "named and counted",
      measured: line ? `"…${line.slice(line.indexOf(";"))}"` : "no summary line",
      met: lineOk && reportOk,
    },
  };
}

/** How the crawl went on after the site's last 429/503: its requests a second from then on. */
function afterLastThrottle(site: RateLimitedSite): string | undefined {
  const requests = site.requests();
  const last = requests.findLastIndex((r) => r.status === 429 || r.status === 503);
  const later = requests.slice(last + 1);
  if (last < 0 || later.length === 0) return undefined;
  const from = requests[last]!.start;
  const seconds = (later.reduce((end, r) => Math.max(end, r.end), from) - from) / 1000;
  return `after the last 429/503 (${((from - requests[0]!.start) / 1000).toFixed(1)} s in), ${later.length} requests in ${seconds.toFixed(1)} s (${(later.length / seconds).toFixed(2)} a second; the site allows ${RATE})`;
}

// ---------------------------------------------------------------------------------------------
// The loopback site: politeness at its defaults against switched off

async function loopbackBench(ctx: Context): Promise<{ table: Table; target: Target }> {
  const pages = ctx.plan.sitePages[0]!;
  const dir = join(ctx.workDir, `politeness-site-${pages}`);
  generateSite(dir, pages);
  const served = await serveSite(ctx, dir, `politeness-${pages}`);
  const site = served.timing;
  const limit = ctx.plan.crawlLimitSeconds;
  const variants = {
    defaults: [] as string[],
    off: ["--host-concurrency", "64"],
  };
  type Variant = keyof typeof variants;
  const measured: Record<Variant, { pagesPerSecond: number; pages: number; wallSeconds: number; cpuSeconds: number; error?: string }[]> = {
    defaults: [],
    off: [],
  };
  try {
    for (let r = 0; r < ctx.plan.runs; r++) {
      const order: Variant[] = r % 2 === 0 ? ["defaults", "off"] : ["off", "defaults"];
      for (const variant of order) {
        ctx.log(`politeness: loopback ${pages} pages, run ${r + 1}/${ctx.plan.runs}: ${variant}`);
        const out = join(ctx.workDir, `politeness-loopback-${Date.now()}.xml`);
        const argv = [
          ctx.binaries.genapi,
          "crawl",
          `${site.url}/`,
          "--output",
          out,
          "--quiet",
          "--json",
          "--max-pages",
          String(MAX_PAGES),
          "--crawl-timeout",
          String(limit),
          ...variants[variant],
        ];
        const result = await spawnCrawl(ctx, argv, ctx.workDir);
        const crawled = reportOf(result.stderr)?.pages_crawled ?? 0;
        measured[variant].push({
          pagesPerSecond: crawled / result.wallSeconds,
          pages: crawled,
          wallSeconds: result.wallSeconds,
          cpuSeconds: result.cpuSeconds,
          error: result.code === 0 && crawled === pages ? undefined : `exit code ${result.code}, ${crawled} pages`,
        });
      }
    }
  } finally {
    await served.stop();
  }
  const rates = (v: Variant) => measured[v].map((m) => (m.error ? Number.NaN : m.pagesPerSecond));
  const perRun = summarize(ratios(rates("defaults"), rates("off")).filter(Number.isFinite));
  const line = (label: string, v: Variant, command: string, ratio?: Summary): Row => {
    const ok = measured[v].filter((m) => !m.error);
    const errors = [...new Set(measured[v].flatMap((m) => (m.error ? [m.error] : [])))].join("; ");
    return row(
      label,
      {
        "pages/s": summarize(ok.map((m) => m.pagesPerSecond)),
        "wall s": summarize(ok.map((m) => m.wallSeconds)),
        "CPU s per 1k pages": summarize(ok.filter((m) => Number.isFinite(m.cpuSeconds)).map((m) => (m.cpuSeconds / m.pages) * 1000)),
        "defaults ÷ off": ratio,
      },
      { command, note: errors || undefined },
    );
  };
  const size = `${pages.toLocaleString("en-US")} pages`;
  const base = `taskset -c ${CORES.server} genapi crawl http://127.0.0.1:$SITE/ --output $OUT/sitemap.xml --quiet --json --max-pages ${MAX_PAGES}`;
  return {
    table: {
      title: `The ${size} site on loopback: politeness at its defaults and switched off`,
      columns: ["pages/s", "wall s", "CPU s per 1k pages", "defaults ÷ off"],
      rows: [
        line("defaults (--host-concurrency 4)", "defaults", base, perRun),
        line("switched off (--host-concurrency 64)", "off", `${base} --host-concurrency 64`),
      ],
      notes: [
        `The crawl section's synthetic site (scripts/bench/fixtures/site.ts), served as the crawl section serves it: ${served.description}. pages/s: the pages genapi crawl's --json report says it fetched over the process's wall time (start-up included). CPU s per 1k pages: user + system time of the whole \`genapi crawl\` process over those pages.`,
        "defaults ÷ off: per run (the two crawls back to back, alternating which goes first), then median, min and max. --host-concurrency 64, the most the flag allows, lets the crawl have up to 64 requests in flight: politeness switched off as far as a loopback crawl can tell.",
      ],
    },
    target: {
      label: `politeness: ${size} on loopback, pages/s at the defaults vs switched off (--host-concurrency 64)`,
      goal: "≥ 0.9×",
      measured: perRun === undefined ? "not measured" : `${perRun.median.toFixed(2)}×`,
      met: perRun === undefined ? undefined : perRun.median >= 0.9,
    },
  };
}
