// Rendered crawls measured (issue 25): not a section of scripts/bench/run.ts, run by hand.
//
//   npx bun scripts/bench/render.ts [--pages 2000] [--tab-pages 200] [--chromium /usr/bin/chromium]
//
// Builds nothing: it runs dist/genapi (build it first: `npx bun scripts/build.ts`), with
// GENAPI_CHROMIUM_NO_SANDBOX=1 when run as root (Chromium refuses its sandbox there). It serves a
// synthetic single-page application of `--pages` routes on loopback: every route answers the same
// shell, whose script fetches /data/<i>.json and builds the page's links (its tree children and a
// few neighbours), so only a rendered crawl finds the site. The same pages with those links in the
// HTML (under /h/) are the raw crawl's site.
//
// 1. `genapi crawl --render always` over the whole application: pages/s, and the peak resident
//    memory of genapi plus every process under it (the browser's), sampled from /proc every 200 ms
//    (the sum of VmRSS, which counts pages shared between the browser's processes once per
//    process, and the sum of Pss from smaps_rollup, which shares them out), and the browser's
//    restarts (distinct browser processes started directly by genapi, less one).
// 2. `genapi crawl` (raw) over the HTML twin of the same site: pages/s and peak memory.
// 3. `genapi crawl` has no --render-tabs (it renders 2 pages at once), so pages/s at
//    --render-tabs 1, 2 and 4 come from `genapi serve --render-tabs N` and a job (POST /api/jobs)
//    of `--tab-pages` pages of the application.
//
// Prints one JSON object with every figure. The machine's other load moves every figure here: say
// what else ran when quoting them.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    pages: { type: "string", default: "2000" },
    "tab-pages": { type: "string", default: "200" },
    chromium: { type: "string" },
  },
});
const PAGES = Number(values.pages);
const TAB_PAGES = Number(values["tab-pages"]);
const root = join(import.meta.dir, "../..");
const BINARY = process.env.GENAPI_BIN ?? join(root, "dist/genapi");
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  ...(process.getuid?.() === 0 ? { GENAPI_CHROMIUM_NO_SANDBOX: "1" } : {}),
};
const chromiumArgs = values.chromium ? ["--chromium", values.chromium] : [];

// ---------- the site ----------

/** Page i's links: its children in a binary tree (every page reachable) and three neighbours. */
function linksOf(i: number): number[] {
  const out = [2 * i + 1, 2 * i + 2, i + 1, i + 7, i + 31].filter((j) => j < PAGES && j !== i);
  return [...new Set(out)];
}
const routeOf = (i: number) => (i === 0 ? "/" : `/p/${i}`);
const SHELL = `<!doctype html><html><head><meta charset="utf-8"><title>app</title></head>
<body><nav id="nav"></nav><main id="main">loading</main><script>
const i = location.pathname === "/" ? 0 : Number(location.pathname.split("/").pop());
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
const dataOf = (i: number) =>
  JSON.stringify({
    title: `page ${i}`,
    text: `Page ${i} of the application. `.repeat(40),
    links: linksOf(i).map((j) => ({ href: routeOf(j), title: `page ${j}` })),
  });
const htmlOf = (i: number) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>page ${i}</title></head><body><nav>${linksOf(i)
    .map((j) => `<a href="/h${routeOf(j) === "/" ? "/" : routeOf(j)}">page ${j}</a>`)
    .join("")}</nav><main>${`Page ${i} of the application. `.repeat(40)}</main></body></html>`;

const site = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  idleTimeout: 120,
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/robots.txt") return new Response("User-agent: *\nAllow: /\n");
    const html = { headers: { "content-type": "text/html; charset=utf-8" } };
    if (path === "/" || /^\/p\/\d+$/.test(path)) return new Response(SHELL, html);
    let m = /^\/data\/(\d+)\.json$/.exec(path);
    if (m) return new Response(dataOf(Number(m[1])), { headers: { "content-type": "application/json" } });
    if (path === "/h/") return new Response(htmlOf(0), html);
    m = /^\/h\/p\/(\d+)$/.exec(path);
    if (m && Number(m[1]) < PAGES) return new Response(htmlOf(Number(m[1])), html);
    return new Response("not found", { status: 404 });
  },
});
const SITE = `http://127.0.0.1:${site.port}`;

// ---------- /proc sampling ----------

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      out.push({ pid: Number(name), ppid: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]), comm });
    } catch {
      // Ended meanwhile.
    }
  }
  return out;
}

function tree(rootPid: number, all: Proc[]): Proc[] {
  const children = new Map<number, Proc[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: Proc[] = [];
  const stack = [rootPid];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      stack.push(c.pid);
    }
  }
  return out;
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
  rssBytes: number;
  pssBytes: number;
  genapiRssBytes: number;
  processes: number;
  browserStarts: number;
}

