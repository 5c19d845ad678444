// Sites for the rendering tests: a loopback site that records every request with its
// method and its time in flight, a hand-written single-page application (no framework) whose
// links, robots meta and canonical exist only once its script has run, and a "private listener"
// that counts every TCP connection made to it, whatever the protocol.

/** What a route answers: an HTML string (200, text/html), or a handler. */
export type RenderRoute = string | ((req: Request, url: URL) => Response | Promise<Response>);

export interface Visit {
  method: string;
  /** Path with its query. */
  path: string;
  start: number;
  /** performance.now() when the answer was made, 0 while in flight. */
  end: number;
  /** The request's User-Agent, "" when it sent none. */
  userAgent: string;
}

export interface RenderSite {
  /** "http://127.0.0.1:<port>", no trailing slash. */
  url: string;
  port: number;
  visits: Visit[];
  /** The most requests in flight at one moment. */
  maxInFlight(): number;
  /** Paths (with query) of the requests whose path starts with `prefix`. */
  paths(prefix?: string): string[];
  stop(): Promise<void>;
}

export const htmlResponse = (html: string, init: ResponseInit = {}) =>
  new Response(html, { ...init, headers: { "content-type": "text/html; charset=utf-8", ...(init.headers as object) } });

/**
 * Serves `routes` keyed by path (any query), or by a prefix ending in "*"; anything else answers 404. Every request is recorded
 * before it is answered; "in flight" lasts until its answer's body has been made.
 */
export function serveRenderSite(routes: Record<string, RenderRoute>): RenderSite {
  const visits: Visit[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 120,
    async fetch(req) {
      const url = new URL(req.url);
      const visit: Visit = {
        method: req.method,
        path: url.pathname + url.search,
        start: performance.now(),
        end: 0,
        userAgent: req.headers.get("user-agent") ?? "",
      };
      visits.push(visit);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        const route = routes[url.pathname] ?? prefixRoute(routes, url.pathname);
        if (route === undefined) return new Response("not found", { status: 404 });
        const res = typeof route === "string" ? htmlResponse(route) : await route(req, url);
        const body = await res.arrayBuffer();
        return new Response(body, { status: res.status, headers: res.headers });
      } finally {
        visit.end = performance.now();
        inFlight--;
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    visits,
    maxInFlight: () => maxInFlight,
    paths: (prefix = "/") => visits.filter((v) => v.path.startsWith(prefix)).map((v) => v.path),
    stop: () => server.stop(true),
  };
}

/** The route of the longest key ending in "*" that `path` starts with. */
function prefixRoute(routes: Record<string, RenderRoute>, path: string): RenderRoute | undefined {
  const key = Object.keys(routes)
    .filter((k) => k.endsWith("*") && path.startsWith(k.slice(0, -1)))
    .sort((a, b) => b.length - a.length)[0];
  return key === undefined ? undefined : routes[key];
}

export interface PrivateListener {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** The first bytes received on each connection (what reached it, for the failure message). */
  received(): string[];
  stop(): void;
}

/**
 * A loopback TCP listener that only counts: any connection (HTTP, WebSocket, a proxy's CONNECT)
 * is recorded and closed after a minimal HTTP answer.
 */
export function listenPrivate(): PrivateListener {
  let connections = 0;
  const received: string[] = [];
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open() {
        connections++;
      },
      data(socket, data) {
        received.push(new TextDecoder().decode(data.subarray(0, 200)));
        socket.end("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
      },
    },
  });
  return { port: listener.port, connections: () => connections, received: () => received, stop: () => listener.stop(true) };
}

/** The pushState routes of the application and what its script does on each. */
export const SPA_ROUTES = ["/", "/about", "/blog/x", "/blog/y", "/hidden", "/dup"];
/** What a rendered crawl lists: /hidden is noindex and /dup is canonical to /about, both set by script. */
export const SPA_LISTED = ["/", "/about", "/blog/x", "/blog/y"];

