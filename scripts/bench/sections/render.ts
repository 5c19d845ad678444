// Rendered crawls: a single-page application of `plan.renderPages` routes whose links
// exist only once its script has run, crawled by genapi with `render: "always"` at 1, 2 and 4 tabs,
// against the raw crawl of the same pages written as plain HTML; and where a rendered page's time
// goes (waiting for a tab or the browser's start, opening the page, navigation until its load
// event, the quiet time genapi waits after it, reading the DOM back).
//
// The site is files served by nginx (fixtures/site-server.ts, pinned to the load core), like the crawl
// sections': every route /p/<i>.html is the same shell, whose script fetches /data/<i>.json and
// builds the page's links (its tree children and three neighbours); /h/ holds the same pages with
// those links in the HTML. genapi and its browser are not pinned: Chromium renders with both
// cores, as it would on a server. Chromium is Debian's (`.ci/run` installs it); without it the
// rows say so. Run as root (the tests' containers), genapi gets GENAPI_CHROMIUM_NO_SANDBOX=1.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Browser, CrawlTabs, findChromium, renderPage, type RenderPhases } from "../../../src/crawler/index.ts";
import type { Context } from "../harness/context.ts";
import { createKey, newDb } from "../harness/servers.ts";
import { missing, row, summarize, type Row, type SectionResult, type Table, type Target } from "../harness/results.ts";
import { serveSite } from "../fixtures/site-server.ts";
import { waitForLine } from "../harness/proc.ts";

/** The PSS goal of genapi and the browser's processes together, over the whole rendered crawl. */
const PSS_GOAL_MIB = 1536;
const TABS = [1, 2, 4];
const ALL_CORES = `0-${navigator.hardwareConcurrency - 1}`;

// ---------- the site ----------

/** Page i's links: its children in a binary tree (every page reachable) and three neighbours. */
function linksOf(i: number, pages: number): number[] {
  const out = [2 * i + 1, 2 * i + 2, i + 1, i + 7, i + 31].filter((j) => j < pages && j !== i);
  return [...new Set(out)];
}
const routeOf = (i: number) => (i === 0 ? "/" : `/p/${i}.html`);
const SHELL = `<!doctype html><html><head><meta charset="utf-8"><title>app</title></head>
<body><nav id="nav"></nav><main id="main">loading</main><script>
const i = location.pathname === "/" ? 0 : Number(location.pathname.split("/").pop().replace(".html", ""));
fetch("/data/" + i + ".json").then((r) => r.json()).then((page) => {
  document.title = page.title;
  document.getElementById("main").textContent = page.text;
  const nav = document.getElementById("nav");
  for (const link of page.links) {
    const a = document.createElement("a");
    a.href = link.href;
    a.textContent = link.title;
    a.onclick = (e) => { e.preventDefault(); history.pushState(null, "", link.href); };
    nav.appendChild(a);
  }
});
</script></body></html>`;
const text = (i: number) => `Page ${i} of the application. `.repeat(40);

