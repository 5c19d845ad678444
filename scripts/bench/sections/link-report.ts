// The link report beyond the origin: what checking external links and resources costs a crawl, and
// whether the other host is treated with the politeness any crawled host gets.
//
// The crawl section's synthetic site (fixtures/site.ts; its first size: 10,000 pages, 60 in the
// smoke run), served as that section serves it, with 5% of its pages (page i, i % 20 = 10) linking
// to 200 URLs of a second host on loopback (fixtures/external-host.ts: nginx with a request-rate
// limit that makes excess requests wait in flight; 10 of the 200 answer 404). Every page also loads
// the site's stylesheet and logo (two resources in scope). `genapi serve --allow-private-targets`
// crawls it through POST /api/generate, a fresh server and database per run, with `link_report:
// true` and with `{"external": true, "resources": true}`, back to back, alternating which goes first.
//
// Figures: CPU (user + system of the server process over the request) a page, and the ratio of the
// two per run (goal under 1.3x); at the external host, the most of genapi's requests in flight and
// request starts in any one second, against genapi's politeness defaults (`--host-concurrency` 4,
// `--host-delay` 0: no cap on starts a second); each of the 200 URLs asked once; the 10 broken
// ones reported, with `kind: "external"`; `link_report: true` sending nothing there.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Context } from "../harness/context.ts";
import { CORES, cpuSeconds } from "../harness/proc.ts";
import { type Check, ratios, row, type Row, type SectionResult, summarize, type Table, type Target } from "../harness/results.ts";
import { createKey, newDb, startGenapi } from "../harness/servers.ts";
import { type ExternalHost, type HostRequest, mostInFlight, mostPerSecond, startExternalHost } from "../fixtures/external-host.ts";
import { generateSite } from "../fixtures/site.ts";
import { serveSite } from "../fixtures/site-server.ts";

/** Distinct external URLs the site links to. */
const EXTERNAL_URLS = 200;
/** Every 20th of them answers 404. */
const BROKEN_EVERY = 20;
/** Links to the external host on each page that has any. */
const LINKS_A_PAGE = 10;
/** genapi's politeness defaults (the contract's "Politeness toward crawled sites"). */
const HOST_CONCURRENCY = 4;
const COST_GOAL = 1.3;
const MAX_PAGES = 50_000;

type Variant = "true" | "external";
const BODIES: Record<Variant, unknown> = { true: true, external: { external: true, resources: true } };
const LABELS: Record<Variant, string> = {
  true: "link_report: true",
  external: 'link_report: {"external": true, "resources": true}',
};

interface Run {
  cpuMsPerPage: number;
  wallSeconds: number;
  pages: number;
  /** Requests the external host answered during the crawl. */
  host: HostRequest[];
  /** URLs data.links.broken lists with kind "external". */
  brokenExternal: string[];
  error?: string;
}

