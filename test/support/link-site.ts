// A site whose link report is known in advance (the README's link report), served on an
// ephemeral loopback port by a raw HTTP/1.1 server, so that a page can also reset its connection or
// never answer. Broken links (404, 410, 500, a reset or refused connection, a timeout), redirect
// chains (301 -> 302 -> 200, a loop, a redirect to a 404), a link from more than 5 pages (the cut to
// 5 referrers and the count), nofollow links (rel and meta), a robots-disallowed link, and a
// sitemap.xml listing broken, noindex, canonicalised, redirected and unlinked pages.
//
// "/refused" resets its connection here ("connection reset"); a test that can reroute it to a
// closed port gets a refused connection instead (engine tests with their own fetch do).
import type { LinkReport } from "../../src/crawler/links/model.ts";
import { type RawServer, rawServer, send } from "./raw-http-server.ts";

export interface LinkSite {
  url: string;
  server: RawServer;
  /** Paths requested, in order. */
  requests: string[];
  /** Pages served (robots.txt and sitemap.xml excluded). */
  pages: () => number;
  /** The report the site holds, given the error text of /refused. */
  expected: (refusedError: string) => LinkReport;
  stop: () => void;
}

type Answer = { status: number; body?: string; headers?: Record<string, string> } | "reset" | "hang";

const html = (body: string, head = "") => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;
const a = (...hrefs: string[]) => hrefs.map((h) => `<a href="${h}">${h}</a>`).join(" ");
const HUBS = ["/a", "/b", "/c", "/d", "/e", "/f", "/g"];

/**
 * `fillers` extra pages hang off the hubs, each linking to /missing (so its count grows with
 * them) and home; every page answers after `delayMs`.
 */
