// The synthetic site's files (site.ts) served on loopback for the crawl benchmarks, pinned to the
// load core. nginx when it is installed (Debian's nginx-light; tools.ts installs it): a real server
// set up as one serves static files, so that a crawler's rate is never the bench server's. Two
// instances of it serve the same directory:
//
// - the timing one, with no access log: crawls that are timed run against it, and it counts their
//   requests (nginx's stub_status, on a second port that the site never links);
// - the counting one, with an access log of every request: one crawl of each crawler runs against
//   it to show what it asked for (GETs, HEADs, each page once or not), and the slow, time-boxed
//   peers run against it (a log line costs nothing at their rate) so their pages can be counted.
//
// Without nginx (the smoke run installs nothing) static-server.ts (Bun.serve) serves the site and
// counts everything itself; then the timing and the counting server are the same one.
//
// The site behaves the same either way: the same files at the same paths ("a/index.html" as
// "/a/"), robots.txt, the same Content-Types (text/html and text/plain with "; charset=utf-8"),
// one Last-Modified for every file, no ETag, the LinkChecker header that lifts linkchecker's
// per-host throttle, and 404 "not found" as text/plain.
import { mkdirSync, readdirSync, readFileSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Context } from "./context.ts";
import { CORES, freePort, pinned, settlesWithin } from "./proc.ts";
import { BUN, startServer } from "./servers.ts";
import type { Counts } from "./static-server.ts";

/** What a counting server saw since its last reset. */
export interface SiteCounts {
  /** Every request: HEAD, robots.txt, assets and 404s included. */
  requests: number;
  /** From a counting server only. */
  detail?: {
    gets: number;
    heads: number;
    /** GETs answered 200 with an HTML page, and how many distinct pages they were. */
    pageGets: number;
    distinctPages: number;
    /** When the first and the last page GET was answered, in ms (one clock per server). */
    firstPageAt: number;
    lastPageAt: number;
  };
}

export interface SiteServer {
  url: string;
  /** Forgets what was counted so far. */
  reset(): Promise<void>;
  counts(): Promise<SiteCounts>;
}

export interface ServedSite {
  /** Crawls that are timed: no access log. */
  timing: SiteServer;
  /** Crawls whose requests are counted one by one. The same server as `timing` without nginx. */
  counting: SiteServer;
  /** For the report: which server, how it is set up, pinned where. */
  description: string;
  server: "nginx" | "bun";
  stop(): Promise<void>;
}

const WORKER_CONNECTIONS = 4096;

/** The date every file is served with as Last-Modified (the Bun server sends it as a header). */
export const LAST_MODIFIED = new Date("2026-11-21T00:00:00Z");

export async function serveSite(ctx: Pick<Context, "tools" | "workDir">, dir: string, name: string): Promise<ServedSite> {
  const nginx = ctx.tools.nginx.argv?.[0];
  if (nginx === undefined) return serveWithBun(ctx, dir);
  setModified(dir);
  const timing = await startNginx(nginx, dir, join(ctx.workDir, `nginx-${name}-timing`), false);
  try {
    const counting = await startNginx(nginx, dir, join(ctx.workDir, `nginx-${name}-counting`), true);
    return {
      timing,
      counting,
      server: "nginx",
      description: `${ctx.tools.nginx.version ?? "nginx"}, pinned to core ${CORES.load} with one worker process (\`nginx -p $WORK -c nginx.conf\`: sendfile, open_file_cache, keepalive_requests 1000000, access_log off, stub_status on a second port; scripts/bench/site-server.ts writes the file)`,
      stop: async () => {
        await counting.stop();
        await timing.stop();
      },
    };
  } catch (error) {
    await timing.stop();
    throw error;
  }
}

async function serveWithBun(ctx: Pick<Context, "tools" | "workDir">, dir: string): Promise<ServedSite> {
  const server = await startServer([BUN, join(import.meta.dir, "static-server.ts"), dir], ctx.workDir, CORES.load, 180_000);
  const { control } = JSON.parse(server.line) as { control: string };
  const site: SiteServer = {
    url: server.url,
    reset: async () => {
      await (await fetch(`${control}/reset`)).arrayBuffer();
    },
    counts: async () => {
      const c = (await (await fetch(`${control}/stats`)).json()) as Counts;
      return {
        requests: c.requests,
        detail: {
          gets: c.requests - c.heads,
          heads: c.heads,
          pageGets: c.pages,
          distinctPages: c.distinctPages,
          firstPageAt: c.firstPageAt,
          lastPageAt: c.lastPageAt,
        },
      };
    },
  };
  return {
    timing: site,
    counting: site,
    server: "bun",
    description: `scripts/bench/static-server.ts (Bun.serve, every file held in memory), pinned to core ${CORES.load}: **nginx is not installed** (${ctx.tools.nginx.note ?? "not installed"}), so this run's rates may be the bench server's`,
    stop: server.stop,
  };
}

/** Every file and directory of the site gets LAST_MODIFIED as its mtime, which nginx sends. */
function setModified(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) setModified(path);
    utimesSync(path, LAST_MODIFIED, LAST_MODIFIED);
  }
}

