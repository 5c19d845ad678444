// Staging sites through the compiled executable: a site built to keep crawlers out (basic auth on
// every answer, robots.txt `Disallow: /`, `X-Robots-Tag: noindex` and a meta noindex on every page)
// is listed whole under its production origin only with the owner's credentials and both `ignore`s;
// its Crawl-delay still paces the crawl. And `documents`: PDFs and office files listed by their
// answer alone, their bodies never read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKey, runBinary, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { validateSitemap } from "../support/xmllint.ts";
import { createJob, generatedSite, json, locs, waitForJob } from "../jobs/support.ts";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

const USER = "staging";
const PASSWORD = "Preview-Pa55";
const AUTH = { basic: { username: USER, password: PASSWORD } };
const PRODUCTION = "https://www.example.com";
const PAGES = 200;
/** robots.txt's Crawl-delay, seconds: 200 pages take at least 199 of them. */
const CRAWL_DELAY_S = 0.01;

interface StagingSite {
  url: string;
  /** Arrival times (ms) of the page requests that carried the credentials. */
  arrivals: number[];
  stop: () => Promise<void>;
}

/** 200 pages, each linking to up to 10 more, all behind basic auth, disallowed and noindex. */
function stagingSite(): StagingSite {
  const arrivals: number[] = [];
  const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString("base64")}`;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      if (req.headers.get("authorization") !== expected)
        return new Response("who are you?", { status: 401, headers: { "www-authenticate": 'Basic realm="staging"' } });
      const { pathname } = new URL(req.url);
      if (pathname === "/robots.txt") return new Response(`User-agent: *\nDisallow: /\nCrawl-delay: ${CRAWL_DELAY_S}\n`);
      const i = pathname === "/" ? 0 : Number(/^\/p(\d+)$/.exec(pathname)?.[1] ?? -1);
      if (!(i >= 0 && i < PAGES)) return new Response("not found", { status: 404 });
      arrivals.push(performance.now());
      let links = "";
      for (let c = 10 * i + 1; c <= 10 * i + 10 && c < PAGES; c++) links += `<a href="/p${c}">${c}</a>`;
      return new Response(
        `<!doctype html><html><head><meta name="robots" content="noindex"><title>${i}</title></head><body>${links}</body></html>`,
        { headers: { "content-type": "text/html; charset=utf-8", "x-robots-tag": "noindex" } },
      );
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, arrivals, stop: () => server.stop(true) };
}

const production = [`${PRODUCTION}/`, ...Array.from({ length: PAGES - 1 }, (_, i) => `${PRODUCTION}/p${i + 1}`)].sort();

const started: RunningBinary[] = [];
afterAll(() => {
  for (const server of started) if (server.proc.exitCode === null) server.proc.kill("SIGKILL");
});

describe("a staging site: auth, Disallow: /, noindex everywhere", () => {
  let server: RunningBinary;
  let key: string;
  const site = stagingSite();
  afterAll(() => site.stop());
  beforeAll(async () => {
    server = await startBinary({ args: ["--allow-private-targets"] });
    started.push(server);
    key = await createKey(server.dbPath, "--daily-limit", "100");
  });

  const generate = async (body: Record<string, unknown>) => {
    const res = await fetch(`${server.url}/api/generate`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ url: `${site.url}/`, ...body }),
    });
    return { status: res.status, remaining: res.headers.get("x-ratelimit-remaining"), body: await json(res) };
  };

  test("without options 502; with auth alone 502 (robots.txt); ignore without auth: the exact 400, nothing counted", async () => {
    const none = await generate({});
    expect(none.status).toBe(502);
    expect(none.body).toEqual({ success: false, message: `Could not crawl ${site.url}/: HTTP 401` });
    const authOnly = await generate({ auth: AUTH });
    expect(authOnly.status).toBe(502);
    expect(authOnly.body).toEqual({ success: false, message: `Could not crawl ${site.url}/: robots.txt disallows it` });
    const robotsOnly = await generate({ auth: AUTH, robots: "ignore" });
    expect(robotsOnly.status).toBe(422);
    expect(robotsOnly.body.message).toBe(`Could not crawl ${site.url}/: no indexable page found (the start page is noindex)`);
    const remaining = robotsOnly.remaining;
    for (const field of ["robots", "noindex"]) {
      const refused = await generate({ [field]: "ignore", public_origin: PRODUCTION });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ success: false, message: `${field} "ignore" needs auth.` });
      expect(refused.remaining).toBe(remaining);
    }
    for (const field of ["max_urls_per_file", "sitemap_base_url", "gzip_files"]) {
      const refused = await generate({ [field]: field === "sitemap_base_url" ? `${PRODUCTION}/` : field === "gzip_files" ? true : 10 });
      expect(refused.body).toEqual({ success: false, message: `${field} is only for jobs.` });
    }
    const badOrigin = await generate({ public_origin: `${PRODUCTION}/blog/` });
    expect(badOrigin.body).toEqual({ success: false, message: "public_origin must be an http(s) origin such as https://www.example.com." });
  });

  test("auth, robots and noindex ignored, public_origin: every page once, on the production origin, schema-valid; Crawl-delay kept", {
    timeout: 30_000,
  }, async () => {
    site.arrivals.length = 0;
    const res = await generate({ auth: AUTH, robots: "ignore", noindex: "ignore", public_origin: PRODUCTION });
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.url).toBe(`${site.url}/`);
    expect(data.url_count).toBe(PAGES);
    expect(locs(data.sitemap)).toEqual(production);
    expect(await validateSitemap(data.sitemap)).toEqual({ valid: true, errors: [] });
    expect(data.excluded.robots).toBe(0);
    expect(data.excluded.noindex).toBe(0);
    expect(data.politeness.crawl_delay_s).toBe(CRAWL_DELAY_S);
    // 200 page requests at least 10 ms apart (one late arrival may bunch two).
    expect(site.arrivals.length).toBe(PAGES);
    expect(site.arrivals.at(-1)! - site.arrivals[0]!).toBeGreaterThanOrEqual((PAGES - 2) * CRAWL_DELAY_S * 1000);
  });

  test("a job and genapi crawl list the same", { timeout: 60_000 }, async () => {
    const created = await json(
      await createJob(server, key, { url: `${site.url}/`, auth: AUTH, robots: "ignore", noindex: "ignore", public_origin: PRODUCTION }),
    );
    expect(created.data.options).toMatchObject({ robots: "ignore", noindex: "ignore", public_origin: PRODUCTION });
    const job = await waitForJob(server, key, created.data.id, (j) => j.status !== "queued" && j.status !== "running");
    expect(job.status).toBe("succeeded");
    const xml = await (await fetch(`${server.url}/api/jobs/${job.id}/sitemap.xml`, { headers: { "x-api-key": key } })).text();
    expect(locs(xml)).toEqual(production);

    const cli = await runBinary(
      ["crawl", `${site.url}/`, "--auth-user", USER, "--robots", "ignore", "--noindex", "ignore", "--public-origin", PRODUCTION, "--quiet"],
      { env: { GENAPI_AUTH_PASSWORD: PASSWORD } },
    );
    expect(cli.stderr).toBe("");
    expect(cli.code).toBe(0);
    expect(locs(cli.stdout)).toEqual(production);
    const refused = await runBinary(["crawl", `${site.url}/`, "--robots", "maybe"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('genapi: --robots must be one of: obey, ignore (got "maybe")\n');
  });
});

describe("documents", () => {
  const PDF_DATE = "Tue, 03 Mar 2026 10:00:00 GMT";
  const DOCX_DATE = "Wed, 04 Mar 2026 11:30:00 GMT";
  const HUGE = 200 * 1024 * 1024;

  test("a PDF and a .docx are listed with their Last-Modified; noindex, 404 and 200 MB ones are not; no document body is read", async () => {
    let hugeBytesSent = 0;
    const home = `<a href="/a.pdf">a</a><a href="/b.docx">b</a><a href="/hidden.pdf">c</a><a href="/gone.pdf">d</a><a href="/huge.pdf">e</a><a href="/page">f</a>`;
    const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
    const pages: Record<string, [number, Record<string, string>, string]> = {
      "/": [200, { "content-type": "text/html" }, home],
      "/page": [200, { "content-type": "text/html" }, "<title>p</title>"],
      "/a.pdf": [200, { "content-type": "application/pdf", "last-modified": PDF_DATE }, "%PDF-1.7 ..."],
      "/b.docx": [200, { "content-type": DOCX, "last-modified": DOCX_DATE }, "PK..."],
      "/hidden.pdf": [200, { "content-type": "application/pdf", "x-robots-tag": "noindex" }, "%PDF-1.7"],
      "/gone.pdf": [404, { "content-type": "application/pdf" }, "gone"],
    };
    // node:http, so that the 200 MB answer carries its Content-Length and its bytes are counted as sent.
    const server = createServer((req, res) => {
      if (req.url === "/huge.pdf") {
        res.writeHead(200, { "content-type": "application/pdf", "content-length": String(HUGE) });
        const chunk = Buffer.alloc(64 * 1024);
        const pump = () => {
          while (hugeBytesSent < HUGE && !res.destroyed) {
            hugeBytesSent += chunk.byteLength;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        return pump();
      }
      const [status, headers, body] = pages[req.url ?? ""] ?? [404, {}, "not found"];
      res.writeHead(status, headers).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    const url = `http://127.0.0.1:${port}`;
    try {
      const dir = tempDir();
      const report = join(dir, "report.json");
      const cli = await runBinary(["crawl", `${url}/`, "--documents", "--json", "--output", join(dir, "sitemap.xml")]);
      expect(cli.code).toBe(0);
      const xml = readFileSync(join(dir, "sitemap.xml"), "utf8");
      expect(locs(xml)).toEqual([`${url}/`, `${url}/a.pdf`, `${url}/b.docx`, `${url}/page`]);
      expect(xml).toContain(`<url><loc>${url}/a.pdf</loc><lastmod>2026-03-03T10:00:00Z</lastmod></url>`);
      expect(xml).toContain(`<url><loc>${url}/b.docx</loc><lastmod>2026-03-04T11:30:00Z</lastmod></url>`);
      expect(await validateSitemap(xml)).toEqual({ valid: true, errors: [] });
      const data = JSON.parse(cli.stderr);
      expect(data.excluded).toMatchObject({ noindex: 1, http_error: 1, failed: 1, not_html: 0 });
      expect(data.excluded_examples.failed).toEqual([`${url}/huge.pdf`]);
      // The 200 MB body was not read: the server got no further than its socket buffers take.
      expect(hugeBytesSent).toBeLessThan(16 * 1024 * 1024);
      // Without the option, documents are not_html as before.
      const plain = await runBinary(["crawl", `${url}/`, "--json", "--output", report]);
      expect(locs(readFileSync(report, "utf8"))).toEqual([`${url}/`, `${url}/page`]);
      expect(JSON.parse(plain.stderr).excluded.not_html).toBe(4);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("publishing: parts of a chosen size, under a base URL, gzip-compressed", () => {
  const SIZE = 120_000;
  const BASE = "https://cdn.example.com/maps/";

  /** The index's part URLs and each part's URLs, gunzipped and schema-checked. */
  async function readParts(index: string, part: (name: string) => Promise<Uint8Array>) {
    expect(await validateSitemap(index)).toEqual({ valid: true, errors: [] });
    const names = locs(index);
    const urls: string[] = [];
    const sizes: { gzipped: number; plain: number }[] = [];
    for (const name of names) {
      const gzipped = await part(name);
      const xml = Bun.gunzipSync(gzipped as Uint8Array<ArrayBuffer>);
      const text = new TextDecoder().decode(xml);
      expect(await validateSitemap(text)).toEqual({ valid: true, errors: [] });
      sizes.push({ gzipped: gzipped.byteLength, plain: xml.byteLength });
      urls.push(...locs(text));
    }
    return { names, urls, sizes };
  }

  test(`a ${SIZE.toLocaleString("en-US")}-URL job and genapi crawl --output: three .xml.gz parts of at most 40,000 URLs, named under the base URL`, {
    timeout: 240_000,
  }, async () => {
    const site = generatedSite(SIZE, { fanout: 50 });
    try {
      const server = await startBinary({ args: ["--allow-private-targets", "--job-max-pages", String(SIZE + 10), "--job-timeout", "600"] });
      started.push(server);
      const key = await createKey(server.dbPath, "--daily-limit", "10");
      const created = await json(
        await createJob(server, key, { url: `${site.url}/`, max_urls_per_file: 40_000, sitemap_base_url: BASE, gzip_files: true }),
      );
      const job = await waitForJob(server, key, created.data.id, (j) => j.status !== "queued" && j.status !== "running", 200_000);
      expect(job.status).toBe("succeeded");
      expect(job.result).toMatchObject({ url_count: SIZE, sitemap_parts: 3 });
      const get = (path: string) => fetch(`${server.url}/api/jobs/${job.id}/${path}`, { headers: { "x-api-key": key } });
      const served = await readParts(await (await get("sitemap.xml")).text(), async (loc) => {
        expect(loc.startsWith(BASE)).toBe(true);
        const res = await get(loc.slice(BASE.length));
        expect(res.headers.get("content-type")).toBe("application/gzip");
        return res.bytes();
      });
      expect(served.names).toEqual([1, 2, 3].map((n) => `${BASE}sitemap-${n}.xml.gz`));
      expect(served.urls).toEqual(site.expected);
      console.log(`publishing job parts (bytes gzipped / plain): ${served.sizes.map((s) => `${s.gzipped} / ${s.plain}`).join(", ")}`);
      // The plain names are not the parts of a gzip_files job.
      expect((await get("sitemap-1.xml")).status).toBe(404);

      const dir = tempDir();
      const cli = await runBinary([
        "crawl",
        `${site.url}/`,
        "--output",
        join(dir, "sitemap.xml"),
        "--max-urls-per-file",
        "40000",
        "--sitemap-base-url",
        BASE,
        "--gzip",
        "--max-pages",
        String(SIZE + 10),
        "--quiet",
      ]);
      expect(cli.stderr).toBe("");
      expect(cli.code).toBe(0);
      const written = await readParts(readFileSync(join(dir, "sitemap.xml"), "utf8"), async (loc) =>
        readFileSync(join(dir, loc.slice(BASE.length))),
      );
      expect(written.names).toEqual([1, 2, 3].map((n) => `${BASE}sitemap-${n}.xml.gz`));
      expect(written.urls).toEqual(site.expected);
    } finally {
      await site.stop();
    }
  });
});
