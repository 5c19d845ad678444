// Option `auth` when pages are rendered: the browser's requests go through
// the same network path as the crawl's own, so a protected single-page application's own
// sub-requests carry the start origin's credentials and are crawled completely, and what the page
// asks of another origin carries none. Real Chromium (skipped, saying why, where there is none);
// the sandbox is off only because tests run as root.
import { afterAll, expect, test } from "bun:test";
import {
  Browser,
  type CrawlAuth,
  crawlSite,
  createCrawlNetwork,
  defaultCrawlLimits,
  defaultCrawlOptions,
} from "../../src/crawler/index.ts";
import { program } from "../support/requires.ts";

const SECRET = "Planted-S3cret-render-4b7d";
const AUTH: CrawlAuth = { basic: { username: "preview", password: SECRET } };
const expected = `Basic ${Buffer.from(`preview:${SECRET}`).toString("base64")}`;
const chromium = program(import.meta.path, "chromium");

const pages = ["/", "/a", "/b"];
const other: { path: string; authorization: string | null; cookie: string | null }[] = [];
const otherServer = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    other.push({ path: new URL(req.url).pathname, authorization: req.headers.get("authorization"), cookie: req.headers.get("cookie") });
    return Response.json(["/from-elsewhere"]);
  },
});
const seen: { path: string; authorized: boolean }[] = [];
const site = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const path = new URL(req.url).pathname;
    const authorized = req.headers.get("authorization") === expected;
    seen.push({ path, authorized });
    if (!authorized) return new Response("who are you?", { status: 401, headers: { "www-authenticate": 'Basic realm="staging"' } });
    if (path === "/robots.txt") return new Response("User-agent: *\nAllow: /\n");
    if (path === "/pages.json") return Response.json(pages);
    if (!pages.includes(path)) return new Response("not found", { status: 404 });
    // The navigation exists only once the script has run: its links come from /pages.json, and it
    // also asks another origin for more.
    const shell = `<!doctype html><html><body><nav id="n"></nav><script>
      const nav = document.getElementById("n");
      const add = (p) => { const a = document.createElement("a"); a.href = p; a.textContent = p; nav.append(a); };
      fetch("/pages.json").then((r) => r.json()).then((l) => l.forEach(add));
      fetch("http://127.0.0.1:${otherServer.port}/more.json", { credentials: "include" }).then((r) => r.json()).then((l) => l.forEach(add)).catch(() => {});
    </script></body></html>`;
    return new Response(shell, { headers: { "content-type": "text/html" } });
  },
});
const browser =
  chromium === null ? null : new Browser({ executable: chromium, tabs: 2, noSandbox: process.getuid?.() === 0, log: () => {} });

afterAll(async () => {
  await browser?.close();
  site.stop(true);
  otherServer.stop(true);
});

test.skipIf(chromium === null)(
  "a protected single-page application rendered with auth: listed whole, every request of the browser to it authorized, none to another origin",
  async () => {
    const result = await crawlSite(
      `http://127.0.0.1:${site.port}/`,
      { ...defaultCrawlLimits, maxPages: 50 },
      {
        fetch: createCrawlNetwork({ policy: { allowPrivate: true, allowTargets: [] } }),
        now: Date.now,
        userAgent: "genapi/0.1.0",
        renderer: { browser: browser!, timeoutMs: 10_000 },
      },
      undefined,
      { ...defaultCrawlOptions(50), render: "always", auth: AUTH },
    );
    expect(result.entries.map((e) => new URL(e.loc).pathname).sort()).toEqual(["/", "/a", "/b"]);
    expect(result.render).toEqual({ mode: "always", rendered: true, pages_rendered: 3 });
    // The browser's own sub-requests (/pages.json, once a page) reached the site, with credentials.
    expect(seen.filter((r) => r.path === "/pages.json").length).toBe(3);
    expect(seen.filter((r) => !r.authorized)).toEqual([]);
    // Another origin (on loopback, so the guard refuses it to a page) got nothing, least of all a credential.
    expect(other.filter((r) => r.authorization !== null || r.cookie !== null)).toEqual([]);
    expect(other).toEqual([]);
  },
  60_000,
);