export function serveLinkSite(options: { fillers?: number; delayMs?: number } = {}): LinkSite {
  const fillers = options.fillers ?? 10;
  const requests: string[] = [];
  let pages = 0;
  let origin = "";
  const filler = (k: number) => `/f/${k}`;
  const fillersOf = (hub: number) => Array.from({ length: fillers }, (_, k) => k + 1).filter((k) => k % HUBS.length === hub);
  const routes: Record<string, Answer> = {
    "/": {
      status: 200,
      body: html(
        [
          a(
            ...HUBS,
            "/missing",
            "/gone",
            "/error",
            "/refused",
            "/slow",
            "/r1",
            "/loop1",
            "/to-missing",
            "/private/x",
            "/noindexed",
            "/canon",
          ),
          '<a rel="nofollow" href="/nofollowed">nf</a> <a href="/nf">a nofollow page</a> <a href="/missing#again">again</a>',
        ].join(" "),
      ),
    },
    "/nf": { status: 200, body: html(a("/gone", "/missing", "/never"), '<meta name="robots" content="nofollow">') },
    "/missing": { status: 404, body: "not found" },
    "/missing2": { status: 404, body: "not found" },
    "/missing-in-sitemap": { status: 404, body: "not found" },
    "/gone": { status: 410, body: "gone" },
    "/error": { status: 500, body: "oops" },
    "/refused": "reset",
    "/slow": "hang",
    "/r1": { status: 301, headers: { location: "/r2" } },
    "/r2": { status: 302, headers: { location: "/ok200" } },
    "/ok200": { status: 200, body: html(a("/")) },
    "/loop1": { status: 301, headers: { location: "/loop2" } },
    "/loop2": { status: 301, headers: { location: "/loop1" } },
    "/to-missing": { status: 301, headers: { location: "/missing2" } },
    "/noindexed": { status: 200, body: html(a("/"), '<meta name="robots" content="noindex">') },
    "/canon": { status: 200, body: html(a("/"), '<link rel="canonical" href="/ok200">') },
    "/orphan": { status: 200, body: html("only the sitemap lists me") },
    "/never": { status: 404, body: "never requested: only a nofollow page links here" },
    "/nofollowed": { status: 404, body: "never requested: only a nofollow link points here" },
  };
  HUBS.forEach((hub, i) => {
    const extra = hub === "/b" ? ["/r2"] : [];
    routes[hub] = { status: 200, body: html(a("/", "/missing", ...extra, ...fillersOf(i).map(filler))) };
  });
  for (let k = 1; k <= fillers; k++) routes[filler(k)] = { status: 200, body: html(a("/", "/missing", `../f/${k}`)) };

  const server = rawServer(async (req, conn) => {
    const path = req.target.split("?")[0]!;
    requests.push(path);
    if (path === "/robots.txt") {
      return void respond(conn, { status: 200, body: `User-agent: *\nDisallow: /private\nSitemap: ${origin}/sitemap.xml\n` }, "text/plain");
    }
    if (path === "/sitemap.xml") {
      const locs = ["/a", "/canon", "/missing-in-sitemap", "/noindexed", "/orphan", "/private/y", "/r1"];
      const xml = `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((l) => `<url><loc>${origin}${l}</loc></url>`).join("")}</urlset>`;
      return void respond(conn, { status: 200, body: xml }, "application/xml");
    }
    pages++;
    if (options.delayMs) await Bun.sleep(options.delayMs);
    const answer = routes[path] ?? { status: 404, body: "no such page" };
    if (answer === "hang") return;
    if (answer === "reset") return void conn.socket.terminate();
    respond(conn, answer, "text/html; charset=utf-8");
  });
  origin = server.url;

  const expected = (refusedError: string): LinkReport => {
    const u = (path: string) => `${origin}${path}`;
    const home = [u("/")];
    const missingReferrers = 1 + HUBS.length + fillers + 1; // home, the hubs, the fillers, /nf (nofollow)
    return {
      broken: [
        { url: u("/error"), kind: "page", status: 500, error: "HTTP 500", referrers: home, referrer_count: 1 },
        { url: u("/gone"), kind: "page", status: 410, error: "HTTP 410", referrers: [u("/"), u("/nf")], referrer_count: 2 },
        { url: u("/loop1"), kind: "page", status: null, error: "redirect loop", referrers: home, referrer_count: 1 },
        {
          url: u("/missing"),
          kind: "page",
          status: 404,
          error: "HTTP 404",
          referrers: [u("/"), u("/a"), u("/b"), u("/c"), u("/d")],
          referrer_count: missingReferrers,
        },
        { url: u("/refused"), kind: "page", status: null, error: refusedError, referrers: home, referrer_count: 1 },
        { url: u("/slow"), kind: "page", status: null, error: "timed out", referrers: home, referrer_count: 1 },
        { url: u("/to-missing"), kind: "page", status: 404, error: "HTTP 404", referrers: home, referrer_count: 1 },
      ],
      redirects: [
        { url: u("/loop1"), status: 301, target: u("/loop1"), hops: 2, referrers: home, referrer_count: 1 },
        { url: u("/r1"), status: 301, target: u("/ok200"), hops: 2, referrers: home, referrer_count: 1 },
        { url: u("/r2"), status: 302, target: u("/ok200"), hops: 1, referrers: [u("/b")], referrer_count: 1 },
        { url: u("/to-missing"), status: 301, target: u("/missing2"), hops: 1, referrers: home, referrer_count: 1 },
      ],
      sitemap_errors: [
        { url: u("/canon"), sitemap: u("/sitemap.xml"), reason: "canonical" },
        { url: u("/missing-in-sitemap"), sitemap: u("/sitemap.xml"), reason: "http_error" },
        { url: u("/noindexed"), sitemap: u("/sitemap.xml"), reason: "noindex" },
        { url: u("/orphan"), sitemap: u("/sitemap.xml"), reason: "not_linked" },
        { url: u("/private/y"), sitemap: u("/sitemap.xml"), reason: "robots" },
        { url: u("/r1"), sitemap: u("/sitemap.xml"), reason: "redirect" },
      ],
      truncated: false,
    };
  };
  return { url: origin, server, requests, pages: () => pages, expected, stop: () => server.stop() };
}

function respond(conn: Parameters<typeof send>[0], answer: Exclude<Answer, string>, type: string): Promise<void> {
  const body = Buffer.from(answer.body ?? "");
  const headers = { "content-type": type, "content-length": String(body.byteLength), ...answer.headers };
  const head = `HTTP/1.1 ${answer.status} X\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;
  return send(conn, Buffer.concat([Buffer.from(head, "latin1"), body]));
}

/**
 * A site whose home page links to `count` pages that all answer 404: more broken links than
 * `data.links` holds (1,000), to see the cut and `truncated`.
 */
export function serveManyBroken(count: number): { url: string; stop: () => void } {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const { pathname } = new URL(req.url);
      if (pathname !== "/") return new Response("not found", { status: 404 });
      const links = Array.from({ length: count }, (_, i) => `<a href="/broken/${String(i).padStart(5, "0")}">x</a>`).join("");
      return new Response(html(links), { headers: { "content-type": "text/html" } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