/** Writes the application and its HTML twin under `dir`. */
export function writeSite(dir: string, pages: number): void {
  mkdirSync(join(dir, "p"), { recursive: true });
  mkdirSync(join(dir, "data"), { recursive: true });
  mkdirSync(join(dir, "h/p"), { recursive: true });
  writeFileSync(join(dir, "robots.txt"), "User-agent: *\nAllow: /\n");
  writeFileSync(join(dir, "index.html"), SHELL);
  for (let i = 0; i < pages; i++) {
    if (i > 0) writeFileSync(join(dir, `p/${i}.html`), SHELL);
    const links = linksOf(i, pages);
    writeFileSync(
      join(dir, `data/${i}.json`),
      JSON.stringify({ title: `page ${i}`, text: text(i), links: links.map((j) => ({ href: routeOf(j), title: `page ${j}` })) }),
    );
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>page ${i}</title></head><body><nav>${links
      .map((j) => `<a href="/h${routeOf(j)}">page ${j}</a>`)
      .join("")}</nav><main>${text(i)}</main></body></html>`;
    writeFileSync(join(dir, i === 0 ? "h/index.html" : `h/p/${i}.html`), html);
  }
}

// ---------- memory of a process tree ----------

function descendants(root: number): number[] {
  const found = [root];
  for (let k = 0; k < found.length; k++) {
    const pid = found[k]!;
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
        if (children !== "") found.push(...children.split(" ").map(Number));
      } catch {
        // Ended meanwhile.
      }
    }
  }
  return found;
}

function kB(file: string, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(file, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

interface Peak {
  /** The sum of Pss (smaps_rollup) over genapi and its descendants: shared pages shared out. */
  pss: number;
  /** The sum of VmRSS: a page shared by the browser's processes counts once in each. */
  rss: number;
  genapiRss: number;
  processes: number;
}

/** Samples the tree under `pid` every 200 ms until `stop()`. */
function sampleTree(pid: number) {
  const peak: Peak = { pss: 0, rss: 0, genapiRss: 0, processes: 0 };
  let running = true;
  const done = (async () => {
    while (running) {
      const tree = descendants(pid);
      let pss = 0;
      let rss = 0;
      for (const p of tree) {
        pss += kB(`/proc/${p}/smaps_rollup`, "Pss");
        rss += kB(`/proc/${p}/status`, "VmRSS");
      }
      peak.pss = Math.max(peak.pss, pss);
      peak.rss = Math.max(peak.rss, rss);
      peak.genapiRss = Math.max(peak.genapiRss, kB(`/proc/${pid}/status`, "VmRSS"));
      peak.processes = Math.max(peak.processes, tree.length);
      await Bun.sleep(200);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return peak;
    },
  };
}

const MiB = (bytes: number) => bytes / 2 ** 20;

// ---------- the runs ----------

export interface Run {
  pages: number;
  listed: number;
  seconds: number;
  peak: Peak;
  rendered?: number;
  /** Times genapi retired its browser (rendered crawls only). */
  browserRestarts?: number;
  error?: string;
}

/** `genapi serve` (not pinned) with a key; a job over `url`, waited for; the tree sampled meanwhile. */
export async function jobRun(
  ctx: Pick<Context, "workDir"> & { binaries: Pick<Context["binaries"], "genapi"> },
  url: string,
  pages: number,
  args: string[],
  body: Record<string, unknown>,
): Promise<Run> {
  const dir = mkdtempSync(join(ctx.workDir, "render-"));
  const db = newDb(dir);
  const key = createKey(ctx.binaries.genapi, db, 1_000);
  const log = join(dir, "serve.log");
  const argv = ["taskset", "-c", ALL_CORES, ctx.binaries.genapi, "serve", "--host", "127.0.0.1", "--port", "0", "--db", db];
  const proc = Bun.spawn([...argv, "--allow-private-targets", ...args], {
    env: { ...process.env, ...(process.getuid?.() === 0 ? { GENAPI_CHROMIUM_NO_SANDBOX: "1" } : {}) },
    stdout: Bun.file(log),
    stderr: Bun.file(`${log}.err`),
  });
  try {
    const line = await waitForLine(log, (l) => l.includes('"address"'), 10_000, proc.exited);
    const address = (JSON.parse(line) as { address: string }).address;
    const headers = { "content-type": "application/json", "x-api-key": key };
    const sampler = sampleTree(proc.pid);
    const created = await fetch(`${address}/api/jobs`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url, max_pages: pages, ...body }),
    });
    const answer = (await created.json()) as { data?: { id: string } };
    if (created.status !== 202 || !answer.data) {
      await sampler.stop();
      return failed(`POST /api/jobs: ${created.status} ${JSON.stringify(answer).slice(0, 200)}`);
    }
    for (;;) {
      await Bun.sleep(250);
      const job = ((await (await fetch(`${address}/api/jobs/${answer.data.id}`, { headers })).json()) as any).data;
      if (!["succeeded", "failed", "cancelled"].includes(job.status)) continue;
      const peak = await sampler.stop();
      if (job.status !== "succeeded") return { ...failed(`job ${job.status}: ${JSON.stringify(job.error)}`), peak };
      return {
        pages: job.progress.pages_crawled,
        listed: job.result.url_count,
        seconds: (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000,
        peak,
        rendered: job.result.render?.pages_rendered,
        // genapi says so on stderr (stdout is the request log).
        browserRestarts: browserRestarts(await Bun.file(`${log}.err`).text()),
      };
    }
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The restarts genapi logged. A restart retires the browser; the next page starts another, so one
 * logged after the last page starts none (counting starts as 1 + restarts said 5 for 2,000 pages,
 * where 4 browsers ran, and 1 for the raw crawl, which runs none).
 */
function browserRestarts(log: string): number {
  return log.match(/restarting the browser/g)?.length ?? 0;
}

function failed(error: string): Run {
  return { pages: 0, listed: 0, seconds: 0, peak: { pss: 0, rss: 0, genapiRss: 0, processes: 0 }, error };
}

interface PhaseRun {
  pages: number;
  seconds: number;
  startMs: number;
  starts: number;
  totals: RenderPhases;
}

/**
 * Where a rendered page's time goes: genapi's own renderer in this process, 2 tabs as the CLI
 * uses, over the first `pages` routes (the document fetched once, its sub-requests from the site).
 */
async function phaseRun(chromium: string, site: string, pages: number): Promise<PhaseRun> {
  // The harness is pinned to the load core; the browser it starts gets both, like genapi's.
  Bun.spawnSync(["taskset", "-a", "-p", "-c", ALL_CORES, String(process.pid)]);
  const browser = new Browser({ executable: chromium, tabs: 2, noSandbox: process.getuid?.() === 0, log: () => {} });
  // As a crawl does: the next pages' tabs opened ahead, all closed at the end.
  const tabs = new CrawlTabs(browser, "genapi/bench");
  const totals: RenderPhases = { waitMs: 0, openMs: 0, loadMs: 0, idleMs: 0, readMs: 0 };
  const began = performance.now();
  try {
    const routes = Array.from({ length: pages }, (_, i) => `${site}${routeOf(i)}`);
    const worker = async () => {
      for (let url = routes.shift(); url !== undefined; url = routes.shift()) {
        const res = await fetch(url);
        const document = { status: res.status, headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) };
        const rendered = await renderPage(browser, {
          url,
          userAgent: "genapi/bench",
          maxDomBytes: 5 * 1024 * 1024,
          document,
          fetch: (sub, init) => fetch(sub, { method: init.method, headers: init.headers, signal: init.signal }),
          timeoutMs: 10_000,
          signal: AbortSignal.timeout(60_000),
          tabs,
        });
        for (const phase of Object.keys(totals) as (keyof RenderPhases)[]) totals[phase] += rendered.phases[phase];
      }
    };
    await Promise.all([worker(), worker()]);
    return { pages, seconds: (performance.now() - began) / 1000, startMs: browser.startMs, starts: browser.starts, totals };
  } finally {
    await tabs.close();
    await browser.close();
    Bun.spawnSync(["taskset", "-a", "-p", "-c", "0", String(process.pid)]);
  }
}

// ---------- the section ----------

export async function renderBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const pages = ctx.plan.renderPages;
  const fmt = (n: number) => n.toLocaleString("en-US");
  const title = `Rendered crawls: a ${fmt(pages)}-page single-page application`;
  const chromium = findChromium(null);
  const label = (tabs: number) => `genapi, render always, ${tabs} tab${tabs === 1 ? "" : "s"}`;
  if (chromium === null) {
    const note = "Chromium not installed (Debian's chromium)";
    return {
      id: "render",
      title,
      tables: [
        {
          title,
          columns: [],
          rows: [missing("genapi, raw", "not installed", note), ...TABS.map((tabs) => missing(label(tabs), "not installed", note))],
          notes: [],
        },
      ],
      checks: [],
      targets: [],
      seconds: 0,
    };
  }
  const dir = join(ctx.workDir, `spa-${pages}`);
  ctx.log(`render: writing a ${fmt(pages)}-page application`);
  writeSite(dir, pages);
  const served = await serveSite(ctx, dir, `spa-${pages}`);
  const site = served.timing.url;
  try {
    ctx.log("render: the raw crawl of the HTML twin");
    const raw = await jobRun(ctx, `${site}/h/`, pages, [], {});
    const rendered = new Map<number, Run>();
    for (const tabs of TABS) {
      ctx.log(`render: ${fmt(pages)} pages rendered, ${tabs} tab(s)`);
      rendered.set(tabs, await jobRun(ctx, `${site}/`, pages, ["--render-tabs", String(tabs)], { render: "always" }));
    }
    const phasePages = ctx.plan.renderPhasePages;
    ctx.log(`render: where the time goes, ${phasePages} pages in this process`);
    const phases = await phaseRun(chromium, site, phasePages).catch((error: Error) => error);

    const runRow = (name: string, run: Run, note: string): Row =>
      run.error
        ? missing(name, "failed", run.error)
        : row(
            name,
            {
              "pages/s": summarize([run.pages / run.seconds]),
              "URLs listed": summarize([run.listed]),
              "wall s": summarize([run.seconds]),
              "peak PSS MiB": summarize([MiB(run.peak.pss)]),
              "peak RSS summed MiB": summarize([MiB(run.peak.rss)]),
              "genapi RSS MiB": summarize([MiB(run.peak.genapiRss)]),
              "browser restarts": summarize(run.browserRestarts === undefined || !run.rendered ? [] : [run.browserRestarts]),
            },
            { note },
          );
    const rows: Row[] = [
      runRow("genapi, raw (the HTML twin)", raw, "a job over /h/: the same pages and links, in the HTML"),
      ...TABS.map((tabs) => runRow(label(tabs), rendered.get(tabs)!, `a job with render "always", genapi serve --render-tabs ${tabs}`)),
    ];
    const tables: Table[] = [
      {
        title,
        columns: ["pages/s", "URLs listed", "wall s", "peak PSS MiB", "peak RSS summed MiB", "genapi RSS MiB", "browser restarts"],
        rows,
        notes: [
          `${served.description} Each route of the application is the same ${SHELL.length}-byte shell; its script fetches /data/<i>.json and builds 2-5 links. /h/ holds the same pages with the links in the HTML.`,
          "One run each (a rendered crawl takes minutes): genapi serve on its own database, not pinned (Chromium uses both cores), one job of max_pages = the site's size; pages/s over the job's started_at to finished_at.",
          "peak PSS: the sum of Pss (smaps_rollup) over genapi and every process under it, sampled every 200 ms: pages the browser's processes share are shared out, so it is the memory the crawl costs the machine. peak RSS summed: the sum of VmRSS over the same processes, which counts each shared page once in every process (an overstatement). browser restarts: the times genapi retired its browser (every 500 pages, or past 1 GiB), as it logs them; the next page starts another.",
        ],
      },
    ];
    if (phases instanceof Error) {
      tables.push({
        title: "Where a rendered page's time goes",
        columns: [],
        rows: [missing("phases", "failed", phases.message)],
        notes: [],
      });
    } else {
      const per = (ms: number) => ms / phases.pages;
      const sum = Object.values(phases.totals).reduce((a, b) => a + b, 0);
      const phaseLabels: Record<keyof RenderPhases, string> = {
        waitMs: "waiting for a tab (another page, the browser starting)",
        openMs: "opening the page (browser context, target, interception, prelude), or waiting for the one opened ahead",
        loadMs: "navigation until the load event (the shell, its script, its data request)",
        idleMs: "quiet time after the load event (genapi waits 500 ms with nothing in flight)",
        readMs: "reading the DOM back (its context is closed after its slot is free)",
      };
      tables.push({
        title: `Where a rendered page's time goes (${phases.pages} pages, 2 tabs, in one process)`,
        columns: ["ms a page", "share"],
        rows: [
          ...(Object.keys(phaseLabels) as (keyof RenderPhases)[]).map((phase) =>
            row(phaseLabels[phase], {
              "ms a page": summarize([per(phases.totals[phase])]),
              share: summarize([phases.totals[phase] / sum]),
            }),
          ),
          row(`of which the browser's start (${phases.starts}x)`, { "ms a page": summarize([per(phases.startMs)]) }),
        ],
        notes: [
          `genapi's renderer (src/crawler/render/) driven from the bench process with 2 tabs over the first ${phases.pages} routes: ${(phases.pages / phases.seconds).toFixed(2)} pages/s. Each page's phases add up to its time in a tab; with 2 tabs the wall time is about half their sum. share: of that sum.`,
        ],
      });
    }

    const targets: Target[] = TABS.map((tabs) => {
      const run = rendered.get(tabs)!;
      return {
        label: `render ${fmt(pages)} pages, ${tabs} tab(s): peak PSS of genapi and its browser`,
        goal: `under ${PSS_GOAL_MIB} MiB`,
        measured: run.error ? "not measured" : `${MiB(run.peak.pss).toFixed(0)} MiB (RSS summed ${MiB(run.peak.rss).toFixed(0)} MiB)`,
        met: run.error ? undefined : MiB(run.peak.pss) < PSS_GOAL_MIB,
      };
    });
    const checks = TABS.map((tabs) => {
      const run = rendered.get(tabs)!;
      return {
        label: `the rendered crawl at ${tabs} tab(s) listed every page of the application`,
        passed: run.error === undefined && run.listed === pages,
        detail: run.error ?? `${fmt(run.listed)} URLs listed of ${fmt(pages)}, ${fmt(run.rendered ?? 0)} pages rendered`,
      };
    });
    checks.push({
      label: "the raw crawl of the HTML twin listed every page",
      passed: raw.error === undefined && raw.listed === pages,
      detail: raw.error ?? `${fmt(raw.listed)} URLs listed of ${fmt(pages)}`,
    });
    return { id: "render", title, tables, checks, targets, seconds: (performance.now() - started) / 1000 };
  } finally {
    await served.stop();
  }
}
