// `genapi crawl` against POST /api/generate on the same synthetic site: one engine, so the
// command line should crawl as fast as the API (target: pages/s within 10%). Both run pinned to the
// same core, back to back in alternating order, against the site served as the crawl section serves
// it (nginx, fixtures/site-server.ts), and are timed the same way: pages crawled over the crawl's duration,
// both as genapi's own report gives them (the command's --json report, the API's data), so that
// process and server start-up are left out alike.
import { join } from "node:path";
import type { Context } from "../harness/context.ts";
import { CORES, cpuSeconds, pinned, settlesWithin } from "../harness/proc.ts";
import { ratios, row, summarize, type Row, type SectionResult } from "../harness/results.ts";
import { generateSite } from "../fixtures/site.ts";
import { createKey, newDb, startGenapi } from "../harness/servers.ts";
import { serveSite } from "../fixtures/site-server.ts";

/** Above the site sizes, so neither crawl is cut by its page budget (the API's cap is 50,000). */
const MAX_PAGES = 50_000;

interface Measured {
  pagesPerSecond: number;
  pages: number;
  wallSeconds: number;
  /** CPU time of the crawling process (less sensitive than pages/s to other work on the machine). */
  cpuSeconds?: number;
  error?: string;
}

export async function crawlCliBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const pages = ctx.plan.sitePages[0]!;
  const dir = join(ctx.workDir, `crawl-cli-site-${pages}`);
  generateSite(dir, pages);
  const served = await serveSite(ctx, dir, `crawl-cli-${pages}`);
  const site = served.timing;
  const binary = ctx.binaries.genapi;
  const limitSeconds = ctx.plan.crawlLimitSeconds;
  /** The crawl's own figures: pages crawled and its duration, from genapi's report. */
  type Report = { pages_crawled: number; duration_ms: number };
  const measure = async (crawl: () => Promise<{ code: number; cpuSeconds: number; report?: Report }>): Promise<Measured> => {
    const begin = performance.now();
    try {
      const { code, cpuSeconds, report } = await crawl();
      const wallSeconds = (performance.now() - begin) / 1000;
      if (code !== 0 || report === undefined) throw new Error(`exit code or status ${code}`);
      return {
        pagesPerSecond: report.pages_crawled / (report.duration_ms / 1000),
        pages: report.pages_crawled,
        wallSeconds,
        cpuSeconds,
      };
    } catch (error) {
      return { pagesPerSecond: Number.NaN, pages: 0, wallSeconds: 0, error: (error as Error).message };
    }
  };
  const viaCli = () =>
    measure(async () => {
      const out = join(ctx.workDir, `crawl-cli-${Date.now()}.xml`);
      const argv = [
        binary,
        "crawl",
        `${site.url}/`,
        "--output",
        out,
        "--json",
        "--quiet",
        "--max-pages",
        String(MAX_PAGES),
        "--crawl-timeout",
        String(limitSeconds),
      ];
      // --json --quiet: the crawl report, one JSON line on stderr.
      const proc = Bun.spawn(pinned(CORES.server, argv), { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
      const stderr = new Response(proc.stderr).text();
      if (!(await settlesWithin(proc.exited, (limitSeconds + 10) * 1000))) proc.kill("SIGKILL");
      const code = await proc.exited;
      const usage = proc.resourceUsage();
      const line = (await stderr).trim().split("\n").at(-1) ?? "";
      return {
        code,
        cpuSeconds: usage ? Number(usage.cpuTime.total) / 1e6 : Number.NaN,
        report: code === 0 ? (JSON.parse(line) as Report) : undefined,
      };
    });
  const viaApi = () =>
    measure(async () => {
      const db = newDb(ctx.workDir);
      const key = createKey(binary, db, 1_000_000);
      const server = await startGenapi(
        binary,
        ctx.workDir,
        ["--allow-private-targets", "--max-pages", String(MAX_PAGES), "--crawl-timeout", String(Math.min(3600, limitSeconds))],
        db,
      );
      try {
        const before = await cpuSeconds(server.pid);
        const res = await fetch(`${server.url}/api/generate`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: JSON.stringify({ url: `${site.url}/` }),
          signal: AbortSignal.timeout((limitSeconds + 10) * 1000),
        });
        const body = (await res.json()) as { data?: Report };
        return { code: res.status === 200 ? 0 : res.status, cpuSeconds: (await cpuSeconds(server.pid)) - before, report: body.data };
      } finally {
        await server.stop();
      }
    });

  const cli: Measured[] = [];
  const api: Measured[] = [];
  try {
    for (let r = 0; r < ctx.plan.runs; r++) {
      // Alternate which goes first, so neither always meets a warmer (or busier) machine.
      const order =
        r % 2 === 0
          ? ([
              ["cli", viaCli],
              ["api", viaApi],
            ] as const)
          : ([
              ["api", viaApi],
              ["cli", viaCli],
            ] as const);
      for (const [name, crawl] of order) {
        ctx.log(`crawl-cli ${pages}: run ${r + 1}/${ctx.plan.runs}: ${name}`);
        const result = await crawl();
        if (result.error) ctx.log(`crawl-cli ${pages}: ${name} failed: ${result.error}`);
        (name === "cli" ? cli : api).push(result);
      }
    }
  } finally {
    await served.stop();
  }

  const rates = (list: Measured[]) => list.map((m) => (m.error ? Number.NaN : m.pagesPerSecond));
  const perRun = summarize(ratios(rates(cli), rates(api)).filter(Number.isFinite));
  const errors = (list: Measured[]) => [...new Set(list.flatMap((m) => (m.error ? [m.error] : [])))].join("; ") || undefined;
  const line = (label: string, list: Measured[], command: string, ratio?: ReturnType<typeof summarize>): Row =>
    row(
      label,
      {
        "pages/s": summarize(list.filter((m) => !m.error).map((m) => m.pagesPerSecond)),
        "wall s": summarize(list.filter((m) => !m.error).map((m) => m.wallSeconds)),
        "CPU s per 1k pages": summarize(
          list.filter((m) => !m.error && m.cpuSeconds !== undefined && m.pages > 0).map((m) => (m.cpuSeconds! / m.pages) * 1000),
        ),
        "genapi crawl ÷ API": ratio,
      },
      { command, note: errors(list) },
    );
  const size = `${pages.toLocaleString("en-US")} pages`;
  return {
    id: "crawl-cli",
    title: "genapi crawl (command line) against the API",
    tables: [
      {
        title: `Crawl of the ${size} site: command line and API`,
        columns: ["pages/s", "wall s", "CPU s per 1k pages", "genapi crawl ÷ API"],
        rows: [
          line(
            "genapi crawl",
            cli,
            `taskset -c ${CORES.server} genapi crawl http://127.0.0.1:$SITE/ --output $OUT/sitemap.xml --json --quiet --max-pages ${MAX_PAGES}`,
            perRun,
          ),
          line(
            "POST /api/generate",
            api,
            `taskset -c ${CORES.server} genapi serve --allow-private-targets --max-pages ${MAX_PAGES} ...; POST /api/generate {"url": "http://127.0.0.1:$SITE/"}`,
          ),
        ],
        notes: [
          `The same site as the crawl section (scripts/bench/fixtures/site.ts), served by ${served.description}. pages/s: pages crawled over the crawl's duration, as genapi's own report gives them (\`pages_crawled\` and \`duration_ms\`: the command's --json report on stderr, the API's data), so process start-up (the command's) and server start-up (the API's) are left out alike.`,
          "CPU s per 1k pages: user + system time of the crawling process over the pages it fetched: the whole `genapi crawl` process (start-up and the sitemap file included), the server during the request. Less sensitive to other work on a shared machine than pages/s.",
          "genapi crawl ÷ API: per run (the two crawls run back to back, alternating which goes first), then median, min and max. Wall s: the command's whole run (start-up and the sitemap file included) against the request's round trip.",
        ],
      },
    ],
    checks: [],
    targets: [
      {
        label: `crawl ${size}: genapi crawl pages/s vs POST /api/generate`,
        goal: "within 10% (0.90-1.10×)",
        measured: perRun === undefined ? "not measured" : `${perRun.median.toFixed(2)}×`,
        met: perRun === undefined ? undefined : perRun.median >= 0.9 && perRun.median <= 1.1,
      },
    ],
    seconds: (performance.now() - started) / 1000,
  };
}
