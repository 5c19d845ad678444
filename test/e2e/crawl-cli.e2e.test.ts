// `genapi crawl URL` through the executable, against fixture sites on loopback: the same sitemap and
// report as the API, files and parts with --output, exit codes, the progress line on a terminal
// only, and Ctrl-C.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createKey, ensureBinary, FTL_CASES, procEntries, runBinary, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { needs } from "../support/requires.ts";
import { serveSite, type Site } from "../support/site.ts";
import { validateSitemap } from "../support/xmllint.ts";
import { waitFor } from "../support/wait.ts";

const html = (body: string, head = "") => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;

/** A small site with something for each option and exclusion reason. */
function smallSite(): Promise<Site> {
  return serveSite({
    "/robots.txt": (req) =>
      new Response(`User-agent: *\nDisallow: /private\nSitemap: ${new URL(req.url).origin}/sitemap.xml\n`, {
        headers: { "content-type": "text/plain" },
      }),
    // Names a page no link reaches: listed only with --sitemaps-from-robots.
    "/sitemap.xml": (req) =>
      new Response(
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${new URL(req.url).origin}/orphan</loc></url></urlset>`,
        {
          headers: { "content-type": "application/xml" },
        },
      ),
    "/orphan": html("orphan"),
    "/": html(
      '<a href="/a">a</a> <a href="/b?utm_source=x&id=1">b</a> <a href="/private/x">p</a> <a href="/hidden">h</a> ' +
        '<a href="/old">old</a> <a href="/file.pdf">pdf</a> <a href="/gone">gone</a> <a href="/blog/1">blog</a> <img src="/logo.png">',
      '<link rel="alternate" hreflang="fr" href="/fr/">',
    ),
    "/a": html('<a href="/blog/2">2</a> <img src="/a.png">'),
    "/b": new Response(html("b"), { headers: { "content-type": "text/html", "last-modified": "Sat, 21 Nov 2026 10:00:00 GMT" } }),
    "/hidden": html("h", '<meta name="robots" content="noindex">'),
    "/old": new Response(null, { status: 301, headers: { location: "/a" } }),
    "/file.pdf": new Response("%PDF", { headers: { "content-type": "application/pdf" } }),
    "/blog/1": html('<a href="/blog/3">3</a>'),
    "/blog/2": html("2"),
    "/blog/3": html("3"),
  });
}

/**
 * A site of `pages` pages generated on the fly: page i links to pages i*fan+1 .. i*fan+fan, so a
 * breadth-first crawl finds them all with few requests per page of links. `delayMs` slows each page.
 */
function generatedSite(pages: number, options: { fan?: number; delayMs?: number } = {}) {
  const fan = options.fan ?? 50;
  let served = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const match = /^\/(?:p\/(\d+))?$/.exec(path);
      const i = match ? Number(match[1] ?? 0) : NaN;
      if (!(i < pages)) return new Response("not found", { status: 404 });
      if (options.delayMs) await Bun.sleep(options.delayMs);
      served++;
      let links = "";
      for (let j = i * fan + 1; j <= i * fan + fan && j < pages; j++) links += `<a href="/p/${j}">${j}</a>`;
      return new Response(`<html><body>${links}</body></html>`, { headers: { "content-type": "text/html" } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, served: () => served, stop: () => server.stop(true) };
}

/** Runs `genapi crawl` to completion, stdin and stderr piped (not a terminal). */
function crawl(args: string[], cwd?: string) {
  return runBinary(["crawl", ...args], { cwd });
}

const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!);

describe("genapi crawl: the API's sitemap and report", () => {
  let site: Site;
  let server: RunningBinary;
  let key: string;
  beforeAll(async () => {
    site = await smallSite();
    server = await startBinary({ args: ["--allow-private-targets"] });
    key = await createKey(server.dbPath, "--daily-limit", "1000");
  });
  afterAll(async () => {
    await server.stop();
    await site.stop();
  });

  const api = async (body: Record<string, unknown>) => {
    const res = await fetch(`${server.url}/api/generate`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { message: string; data: Record<string, unknown> & { sitemap: string } } };
  };

  test.each([
    ["no options", [], {}],
    [
      "every option",
      [
        "--max-pages",
        "40",
        "--max-depth",
        "2",
        "--include",
        "/blog/*",
        "--include",
        "/$",
        "--include",
        "/orphan",
        "--exclude",
        "/gone",
        "--ignore-query-param",
        "utm_*",
        "--sitemaps-from-robots",
        "--alternates",
        "--images",
      ],
      {
        max_pages: 40,
        max_depth: 2,
        include: ["/blog/*", "/$", "/orphan"],
        exclude: ["/gone"],
        ignore_query_params: ["utm_*"],
        sitemaps_from_robots: true,
        alternates: true,
        images: true,
      },
    ],
  ] as const)("%s: stdout is the API's data.sitemap and --json the rest of its data", async (_, args, options) => {
    const [cli, answer] = await Promise.all([crawl([`${site.url}/`, "--json", ...args]), api({ url: `${site.url}/`, ...options })]);
    expect(answer.status).toBe(200);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toBe(answer.body.data.sitemap);
    expect(cli.stdout.includes("/orphan</loc>")).toBe((args as readonly string[]).includes("--sitemaps-from-robots"));
    expect((await validateSitemap(cli.stdout)).errors).toEqual([]);
    const lines = cli.stderr.split("\n").filter(Boolean);
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0]!);
    const { sitemap, duration_ms, generated_at, ...expected } = answer.body.data;
    expect(Object.keys(report).sort()).toEqual(
      Object.keys(answer.body.data)
        .filter((k) => k !== "sitemap")
        .sort(),
    );
    expect(report).toMatchObject(expected);
    expect(typeof report.duration_ms).toBe("number");
    expect(Date.parse(report.generated_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  test("without --json: one summary line on stderr; --quiet: nothing", async () => {
    const normal = await crawl([`${site.url}/`]);
    expect(normal.code).toBe(0);
    // The small site's /gone answers 404: the summary names it (a crawl with failed pages says so).
    expect(normal.stderr).toMatch(
      /^genapi: 6 URLs listed from 10 pages in [\d.]+ s \([\d.]+ pages\/s\), written to standard output; 1 page answered an HTTP error\n$/,
    );
    expect(normal.stderr).not.toContain("\x1b");
    const quiet = await crawl([`${site.url}/`, "--quiet"]);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe("");
    expect(quiet.stdout).toBe(normal.stdout);
  });

  test("a site that throttles: the summary line names the throttled requests and the page that never got through", async () => {
    const throttling = await serveSite({
      "/": html('<a href="/busy">busy</a> <a href="/fine">fine</a>'),
      "/fine": html("fine"),
      "/busy": () => new Response("slow down", { status: 429, headers: { "retry-after": "0" } }),
    });
    try {
      const run = await crawl([`${throttling.url}/`]);
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(
        /^genapi: 2 URLs listed from 3 pages in [\d.]+ s \([\d.]+ pages\/s\), written to standard output; the site throttled 4 requests \(429\/503; 3 retries\), 1 page answered an HTTP error\n$/,
      );
      expect(throttling.requests.filter((url) => url.endsWith("/busy"))).toHaveLength(4);
    } finally {
      await throttling.stop();
    }
  });

  test("--output FILE: the same sitemap in the file, nothing on stdout, no parts", async () => {
    const dir = tempDir();
    const out = join(dir, "site.xml");
    const [cli, answer] = await Promise.all([crawl([`${site.url}/`, "--output", out]), api({ url: `${site.url}/` })]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toBe("");
    expect(readFileSync(out, "utf8")).toBe(answer.body.data.sitemap);
    expect(existsSync(join(dir, "site-1.xml"))).toBe(false);
    expect(cli.stderr).toContain(`written to ${out}`);
  });

  test.each([
    ["a start page that answers 404", "/nowhere"],
    ["a start page that is not HTML", "/file.pdf"],
    ["a noindex start page (422)", "/hidden"],
  ])("%s: exit 1 with the API's message on stderr", async (_, path) => {
    const url = `${site.url}${path}`;
    const [cli, answer] = await Promise.all([crawl([url]), api({ url })]);
    expect([422, 502]).toContain(answer.status);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe("");
    expect(cli.stderr).toBe(`${answer.body.message}\n`);
  });

  test("a failed crawl with --json: exit 1 with the API's error body, as JSON, on stderr", async () => {
    const url = `${site.url}/hidden`;
    const [cli, answer] = await Promise.all([crawl([url, "--json"]), api({ url })]);
    expect(answer.status).toBe(422);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toBe("");
    expect(cli.stderr).toEndWith("}\n");
    expect(cli.stderr.split("\n")).toHaveLength(2);
    expect(JSON.parse(cli.stderr)).toEqual({ success: false, message: answer.body.message });
  });

  test("a refused connection: exit 1, `Could not crawl <url>: ...`; with --json the same message in a JSON object", async () => {
    const gone = generatedSite(1);
    const url = `${gone.url}/`;
    await gone.stop();
    const cli = await crawl([url]);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toStartWith(`Could not crawl ${url}: `);
    const json = await crawl([url, "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toEqual({ success: false, message: cli.stderr.trimEnd() });
  });
});

describe("genapi crawl: flags", () => {
  test("-h is --help", async () => {
    const [short, long] = await Promise.all([runBinary(["crawl", "-h"]), runBinary(["crawl", "--help"])]);
    expect(short).toEqual({ stdout: long.stdout, stderr: "", code: 0 });
    expect(short.stdout).toStartWith("Usage: genapi crawl URL [options]\n");
  });

  test("--help lists every flag", async () => {
    const { stdout, code } = await runBinary(["crawl", "--help"]);
    expect(code).toBe(0);
    for (const flag of [
      "--output",
      "--max-pages",
      "--crawl-timeout",
      "--max-depth",
      "--include",
      "--exclude",
      "--ignore-query-param",
      "--sitemaps-from-robots",
      "--alternates",
      "--images",
      "--json",
      "--quiet",
    ]) {
      expect(stdout).toContain(flag);
    }
  });

  test.each(
    [
      [[], "genapi: crawl needs a URL: genapi crawl https://example.com/\n"],
      [["ftp://example.com/"], 'genapi: URL "ftp://example.com/": Invalid URL. Provide a full URL that includes http:// or https://.\n'],
      [["http://a/", "http://b/"], 'genapi: unexpected argument "http://b/"\n'],
      [["http://a/", "--bogus"], "genapi: Unknown option '--bogus'\n"],
      [["http://a/", "--max-page", "3"], "genapi: Unknown option '--max-page' (did you mean --max-pages?)\n"],
      [["http://a/", "--jsno"], "genapi: Unknown option '--jsno' (did you mean --json?)\n"],
      [
        ["http://a/", "--ignore-query-params=utm_*"],
        "genapi: Unknown option '--ignore-query-params' (did you mean --ignore-query-param?)\n",
      ],
      [["http://a/", "-x"], "genapi: Unknown option '-x'\n"],
      [["http://a/", "--max-pages", "0"], 'genapi: --max-pages must be an integer from 1 to 1000000 (got "0")\n'],
      [["http://a/", "--max-pages", "1000001"], 'genapi: --max-pages must be an integer from 1 to 1000000 (got "1000001")\n'],
      [["http://a/", "--crawl-timeout", "soon"], 'genapi: --crawl-timeout must be an integer from 1 to 2592000 (got "soon")\n'],
      [["http://a/", "--max-depth=-1"], 'genapi: --max-depth must be an integer of 0 or more (got "-1")\n'],
      [
        ["http://a/", "--include", "blog"],
        "genapi: --include: include[0] must be a pattern that starts with / and has at most 2048 characters.\n",
      ],
      [
        ["http://a/", "--exclude", "/a", "--exclude", "x"],
        "genapi: --exclude: exclude[1] must be a pattern that starts with / and has at most 2048 characters.\n",
      ],
      [
        ["http://a/", ...Array.from({ length: 51 }, (_, i) => `--exclude=/${i}`)],
        "genapi: --exclude: exclude must be an array of at most 50 patterns (strings).\n",
      ],
      [
        ["http://a/", `--ignore-query-param=${"x".repeat(257)}`],
        "genapi: --ignore-query-param: ignore_query_params[0] must be a parameter name of 1 to 256 characters.\n",
      ],
      [["http://a/", "--output", "/nonexistent-dir/s.xml"], 'genapi: --output: cannot write in directory "/nonexistent-dir"\n'],
      [["http://a/", "--json=yes"], "genapi: Option '--json' does not take an argument\n"],
    ].map(([args, expected]) => [(args as string[]).slice(0, 3).join(" ").slice(0, 60), args as string[], expected as string] as const),
  )("bad flag or value [%s ...]: one line naming it, exit 2, nothing crawled", async (_, args, expected) => {
    const { stdout, stderr, code } = await runBinary(["crawl", ...args]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(expected);
  });
});

describe("genapi crawl: large results", () => {
  test("60,000 pages with --output: an index of two parts beside FILE, each valid, every page once", async () => {
    const site = generatedSite(60_000);
    try {
      const dir = tempDir();
      const out = join(dir, "sitemap.xml");
      const started = performance.now();
      const cli = await crawl([`${site.url}/`, "--output", out, "--json"]);
      const seconds = (performance.now() - started) / 1000;
      console.log(`genapi crawl of 60,000 generated pages: ${seconds.toFixed(1)} s`);
      expect(cli.code).toBe(0);
      expect(cli.stdout).toBe("");
      const report = JSON.parse(cli.stderr);
      expect(report).toMatchObject({ url: `${site.url}/`, url_count: 60_000, pages_crawled: 60_000, truncated: false });
      const index = readFileSync(out, "utf8");
      expect((await validateSitemap(index)).errors).toEqual([]);
      expect(locs(index)).toEqual([`${site.url}/sitemap-1.xml`, `${site.url}/sitemap-2.xml`]);
      const all: string[] = [];
      for (const n of [1, 2]) {
        const part = readFileSync(join(dir, `sitemap-${n}.xml`), "utf8");
        expect((await validateSitemap(part)).errors).toEqual([]);
        all.push(...locs(part));
      }
      expect(locs(readFileSync(join(dir, "sitemap-1.xml"), "utf8"))).toHaveLength(50_000);
      expect(all).toHaveLength(60_000);
      expect(new Set(all).size).toBe(60_000);
      expect(all).toEqual([...all].sort());
      expect(existsSync(join(dir, "sitemap-3.xml"))).toBe(false);
    } finally {
      await site.stop();
    }
  }, 120_000);

  test("a result over 50 MB without --output: exit 1 saying --output is needed, nothing on stdout", async () => {
    // 600 pages of 1,000 long image URLs each: past 50 MB with few requests.
    const image = (i: number, k: number) => `/images/${"x".repeat(60)}/${i}-${k}.png`;
    const home = html(Array.from({ length: 600 }, (_, i) => `<a href="/p/${i}">${i}</a>`).join(""));
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        const path = new URL(req.url).pathname;
        if (path === "/") return new Response(home, { headers: { "content-type": "text/html" } });
        const i = Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? NaN);
        if (!(i < 600)) return new Response("not found", { status: 404 });
        const images = Array.from({ length: 1000 }, (_, k) => `<img src="${image(i, k)}">`).join("");
        return new Response(html(images), { headers: { "content-type": "text/html" } });
      },
    });
    const site = { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
    try {
      const cli = await crawl([`${site.url}/`, "--images"]);
      expect(cli.code).toBe(1);
      expect(cli.stdout).toBe("");
      expect(cli.stderr).toBe(
        "genapi: 601 URLs listed, but the sitemap is larger than one file may be (50,000 URLs, 50 MB): run again with --output FILE to write a sitemap index and its parts\n",
      );
    } finally {
      await site.stop();
    }
  }, 120_000);
});

describe("genapi crawl: terminal and signals", () => {
  test.skipIf(!needs(import.meta.path, "script"))(
    "on a terminal: a progress line redrawn in place, erased before the summary; never when stderr is not one",
    async () => {
      const binary = await ensureBinary();
      const site = generatedSite(400, { delayMs: 20 });
      try {
        const dir = tempDir();
        const out = join(dir, "s.xml");
        // util-linux script(1) runs the command in a pseudo-terminal and copies what it writes.
        const proc = Bun.spawn(["script", "-qfec", `'${binary}' crawl ${site.url}/ --output '${out}'`, "/dev/null"], {
          stdin: "ignore",
          stdout: "pipe",
          stderr: "pipe",
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm" },
        });
        const [screen, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
        expect(code).toBe(0);
        const frames = screen.split("\r\x1b[2K");
        const lines = frames.slice(1, -1);
        expect(lines.length).toBeGreaterThanOrEqual(2);
        for (const line of lines) {
          expect(line).toMatch(/^[\d,]+ pages crawled \| [\d.]+ pages\/s \| [\d,]+ queued \| [\d,]+ listed \| \d+:\d\d$/);
        }
        // The last frame is the erase, then the summary on a clean line.
        expect(frames.at(-1)).toMatch(/^genapi: 400 URLs listed from 400 pages in [\d.]+ s/);
        expect(readFileSync(out, "utf8")).toContain(`<loc>${site.url}/p/399</loc>`);

        const piped = await crawl([`${site.url}/`]);
        expect(piped.code).toBe(0);
        expect(piped.stderr).not.toContain("\r");
        expect(piped.stderr).not.toContain("\x1b");
        expect(piped.stderr.split("\n").filter(Boolean)).toHaveLength(1);
      } finally {
        await site.stop();
      }
    },
    60_000,
  );

  test("Ctrl-C (SIGINT): writes the sitemap found so far, truncated, and exits 130", async () => {
    const binary = await ensureBinary();
    const site = generatedSite(100_000, { delayMs: 5 });
    try {
      const proc = Bun.spawn([binary, "crawl", `${site.url}/`, "--json"], {
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
        cwd: tempDir(),
      });
      const stdout = new Response(proc.stdout).text();
      const stderr = new Response(proc.stderr).text();
      // Interrupted mid-crawl: once pages are being served, whatever the machine's load.
      await waitFor(() => site.served() >= 50, 30_000, "50 pages served to the crawl");
      proc.kill("SIGINT");
      const code = await proc.exited;
      expect(code).toBe(130);
      const xml = await stdout;
      expect((await validateSitemap(xml)).errors).toEqual([]);
      const report = JSON.parse(await stderr);
      expect(report.truncated).toBe(true);
      expect(report.url_count).toBe(locs(xml).length);
      expect(report.url_count).toBeGreaterThan(0);
      expect(report.url_count).toBeLessThan(100_000);
    } finally {
      await site.stop();
    }
  }, 60_000);
});

describe("genapi crawl: the process", () => {
  test("starts itself again in place without JavaScriptCore's FTL tier: the same process id and arguments, BUN_JSC_useFTLJIT=0; a value the user set is kept", async () => {
    const binary = await ensureBinary();
    for (const [given, expected] of FTL_CASES) {
      let pid = 0;
      // Read while the crawl waits for this answer: the process as it crawls.
      let seen: { environ: string[]; cmdline: string[] } | undefined;
      const site = await serveSite({
        "/": () => {
          seen = { environ: procEntries(pid, "environ"), cmdline: procEntries(pid, "cmdline") };
          return new Response(html("only page"), { headers: { "content-type": "text/html" } });
        },
      });
      try {
        const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", GENAPI_TEST_MARK: "kept" };
        if (given !== undefined) env.BUN_JSC_useFTLJIT = given;
        const proc = Bun.spawn([binary, "crawl", `${site.url}/`, "--quiet"], {
          env,
          stdin: "ignore",
          stdout: "pipe",
          stderr: "pipe",
          cwd: tempDir(),
        });
        pid = proc.pid;
        const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
        expect(code).toBe(0);
        expect(locs(stdout)).toEqual([`${site.url}/`]);
        expect(seen?.cmdline).toEqual([binary, "crawl", `${site.url}/`, "--quiet"]);
        expect(seen?.environ.filter((entry) => entry.startsWith("BUN_JSC_"))).toEqual([expected]);
        expect(seen?.environ).toContain("GENAPI_TEST_MARK=kept");
      } finally {
        await site.stop();
      }
    }
  }, 30_000);
});
