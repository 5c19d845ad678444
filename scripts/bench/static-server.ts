// The static server of the synthetic site: `bun static-server.ts DIR`, run pinned to its own core.
// The crawl benchmarks serve the site with nginx (site-server.ts); this one stands in where nginx
// is not installed (the smoke run installs nothing). Every file is held in memory and answered from
// a Map, so a request costs a lookup and a write.
// It counts the HTML pages it serves and when the first and last of them went out, which is how
// every crawler's rate is measured; a second port (never linked from the site) reports and resets
// the counts. Prints one JSON line: {"address": "http://127.0.0.1:N", "control": "http://127.0.0.1:M"}.
import { readdirSync, readFileSync } from "node:fs";
import { extname, join, relative } from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css",
  ".svg": "image/svg+xml",
  ".txt": "text/plain; charset=utf-8",
};

// LinkChecker throttles every host to 10 requests/s unless the server answers with a "LinkChecker"
// header (its documented opt-out); without it the comparison would measure that throttle.
const COMMON = { "last-modified": "Sat, 21 Nov 2026 00:00:00 GMT", linkchecker: "unthrottled" };

export interface StaticFile {
  body: Uint8Array;
  headers: Record<string, string>;
  html: boolean;
}

/** URL path -> file; "a/index.html" is served as "/a/". */
export function loadSite(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const file = join(folder, entry.name);
      if (entry.isDirectory()) {
        walk(file);
        continue;
      }
      const type = TYPES[extname(file)] ?? "application/octet-stream";
      const path = `/${relative(dir, file)}`.replace(/(^|\/)index\.html$/, "$1");
      files.set(path, { body: readFileSync(file), headers: { ...COMMON, "content-type": type }, html: type.startsWith("text/html") });
    }
  };
  walk(dir);
  return files;
}

export interface Counts {
  /** GET requests answered with an HTML page. */
  pages: number;
  /** Every request, HEAD and 404 included. */
  requests: number;
  /** HEAD requests. */
  heads: number;
  /** Distinct HTML pages among `pages` (a crawler that fetches each page once has as many). */
  distinctPages: number;
  /** performance.now() of the first and the last page served since the last reset. */
  firstPageAt: number;
  lastPageAt: number;
}

const ZERO: Counts = { pages: 0, requests: 0, heads: 0, distinctPages: 0, firstPageAt: 0, lastPageAt: 0 };

if (import.meta.main) {
  const dir = Bun.argv[2];
  if (dir === undefined) throw new Error("usage: static-server.ts DIR");
  const files = loadSite(dir);
  const counts: Counts = { ...ZERO };
  const fetched = new Set<string>();
  const site = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      counts.requests++;
      if (req.method === "HEAD") counts.heads++;
      const path = new URL(req.url).pathname;
      const file = files.get(path);
      if (file === undefined) return new Response("not found", { status: 404, headers: { "content-type": "text/plain" } });
      if (file.html && req.method === "GET") {
        counts.lastPageAt = performance.now();
        if (counts.pages++ === 0) counts.firstPageAt = counts.lastPageAt;
        fetched.add(path);
        counts.distinctPages = fetched.size;
      }
      return new Response(req.method === "HEAD" ? null : file.body, {
        headers: { ...file.headers, "content-length": String(file.body.byteLength) },
      });
    },
  });
  const control = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const snapshot = Response.json(counts);
      if (new URL(req.url).pathname === "/reset") {
        Object.assign(counts, ZERO);
        fetched.clear();
      }
      return snapshot;
    },
  });
  console.log(JSON.stringify({ address: `http://127.0.0.1:${site.port}`, control: `http://127.0.0.1:${control.port}` }));
}