/** The nginx.conf of one instance: `logging` turns the access log on and the status port off. */
export function nginxConfig(options: { prefix: string; root: string; port: number; statusPort: number; logging: boolean }): string {
  const { prefix, root, port, statusPort, logging } = options;
  const asRoot = process.getuid?.() === 0;
  // open_file_cache keeps a descriptor open per cached file: it stays within what the worker may
  // open (ulimit -Hn; raising that takes CAP_SYS_RESOURCE, which a sandbox's root may lack, and a
  // 50,000-page site over the limit ran nginx out of descriptors). A crawl asks for each page once,
  // so the cache serves --spider's GET after its HEAD and the wrk ceiling, not much else.
  const hardLimit = Number(Bun.spawnSync(["sh", "-c", "ulimit -Hn"]).stdout.toString().trim()) || 1024;
  const cacheFiles = Math.max(0, Math.min(200_000, hardLimit - 2 * WORKER_CONNECTIONS));
  return `# Written by genapi's benchmark (scripts/bench/site-server.ts): the synthetic site's files on loopback.
daemon off;
master_process on;
# Pinned with taskset to one core: one worker for it.
worker_processes 1;
worker_rlimit_nofile ${hardLimit};
${asRoot ? "user root;\n" : ""}pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections ${WORKER_CONNECTIONS}; }
http {
  types { text/html html; text/css css; image/svg+xml svg; text/plain txt; }
  default_type application/octet-stream;
  charset utf-8;
  # text/html always gets the charset; text/plain too, as from the Bun server.
  charset_types text/plain;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_requests 1000000;
  keepalive_timeout 75s;
  ${cacheFiles > 0 ? `open_file_cache max=${cacheFiles} inactive=10m;\n  open_file_cache_valid 10m;` : "open_file_cache off;"}
  etag off;
  server_tokens off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  log_format counting '$msec|$request_method|$status|$request_uri|$sent_http_content_type';
  access_log ${logging ? `${prefix}/access.log counting` : "off"};
  server {
    listen 127.0.0.1:${port};
    root ${root};
    # linkchecker throttles a host to 10 requests/s unless the server sends this header.
    add_header LinkChecker unthrottled;
    location / { }
    error_page 404 @notfound;
    location @notfound { charset off; default_type text/plain; return 404 "not found"; }
  }
${
  logging
    ? ""
    : `  server {
    listen 127.0.0.1:${statusPort};
    location = /status { stub_status; }
  }
`
}}
`;
}

async function startNginx(nginx: string, root: string, prefix: string, logging: boolean): Promise<SiteServer & { stop(): Promise<void> }> {
  mkdirSync(prefix, { recursive: true });
  for (let attempt = 1; ; attempt++) {
    // freePort's port may be taken again before nginx binds it: then nginx exits and we try another.
    const port = freePort();
    const statusPort = freePort();
    const conf = join(prefix, "nginx.conf");
    writeFileSync(conf, nginxConfig({ prefix, root, port, statusPort, logging }));
    const log = join(prefix, "access.log");
    if (logging) writeFileSync(log, "");
    const proc = Bun.spawn(pinned(CORES.load, [nginx, "-p", prefix, "-c", conf, "-e", join(prefix, "error.log")]), {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    const url = `http://127.0.0.1:${port}`;
    const stop = async () => {
      proc.kill("SIGTERM");
      if (!(await settlesWithin(proc.exited, 5_000))) proc.kill("SIGKILL");
      await proc.exited;
    };
    if (await answers(`${url}/robots.txt`, proc.exited)) {
      const status = `http://127.0.0.1:${statusPort}/status`;
      const served = async () => Number(/(\d+)\s+(\d+)\s+(\d+)\s*\nReading/.exec(await (await fetch(status)).text())?.[3]);
      let base = 0;
      return {
        url,
        stop,
        reset: async () => {
          if (logging) truncateSync(log, 0);
          else base = await served();
        },
        counts: async () => {
          if (!logging) return { requests: (await served()) - base - 1 }; // less this status request
          // nginx writes a request's line once the response is sent: give the last one a moment.
          await Bun.sleep(50);
          return countLog(readFileSync(log, "utf8"));
        },
      };
    }
    await stop();
    const stderr = await new Response(proc.stderr).text();
    if (attempt >= 3 || !/in use/.test(stderr)) throw new Error(`nginx did not start: ${stderr.trim().slice(0, 500)}`);
  }
}

/** Polls until the URL answers 200 (true), or the server exits or 10 s pass (false). */
async function answers(url: string, exited: Promise<number>): Promise<boolean> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = performance.now() + 10_000;
  while (!gone && performance.now() < deadline) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return true;
    } catch {}
    await Bun.sleep(10);
  }
  return false;
}

/** Counts of an access log in the `counting` format. */
export function countLog(text: string): SiteCounts {
  let requests = 0;
  let gets = 0;
  let heads = 0;
  let pageGets = 0;
  let firstPageAt = 0;
  let lastPageAt = 0;
  const pages = new Set<string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const [msec, method, status, uri, type] = line.split("|");
    requests++;
    if (method === "HEAD") heads++;
    if (method !== "GET") continue;
    gets++;
    if (status !== "200" || !type?.startsWith("text/html")) continue;
    const at = Number(msec) * 1000;
    pageGets++;
    pages.add(uri!);
    if (firstPageAt === 0 || at < firstPageAt) firstPageAt = at;
    if (at > lastPageAt) lastPageAt = at;
  }
  return { requests, detail: { gets, heads, pageGets, distinctPages: pages.size, firstPageAt, lastPageAt } };
}
