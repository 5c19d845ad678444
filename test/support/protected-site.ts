// A site behind credentials, on an ephemeral loopback port, that records every request it receives
// with its headers: for the tests of option `auth` (where credentials go, and where they never go).
//
// Pages: `/` is page 0; page i links to pages fanout*i+1 .. fanout*i+fanout below `size` and back
// to `/`, plus `links(i)` (e.g. another origin). robots.txt names /sitemap.xml, which lists every
// page. Every path, robots.txt and the sitemap included, answers 401 unless `authorized(request)`.

export interface RecordedRequest {
  path: string;
  /** The Host header as received. */
  host: string;
  /** Every header, names lower-cased. */
  headers: Record<string, string>;
}

export interface ProtectedSite {
  /** "http://127.0.0.1:<port>", no trailing slash. */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** The URLs an uninterrupted, authorized crawl lists. */
  expected: string[];
  stop: () => Promise<void>;
}

export interface ProtectedSiteOptions {
  size: number;
  fanout?: number;
  /** Whether a request carries what the site wants; default: every request. */
  authorized?: (request: Request, count: number) => boolean;
  /** Links of page i beside its children, absolute or relative. */
  links?: (i: number) => string[];
  /** Routes answered before anything else (redirects, ...); checked for credentials too unless `open`. */
  routes?: Record<string, (request: Request) => Response>;
  /** Paths answered without any check. */
  open?: string[];
  /** Each page's answer waits this long. */
  delayMs?: number;
}

export function serveProtectedSite(options: ProtectedSiteOptions): ProtectedSite {
  const fanout = options.fanout ?? 5;
  const requests: RecordedRequest[] = [];
  let url = "";
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const { pathname } = new URL(req.url);
      requests.push({ path: pathname, host: req.headers.get("host") ?? "", headers: Object.fromEntries(req.headers) });
      const route = options.routes?.[pathname];
      if (options.open?.includes(pathname) && route) return route(req);
      if (options.authorized && !options.authorized(req, requests.length)) {
        return new Response("<!doctype html><title>Sign in</title>", {
          status: 401,
          headers: { "content-type": "text/html", "www-authenticate": 'Basic realm="staging"' },
        });
      }
      if (route) return route(req);
      if (pathname === "/robots.txt") return new Response(`User-agent: *\nAllow: /\nSitemap: ${url}/sitemap.xml\n`);
      if (pathname === "/sitemap.xml") {
        const locs = Array.from({ length: options.size }, (_, i) => `<url><loc>${url}${i === 0 ? "/" : `/p${i}`}</loc></url>`).join("");
        return new Response(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs}</urlset>`, {
          headers: { "content-type": "application/xml" },
        });
      }
      const i = pathname === "/" ? 0 : Number(/^\/p(\d+)$/.exec(pathname)?.[1] ?? -1);
      if (!(i >= 0 && i < options.size)) return new Response("not found", { status: 404 });
      if (options.delayMs) await Bun.sleep(options.delayMs);
      const hrefs = ["/"];
      for (let c = fanout * i + 1; c <= fanout * i + fanout && c < options.size; c++) hrefs.push(`/p${c}`);
      hrefs.push(...(options.links?.(i) ?? []));
      const body = hrefs.map((h) => `<a href="${h}">${h}</a>`).join("");
      return new Response(`<!doctype html><html><head><title>${i}</title></head><body>${body}</body></html>`, {
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    },
  });
  url = `http://127.0.0.1:${server.port}`;
  const expected = [`${url}/`, ...Array.from({ length: options.size - 1 }, (_, i) => `${url}/p${i + 1}`)].sort();
  return { url, port: server.port!, requests, expected, stop: () => server.stop(true) };
}

/** A request's credential headers (Authorization, Cookie, and `names`), those it carries. */
export function credentialHeadersOf(request: RecordedRequest, names: string[] = []): Record<string, string> {
  const wanted = ["authorization", "cookie", "proxy-authorization", ...names.map((n) => n.toLowerCase())];
  return Object.fromEntries(Object.entries(request.headers).filter(([name]) => wanted.includes(name)));
}

export const basicHeader = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`;