/** Samples the tree under `pid` every 200 ms until `stop()`; returns the peaks. */
function sampleTree(pid: number) {
  const peak: Peak = { rssBytes: 0, pssBytes: 0, genapiRssBytes: 0, processes: 0, browserStarts: 0 };
  const browsers = new Set<number>();
  let running = true;
  const done = (async () => {
    while (running) {
      const all = processes();
      const under = tree(pid, all);
      for (const p of under) if (p.ppid === pid && p.comm.startsWith("chrom")) browsers.add(p.pid);
      const own = kB(`/proc/${pid}/status`, "VmRSS");
      let rss = own;
      let pss = kB(`/proc/${pid}/smaps_rollup`, "Pss");
      for (const p of under) {
        rss += kB(`/proc/${p.pid}/status`, "VmRSS");
        pss += kB(`/proc/${p.pid}/smaps_rollup`, "Pss");
      }
      peak.rssBytes = Math.max(peak.rssBytes, rss);
      peak.pssBytes = Math.max(peak.pssBytes, pss);
      peak.genapiRssBytes = Math.max(peak.genapiRssBytes, own);
      peak.processes = Math.max(peak.processes, under.length + 1);
      await Bun.sleep(200);
    }
  })();
  return {
    stop: async (): Promise<Peak> => {
      running = false;
      await done;
      peak.browserStarts = browsers.size;
      return peak;
    },
  };
}

const MiB = (bytes: number) => Math.round(bytes / 2 ** 20);

// ---------- runs ----------

async function cliCrawl(url: string, args: string[]) {
  const dir = mkdtempSync(join(tmpdir(), "genapi-render-bench-"));
  const began = performance.now();
  const proc = Bun.spawn([BINARY, "crawl", url, "--output", join(dir, "sitemap.xml"), "--json", "--quiet", ...args], {
    env,
    stdout: "ignore",
    stderr: "pipe",
  });
  const sampler = sampleTree(proc.pid);
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  const seconds = (performance.now() - began) / 1000;
  const peak = await sampler.stop();
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`genapi crawl exited ${code}: ${stderr}`);
  const report = JSON.parse(stderr.trim().split("\n").at(-1)!);
  return {
    pages_crawled: report.pages_crawled as number,
    url_count: report.url_count as number,
    render: report.render,
    seconds: Math.round(seconds * 10) / 10,
    pages_per_second: Math.round((report.pages_crawled / seconds) * 100) / 100,
    peak_tree_rss_mib: MiB(peak.rssBytes),
    peak_tree_pss_mib: MiB(peak.pssBytes),
    peak_genapi_rss_mib: MiB(peak.genapiRssBytes),
    peak_processes: peak.processes,
    browser_restarts: Math.max(0, peak.browserStarts - 1),
  };
}

async function jobAtTabs(tabs: number) {
  const dir = mkdtempSync(join(tmpdir(), "genapi-render-bench-"));
  const db = join(dir, "genapi.db");
  const keyRun = Bun.spawnSync([BINARY, "keys", "create", "--name", "bench", "--db", db, "--daily-limit", "1000"], { env });
  if (keyRun.exitCode !== 0) throw new Error(`keys create: ${keyRun.stderr}`);
  const key = keyRun.stdout.toString().trim();
  const proc = Bun.spawn(
    [
      BINARY,
      "serve",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--db",
      db,
      "--allow-private-targets",
      "--host-concurrency",
      "8",
      "--render-tabs",
      String(tabs),
      ...chromiumArgs,
    ],
    { env, cwd: dir, stdout: "pipe", stderr: "pipe" },
  );
  try {
    let address = "";
    const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    while (address === "") {
      const { done, value } = await reader.read();
      if (done) throw new Error(`serve exited: ${await new Response(proc.stderr).text()}`);
      buffer += value;
      const m = /"address":"([^"]+)"/.exec(buffer);
      if (m) address = m[1]!;
    }
    void (async () => {
      while (!(await reader.read()).done) {}
    })();
    const headers = { "content-type": "application/json", "x-api-key": key };
    const created = await fetch(`${address}/api/jobs`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: `${SITE}/`, render: "always", max_pages: TAB_PAGES }),
    });
    const body = (await created.json()) as any;
    if (created.status !== 202) throw new Error(`POST /api/jobs: ${created.status} ${JSON.stringify(body)}`);
    const sampler = sampleTree(proc.pid);
    for (;;) {
      await Bun.sleep(250);
      const job = ((await (await fetch(`${address}/api/jobs/${body.data.id}`, { headers })).json()) as any).data;
      if (["succeeded", "failed", "cancelled"].includes(job.status)) {
        const peak = await sampler.stop();
        if (job.status !== "succeeded") throw new Error(`job ${job.status}: ${JSON.stringify(job.error)}`);
        const seconds = (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000;
        return {
          tabs,
          pages_crawled: job.progress.pages_crawled as number,
          render: job.result?.render,
          seconds: Math.round(seconds * 10) / 10,
          pages_per_second: Math.round((job.progress.pages_crawled / seconds) * 100) / 100,
          peak_tree_rss_mib: MiB(peak.rssBytes),
          peak_tree_pss_mib: MiB(peak.pssBytes),
        };
      }
    }
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: Record<string, unknown> = { pages: PAGES, tab_pages: TAB_PAGES, cores: navigator.hardwareConcurrency };
try {
  results.raw = await cliCrawl(`${SITE}/h/`, []);
  console.error(`raw: ${JSON.stringify(results.raw)}`);
  results.rendered = await cliCrawl(`${SITE}/`, ["--render", "always", "--crawl-timeout", "7200", ...chromiumArgs]);
  console.error(`rendered: ${JSON.stringify(results.rendered)}`);
  const byTabs = [];
  for (const tabs of [1, 2, 4]) {
    byTabs.push(await jobAtTabs(tabs));
    console.error(`tabs ${tabs}: ${JSON.stringify(byTabs.at(-1))}`);
  }
  results.by_tabs = byTabs;
} finally {
  site.stop(true);
}
console.log(JSON.stringify(results, null, 2));