export async function linkReportBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const pages = ctx.plan.sitePages[0]!;
  const host = await startExternalHost(ctx, EXTERNAL_URLS, BROKEN_EVERY);
  const runs: Record<Variant, Run[]> = { true: [], external: [] };
  let description = "";
  let linking = 0;
  try {
    const dir = join(ctx.workDir, `link-report-site-${pages}`);
    const { paths } = generateSite(dir, pages);
    linking = addExternalLinks(dir, paths, host.urls);
    const served = await serveSite(ctx, dir, `link-report-${pages}`);
    description = served.description;
    try {
      for (let r = 0; r < ctx.plan.runs; r++) {
        for (const variant of (r % 2 === 0 ? ["true", "external"] : ["external", "true"]) as Variant[]) {
          ctx.log(`link-report: ${pages} pages, run ${r + 1}/${ctx.plan.runs}: ${LABELS[variant]}`);
          await host.reset();
          runs[variant].push(await crawl(ctx, `${served.timing.url}/`, BODIES[variant], host));
        }
      }
    } finally {
      await served.stop();
    }
  } finally {
    await host.stop();
  }

  const cpu = (v: Variant) => runs[v].map((run) => (run.error ? Number.NaN : run.cpuMsPerPage));
  const cost = summarize(ratios(cpu("external"), cpu("true")).filter(Number.isFinite));
  const external = runs.external.filter((run) => !run.error);
  const inFlight = external.map((run) => mostInFlight(run.host));
  const perSecond = external.map((run) => mostPerSecond(run.host));
  const size = `${pages.toLocaleString("en-US")} pages`;
  const line = (variant: Variant, ratio?: ReturnType<typeof summarize>): Row => {
    const ok = runs[variant].filter((run) => !run.error);
    const errors = [...new Set(runs[variant].flatMap((run) => (run.error ? [run.error] : [])))].join("; ");
    const of = (pick: (run: Run) => number) => summarize(ok.map(pick));
    return row(
      LABELS[variant],
      {
        "CPU ms a page": of((run) => run.cpuMsPerPage),
        "wall s": of((run) => run.wallSeconds),
        "÷ link_report: true": ratio,
        "requests to the other host": of((run) => run.host.length),
        "most in flight there": of((run) => mostInFlight(run.host)),
        "most starts in 1 s": of((run) => mostPerSecond(run.host)),
        "connections there": connectionsOf(ok),
        "broken external listed": of((run) => run.brokenExternal.length),
      },
      {
        command: `taskset -c ${CORES.server} genapi serve --allow-private-targets --max-pages ${MAX_PAGES} ...; POST /api/generate {"url": "http://127.0.0.1:$SITE/", "link_report": ${JSON.stringify(BODIES[variant])}}`,
        note: errors || undefined,
      },
    );
  };
  const table: Table = {
    title: `Link report beyond the origin: ${size}, ${linking} of them linking to ${EXTERNAL_URLS} URLs of another host`,
    columns: [
      "CPU ms a page",
      "wall s",
      "÷ link_report: true",
      "requests to the other host",
      "most in flight there",
      "most starts in 1 s",
      "connections there",
      "broken external listed",
    ],
    rows: [line("true"), line("external", cost)],
    notes: [
      `The crawl section's synthetic site (scripts/bench/fixtures/site.ts), served as that section serves it: ${description}. ${linking} pages (page i with i % 20 = 10) each link to ${Math.max(LINKS_A_PAGE, Math.ceil(EXTERNAL_URLS / Math.max(1, linking)))} of the ${EXTERNAL_URLS} URLs of the other host (every one linked from some page), ${EXTERNAL_URLS / BROKEN_EVERY} of which answer 404. Every page loads /static/site.css and /static/logo.svg: the two resources in scope.`,
      `The other host: ${host.description}. Each request is an interval from its first byte to its answer (nginx's $msec - $request_time, $msec; millisecond steps: a request that ends in the millisecond another starts counts as gone). most in flight there: the most such intervals that overlap (robots.txt included); most starts in 1 s: the most requests that began within one second; connections there: the distinct connections those requests came on (nginx's $connection; not counted by the Bun fallback).`,
      `CPU ms a page: user + system time of the genapi serve process over the request, over the pages crawled; a fresh server and database each run, the two variants back to back, alternating which goes first. ÷ link_report: true: per run, then median, min and max. genapi's politeness defaults, which the other host gets as any host: at most ${HOST_CONCURRENCY} requests in flight (--host-concurrency), no minimum interval between starts (--host-delay 0).`,
    ],
  };

  const wanted = new Set(host.broken);
  const checks: Check[] = [
    {
      label: "link_report: true sends nothing to the other host",
      passed: runs.true.length > 0 && runs.true.every((run) => !run.error && run.host.length === 0),
      detail: `requests per run: ${runs.true.map((run) => run.error ?? run.host.length).join(", ")}`,
    },
    {
      label: `with external checks, each of the ${EXTERNAL_URLS} external URLs is requested exactly once (HEAD)`,
      passed: external.length > 0 && external.length === runs.external.length && external.every((run) => onceEach(run.host, host.urls)),
      detail: external.map((run) => methods(extRequests(run.host))).join("; ") || "no run",
    },
    {
      label: `the ${wanted.size} external URLs that answer 404 are the broken external links listed, with kind "external"`,
      passed:
        external.length > 0 &&
        external.every((run) => run.brokenExternal.length === wanted.size && run.brokenExternal.every((u) => wanted.has(u))),
      detail: external.map((run) => `${run.brokenExternal.length} listed`).join(", ") || "no run",
    },
  ];
  const targets: Target[] = [
    {
      label: `link report beyond the origin, ${size}: CPU a page with {"external": true, "resources": true} vs link_report: true`,
      goal: `< ${COST_GOAL}×`,
      measured: cost === undefined ? "not measured" : `${cost.median.toFixed(2)}× (runs ${cost.min.toFixed(2)}-${cost.max.toFixed(2)})`,
      met: cost === undefined ? undefined : cost.median < COST_GOAL,
    },
    {
      label: `link report beyond the origin: genapi's requests in flight at the other host (--host-concurrency ${HOST_CONCURRENCY})`,
      goal: `≤ ${HOST_CONCURRENCY}`,
      measured:
        inFlight.length === 0
          ? "not measured"
          : `${Math.max(...inFlight)} at most (starts in 1 s: ${Math.max(...perSecond)} at most; host-delay 0 sets no cap)`,
      met: inFlight.length === 0 ? undefined : Math.max(...inFlight) <= HOST_CONCURRENCY,
    },
  ];
  return {
    id: "link-report",
    title: "Link report beyond the origin",
    tables: [table],
    checks,
    targets,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Adds LINKS_A_PAGE (or more, on a small site) external links to every page i with i % 20 = 10; returns how many pages got them. */
function addExternalLinks(dir: string, paths: string[], urls: string[]): number {
  const chosen = paths.filter((_, i) => i % 20 === 10);
  const each = Math.max(LINKS_A_PAGE, Math.ceil(urls.length / Math.max(1, chosen.length)));
  chosen.forEach((path, j) => {
    const file = join(dir, path.endsWith("/") ? `${path}index.html` : path);
    const links = Array.from({ length: each }, (_, k) => urls[(j * each + k) % urls.length]!);
    const list = `<ul class="elsewhere">${links.map((u, k) => `<li><a href="${u}">Elsewhere ${k}</a></li>`).join("")}</ul>`;
    writeFileSync(file, readFileSync(file, "utf8").replace("</article>", `${list}</article>`));
  });
  return chosen.length;
}

async function crawl(ctx: Context, url: string, linkReport: unknown, host: ExternalHost): Promise<Run> {
  const binary = ctx.binaries.genapi;
  const limit = ctx.plan.crawlLimitSeconds;
  const db = newDb(ctx.workDir);
  const key = createKey(binary, db, 10_000_000);
  const args = ["--allow-private-targets", "--max-pages", String(MAX_PAGES), "--crawl-timeout", String(Math.min(3600, limit))];
  const genapi = await startGenapi(binary, ctx.workDir, args, db);
  try {
    const cpuBefore = await cpuSeconds(genapi.pid);
    const begin = performance.now();
    const res = await fetch(`${genapi.url}/api/generate`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ url, link_report: linkReport }),
      signal: AbortSignal.timeout((limit + 10) * 1000),
    });
    const body = (await res.json()) as {
      data?: { pages_crawled: number; truncated: boolean; links?: { broken: { url: string; kind?: string }[] } };
    };
    const wallSeconds = (performance.now() - begin) / 1000;
    const cpu = (await cpuSeconds(genapi.pid)) - cpuBefore;
    const requests = await host.requests();
    const data = body.data;
    const pages = data?.pages_crawled ?? 0;
    const error =
      res.status !== 200 || data === undefined
        ? `HTTP ${res.status}: ${JSON.stringify(body).slice(0, 200)}`
        : data.truncated
          ? `truncated after ${pages} pages`
          : undefined;
    return {
      cpuMsPerPage: (cpu / Math.max(1, pages)) * 1000,
      wallSeconds,
      pages,
      host: requests,
      brokenExternal: (data?.links?.broken ?? []).filter((b) => b.kind === "external").map((b) => b.url),
      error,
    };
  } finally {
    await genapi.stop();
  }
}

/** Distinct connections the other host saw a crawl's requests on, when it numbers them (nginx). */
function connectionsOf(runs: Run[]) {
  const counts = runs.flatMap((run) =>
    run.host.length > 0 && run.host.every((r) => r.connection !== undefined) ? [new Set(run.host.map((r) => r.connection)).size] : [],
  );
  return summarize(counts);
}

const extRequests = (requests: HostRequest[]) => requests.filter((r) => r.path.startsWith("/ext/"));

function onceEach(requests: HostRequest[], urls: string[]): boolean {
  const ext = extRequests(requests);
  const paths = new Set(ext.map((r) => r.path));
  return ext.length === urls.length && paths.size === urls.length && ext.every((r) => r.method === "HEAD");
}

function methods(requests: HostRequest[]): string {
  const count = new Map<string, number>();
  for (const r of requests) count.set(r.method, (count.get(r.method) ?? 0) + 1);
  return `${requests.length} requests to /ext/ (${[...count].map(([m, n]) => `${n} ${m}`).join(", ")}), ${new Set(requests.map((r) => r.path)).size} distinct`;
}