/**
 * The application's shell, the same document for every route: its script fetches /pages.json,
 * builds the navigation, routes with pushState, and sets the robots meta and canonical per route.
 */
export const SPA_SHELL = `<!doctype html>
<html><head><meta charset="utf-8"><title>SPA</title></head>
<body><nav id="nav"></nav><main id="main">loading...</main>
<script>
function show(path) {
  document.getElementById("main").textContent = "page " + path;
  for (const old of document.querySelectorAll("meta[name=robots], link[rel=canonical]")) old.remove();
  if (path === "/hidden") {
    const meta = document.createElement("meta");
    meta.name = "robots";
    meta.content = "noindex";
    document.head.appendChild(meta);
  }
  if (path === "/dup") {
    const link = document.createElement("link");
    link.rel = "canonical";
    link.href = "/about";
    document.head.appendChild(link);
  }
}
fetch("/pages.json").then((res) => res.json()).then((pages) => {
  const nav = document.getElementById("nav");
  for (const page of pages) {
    const a = document.createElement("a");
    a.href = page.path;
    a.textContent = page.title;
    a.addEventListener("click", (event) => {
      event.preventDefault();
      history.pushState(null, "", page.path);
      show(page.path);
    });
    nav.appendChild(a);
  }
  show(location.pathname);
});
addEventListener("popstate", () => show(location.pathname));
</script></body></html>
`;

export const SPA_PAGES_JSON = JSON.stringify(SPA_ROUTES.map((path) => ({ path, title: `title of ${path}` })));

/** The single-page application: every route answers the shell; /pages.json lists the routes. */
export function spaRoutes(): Record<string, RenderRoute> {
  const routes: Record<string, RenderRoute> = {
    "/pages.json": () => new Response(SPA_PAGES_JSON, { headers: { "content-type": "application/json" } }),
  };
  for (const path of SPA_ROUTES) routes[path] = SPA_SHELL;
  return routes;
}

/** The same site without JavaScript links: plain HTML anchors (and a harmless script). */
export function plainRoutes(): Record<string, RenderRoute> {
  const nav = SPA_LISTED.map((path) => `<a href="${path}">${path}</a>`).join(" ");
  const page = (path: string) =>
    `<!doctype html><html><head><title>${path}</title></head><body><nav>${nav}</nav><main>page ${path}</main>` +
    `<script>document.title += " (scripted)";</script></body></html>`;
  return Object.fromEntries(SPA_LISTED.map((path) => [path, page(path)]));
}

/** The <loc>s of a sitemap, as paths of `origin`, sorted. */
export function listedPaths(sitemap: string, origin: string): string[] {
  return [...sitemap.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!.replace(origin, "")).sort();
}

/** Every process descended from `root` (Linux /proc), with its command name. */
export async function descendants(root: number): Promise<{ pid: number; comm: string }[]> {
  const { readdirSync, readFileSync } = await import("node:fs");
  const children = new Map<number, { pid: number; comm: string }[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push({ pid: Number(name), comm });
      children.set(ppid, list);
    } catch {
      // Ended meanwhile.
    }
  }
  const out: { pid: number; comm: string }[] = [];
  const stack = [root];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop()!) ?? []) {
      out.push(child);
      stack.push(child.pid);
    }
  }
  return out;
}

/** Resident memory of `root` and every process under it: the sum of VmRSS, and of Pss (shared pages shared out). */
export async function treeMemory(root: number): Promise<{ rss: number; pss: number }> {
  const { readFileSync } = await import("node:fs");
  const kB = (file: string, field: string) => {
    try {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(file, "utf8"));
      return m ? Number(m[1]) * 1024 : 0;
    } catch {
      return 0;
    }
  };
  let rss = 0;
  let pss = 0;
  for (const pid of [root, ...(await descendants(root)).map((p) => p.pid)]) {
    rss += kB(`/proc/${pid}/status`, "VmRSS");
    pss += kB(`/proc/${pid}/smaps_rollup`, "Pss");
  }
  return { rss, pss };
}
