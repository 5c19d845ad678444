// `genapi crawl` against POST /api/generate on the same synthetic site (issue 14): one engine, so the
// command line should crawl as fast as the API (target: pages/s within 10%). Both run pinned to the
// same core, back to back in alternating order, and are timed the same way: pages the site served
// between the first and the last page it sent.
import { join } from "node:path";
import type { Context } from "./context.ts";
import { CORES, cpuSeconds, pinned, settlesWithin } from "./proc.ts";
import { ratios, row, summarize, type Row, type SectionResult } from "./results.ts";
import { generateSite } from "./site.ts";
import { BUN, createKey, newDb, startGenapi, startServer } from "./servers.ts";
import type { Counts } from "./static-server.ts";

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
  const site = await startServer([BUN, join(import.meta.dir, "static-server.ts"), dir], ctx.workDir, CORES.load, 180_000);
  const { control } = JSON.parse(site.line) as { control: string };
  const binary = ctx.binaries.genapi;
  const limitSeconds = ctx.plan.crawlLimitSeconds;
  const measure = async (crawl: () => Promise<{ code: number; cpuSeconds: number }>): Promise<Measured> => {
    await fetch(`${control}/reset`);
    const begin = performance.now();
    try {
      const { code, cpuSeconds } = await crawl();
      const wallSeconds = (performance.now() - begin) / 1000;
      const counts = (await (await fetch(`${control}/stats`)).json()) as Counts;
      const span = (counts.lastPageAt - counts.firstPageAt) / 1000;
      const pagesPerSecond = counts.pages > 1 && span > 0 ? (counts.pages - 1) / span : 0;
      return {
        pagesPerSecond,
        pages: counts.pages,
        wallSeconds,
        cpuSeconds,
        error: code === 0 ? undefined : `exit code or status ${code}`,
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
        "--quiet",
        "--max-pages",
        String(MAX_PAGES),
        "--crawl-timeout",
        String(limitSeconds),
      ];
      const proc = Bun.spawn(pinned(CORES.server, argv), { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
      if (!(await settlesWithin(proc.exited, (limitSeconds + 10) * 1000))) proc.kill("SIGKILL");
      const code = await proc.exited;
      const usage = proc.resourceUsage();
      return { code, cpuSeconds: usage ? Number(usage.cpuTime.total) / 1e6 : Number.NaN };
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
        await res.arrayBuffer();
        return { code: res.status === 200 ? 0 : res.status, cpuSeconds: (await cpuSeconds(server.pid)) - before };
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
    await site.stop();
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
            `taskset -c ${CORES.server} genapi crawl http://127.0.0.1:$SITE/ --output $OUT/sitemap.xml --quiet --max-pages ${MAX_PAGES}`,
            perRun,
          ),
          line(
            "POST /api/generate",
            api,
            `taskset -c ${CORES.server} genapi serve --allow-private-targets --max-pages ${MAX_PAGES} ...; POST /api/generate {"url": "http://127.0.0.1:$SITE/"}`,
          ),
        ],
        notes: [
          "The same site as the crawl section (scripts/bench/site.ts), served by scripts/bench/static-server.ts on the other core. pages/s: HTML pages the site served divided by the time from the first to the last of them, so process start-up (the command's) and server start-up (the API's) are left out alike.",
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
