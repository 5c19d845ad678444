// The link report beyond the origin (the README's "Links to other origins and resources") through
// the executable: an in-scope site that needs a token header, and two "external" sites on other
// loopback ports (reachable with --allow-private-targets): one answers 405 to every HEAD (GET then
// tells), the other answers its first request with 429 and Retry-After: 1. Each fixture counts the
// requests it gets per method and path, and whether one carried the crawl's token.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createKey, runBinary, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { waitFor } from "../support/wait.ts";

let server: RunningBinary;
let key: string;

beforeAll(async () => {
  const dbPath = join(tempDir(), "genapi.db");
  key = await createKey(dbPath, "--daily-limit", "100");
  server = await startBinary({ dbPath, args: ["--allow-private-targets", "--max-pages", "100"] });
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

const TOKEN = "s3cret-token";

const call = async (path: string, init: { method?: string; body?: unknown } = {}) => {
  const res = await fetch(`${server.url}${path}`, {
    method: init.method ?? "GET",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

interface Fixture {
  url: string;
  /** "METHOD /path" -> requests. */
  counts: Map<string, number>;
  /** Times (ms) of each request, in order, with its method and path. */
  log: { at: number; line: string }[];
  /** Requests that carried the crawl's token header. */
  sawToken: number;
  stop(): void;
}

function fixture(answer: (req: Request, path: string, index: number) => Response | Promise<Response>): Fixture {
  const f: Fixture = { url: "", counts: new Map(), log: [], sawToken: 0, stop: () => {} };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      const line = `${req.method} ${path}`;
      f.counts.set(line, (f.counts.get(line) ?? 0) + 1);
      f.log.push({ at: performance.now(), line });
      if (req.headers.get("x-token") !== null) f.sawToken++;
      return answer(req, path, f.log.length - 1);
    },
  });
  f.url = `http://127.0.0.1:${server.port}`;
  f.stop = () => server.stop(true);
  return f;
}

/** The three sites of one crawl, fresh (their counts are that crawl's). */
function serveSites() {
  // HEAD is not allowed anywhere; GET answers.
  const noHead = fixture((req, path) => {
    if (req.method === "HEAD") return new Response(null, { status: 405, headers: { allow: "GET" } });
    if (path === "/moved") return new Response(null, { status: 301, headers: { location: "/gone" } });
    return new Response("body", { status: path === "/ok" ? 200 : 404 });
  });
  // The first request, whatever it is, is throttled for a second.
  const limited = fixture((_req, path, index) => {
    if (index === 0) return new Response("slow down", { status: 429, headers: { "retry-after": "1" } });
    return new Response(null, { status: path.includes("missing") ? 404 : 200 });
  });
  const A = noHead.url;
  const B = limited.url;
  const page = (body: string) =>
    new Response(
      `<!doctype html><html><head><link rel="stylesheet" href="/missing.css"><script src="${B}/missing.js"></script></head><body>${body}</body></html>`,
      { headers: { "content-type": "text/html" } },
    );
  const site = fixture((req, path) => {
    if (path === "/robots.txt") return new Response("", { status: 404 });
    if (req.headers.get("x-token") !== TOKEN) return new Response("who are you", { status: 401 });
    if (path === "/")
      return page(
        `<a href="/b">b</a><a href="${A}/ok">ok</a><a href="${A}/gone">gone</a><a href="${A}/gone#again">same</a>` +
          `<a href="${A}/moved">moved</a><a rel="nofollow" href="${A}/nofollow-gone">nf</a><a href="${B}/throttled">t</a>` +
          `<img src="/nope.png" srcset="/ok.png 1x, ${B}/missing-2x.png 2x"><video src="${B}/clip.mp4" poster="/poster.jpg"></video>`,
      );
    if (path === "/b") return page(`<a href="/">home</a><a href="${A}/gone">gone</a><a href="/missing-page">x</a><img src="/ok.png">`);
    if (path === "/ok.png" || path === "/poster.jpg") return new Response(req.method === "HEAD" ? null : "img");
    return new Response("not found", { status: 404 });
  });
  const S = site.url;
  const broken = [
    { url: `${A}/gone`, kind: "external", status: 404, error: "HTTP 404", referrers: [`${S}/`, `${S}/b`], referrer_count: 2 },
    { url: `${A}/nofollow-gone`, kind: "external", status: 404, error: "HTTP 404", referrers: [`${S}/`], referrer_count: 1 },
    { url: `${B}/missing-2x.png`, kind: "resource", status: 404, error: "HTTP 404", referrers: [`${S}/`], referrer_count: 1 },
    { url: `${B}/missing.js`, kind: "resource", status: 404, error: "HTTP 404", referrers: [`${S}/`, `${S}/b`], referrer_count: 2 },
    { url: `${S}/missing-page`, kind: "page", status: 404, error: "HTTP 404", referrers: [`${S}/b`], referrer_count: 1 },
    { url: `${S}/missing.css`, kind: "resource", status: 404, error: "HTTP 404", referrers: [`${S}/`, `${S}/b`], referrer_count: 2 },
    { url: `${S}/nope.png`, kind: "resource", status: 404, error: "HTTP 404", referrers: [`${S}/`], referrer_count: 1 },
  ].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  const expected = { broken, redirects: [], sitemap_errors: [], truncated: false, external_unchecked: 0, resources_unchecked: 0 };
  return {
    site,
    noHead,
    limited,
    expected,
    stop() {
      for (const f of [site, noHead, limited]) f.stop();
    },
  };
}

type Sites = ReturnType<typeof serveSites>;

/** What every crawl with both checks sends: each distinct URL once (the throttled one again after its pause), no token outside. */
function expectRequestsOnce(sites: Sites): void {
  const { site, noHead, limited } = sites;
  expect(Object.fromEntries(noHead.counts)).toEqual({
    "HEAD /ok": 1,
    "GET /ok": 1,
    "HEAD /gone": 1,
    "GET /gone": 1,
    "HEAD /moved": 1,
    "GET /moved": 1,
    "HEAD /nofollow-gone": 1,
    "GET /nofollow-gone": 1,
  });
  // The first request was answered 429: it alone is asked again, once Retry-After's second has
  // passed (requests already on their way when the 429 came were answered as usual).
  const [first, ...rest] = limited.log;
  const again = rest.filter((r) => r.line === first!.line);
  expect(again).toHaveLength(1);
  expect(again[0]!.at - first!.at).toBeGreaterThanOrEqual(950);
  const once = ["HEAD /throttled", "HEAD /missing-2x.png", "HEAD /missing.js", "HEAD /clip.mp4"];
  expect(Object.fromEntries(limited.counts)).toEqual(Object.fromEntries(once.map((line) => [line, line === first!.line ? 2 : 1])));
  expect(noHead.sawToken + limited.sawToken).toBe(0);
  // In scope: pages read once (GET), resources checked once (HEAD), every request with the token.
  expect(Object.fromEntries(site.counts)).toEqual({
    "GET /robots.txt": 1,
    "GET /": 1,
    "GET /b": 1,
    "GET /missing-page": 1,
    "HEAD /missing.css": 1,
    "HEAD /nope.png": 1,
    "HEAD /ok.png": 1,
    "HEAD /poster.jpg": 1,
  });
  expect(site.sawToken).toBe(site.log.length);
}

const both = { external: true, resources: true };
const auth = { headers: { "X-Token": TOKEN } };

describe("link_report {external, resources} through the executable", () => {
  test("/api/generate: broken links to other origins and broken resources join `broken` with their kind; each URL requested once, no credentials outside", async () => {
    const sites = serveSites();
    try {
      const res = await call("/api/generate", { method: "POST", body: { url: `${sites.site.url}/`, link_report: both, auth } });
      expect(res.status).toBe(200);
      expect(res.body.data.links).toEqual(sites.expected);
      // Never listed, never followed: the sitemap is the site's two pages.
      expect(res.body.data.url_count).toBe(2);
      expect(res.body.data.sitemap).not.toContain(sites.noHead.url);
      expectRequestsOnce(sites);
    } finally {
      sites.stop();
    }
  }, 30_000);

  test("link_report: true sends nothing outside the origin and checks no resource; its entries carry kind page", async () => {
    const sites = serveSites();
    try {
      const res = await call("/api/generate", { method: "POST", body: { url: `${sites.site.url}/`, link_report: true, auth } });
      expect(res.status).toBe(200);
      expect(res.body.data.links).toEqual({
        broken: sites.expected.broken.filter((b) => b.kind === "page"),
        redirects: [],
        sitemap_errors: [],
        truncated: false,
      });
      expect(sites.noHead.log).toEqual([]);
      expect(sites.limited.log).toEqual([]);
      expect(sites.site.log.map((r) => r.line).sort()).toEqual(["GET /", "GET /b", "GET /missing-page", "GET /robots.txt"]);
    } finally {
      sites.stop();
    }
  }, 30_000);

  test("one check alone: external without resources, resources without external", async () => {
    const sites = serveSites();
    const more = serveSites();
    try {
      const [external, resources] = await Promise.all([
        call("/api/generate", { method: "POST", body: { url: `${sites.site.url}/`, link_report: { external: true }, auth } }),
        call("/api/generate", { method: "POST", body: { url: `${more.site.url}/`, link_report: { resources: true }, auth } }),
      ]);
      expect(external.body.data.links).toEqual({
        ...sites.expected,
        broken: sites.expected.broken.filter((b) => b.kind !== "resource"),
        resources_unchecked: undefined,
      });
      expect("resources_unchecked" in external.body.data.links).toBe(false);
      expect(resources.body.data.links.broken).toEqual(more.expected.broken.filter((b) => b.kind !== "external"));
      expect("external_unchecked" in resources.body.data.links).toBe(false);
      expect(more.noHead.log).toEqual([]);
    } finally {
      sites.stop();
      more.stop();
    }
  }, 30_000);

  test("a job: result.links counts every list with the unchecked counts; links.json holds the lists whole", async () => {
    const sites = serveSites();
    try {
      const created = await call("/api/jobs", { method: "POST", body: { url: `${sites.site.url}/`, link_report: both, auth } });
      expect(created.status).toBe(202);
      expect(created.body.data.options.link_report).toEqual(both);
      const id = created.body.data.id;
      const job = await waitFor(
        async () => {
          const { body } = await call(`/api/jobs/${id}`);
          return body.data.status === "succeeded" || body.data.status === "failed" ? body.data : null;
        },
        20_000,
        "the job to finish",
      );
      expect(job.status).toBe("succeeded");
      expect(job.result.links).toEqual({
        broken_count: 7,
        redirect_count: 0,
        sitemap_error_count: 0,
        external_unchecked: 0,
        resources_unchecked: 0,
      });
      const links = await fetch(`${server.url}/api/jobs/${id}/links.json`, { headers: { "x-api-key": key } });
      expect(links.status).toBe(200);
      expect(await links.json()).toEqual(sites.expected);
      expectRequestsOnce(sites);
    } finally {
      sites.stop();
    }
  }, 30_000);

  test("genapi crawl --check-external --check-resources writes them to the --link-report file", async () => {
    const sites = serveSites();
    try {
      const dir = tempDir();
      const file = join(dir, "links.json");
      const cli = await runBinary([
        "crawl",
        `${sites.site.url}/`,
        "--header",
        `X-Token: ${TOKEN}`,
        "--link-report",
        file,
        "--check-external",
        "--check-resources",
        "--output",
        join(dir, "sitemap.xml"),
        "--json",
      ]);
      expect(cli.code).toBe(0);
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(sites.expected);
      expect(JSON.parse(cli.stderr).links).toEqual(sites.expected);
      expectRequestsOnce(sites);
      const alone = await runBinary(["crawl", `${sites.site.url}/`, "--check-external"]);
      expect(alone).toMatchObject({ code: 2, stderr: "genapi: --check-external needs --link-report FILE\n" });
    } finally {
      sites.stop();
    }
  }, 30_000);

  test("the address guard judges every check as it judges the crawl: a server that allows only the site refuses the other loopback hosts", async () => {
    const sites = serveSites();
    const dbPath = join(tempDir(), "genapi.db");
    const strictKey = await createKey(dbPath, "--daily-limit", "10");
    const strict = await startBinary({ dbPath, args: ["--allow-target", new URL(sites.site.url).host] });
    try {
      const res = await fetch(`${strict.url}/api/generate`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": strictKey },
        body: JSON.stringify({ url: `${sites.site.url}/`, link_report: both, auth }),
      });
      expect(res.status).toBe(200);
      const { broken } = ((await res.json()) as any).data.links;
      const refused = (url: string) => ({ status: null, error: `Target address not allowed: 127.0.0.1 is a loopback address.`, url });
      // Every external URL and every resource elsewhere is broken without a request; the site's own are checked.
      const outside = broken.filter((b: { url: string }) => !b.url.startsWith(sites.site.url));
      expect(outside.map((b: { url: string }) => b.url).sort()).toEqual(
        [
          ...["/ok", "/gone", "/moved", "/nofollow-gone"].map((p) => `${sites.noHead.url}${p}`),
          ...["/throttled", "/missing.js", "/missing-2x.png", "/clip.mp4"].map((p) => `${sites.limited.url}${p}`),
        ].sort(),
      );
      for (const entry of outside) expect(entry).toMatchObject(refused(entry.url));
      expect(broken.filter((b: { url: string }) => b.url.startsWith(sites.site.url))).toEqual(
        sites.expected.broken.filter((b) => b.url.startsWith(sites.site.url)),
      );
      expect(sites.noHead.log).toEqual([]);
      expect(sites.limited.log).toEqual([]);
    } finally {
      expect(await strict.stop()).toBe(0);
      sites.stop();
    }
  }, 30_000);

  test("a job stopped by SIGTERM and continued by a new process reports every check of both attempts", async () => {
    // 240 pages served slowly, page i linking to external /x<i % 40> (those ending in 7 answer 404).
    const pages = 240;
    const external = fixture((_req, path) => new Response(null, { status: path.endsWith("7") ? 404 : 200 }));
    let served = 0;
    const site = fixture((_req, path) => {
      if (path === "/robots.txt") return new Response("", { status: 404 });
      const n = path === "/" ? 0 : Number(path.slice(2));
      const links = [1, 2].map((k) => n * 2 + k).filter((m) => m < pages);
      const html = `${links.map((m) => `<a href="/p${m}">p</a>`).join("")}<a href="${external.url}/x${n % 40}">x</a>`;
      served++;
      return new Promise<Response>((resolve) =>
        setTimeout(() => resolve(new Response(html, { headers: { "content-type": "text/html" } })), 15),
      );
    });
    const dbPath = join(tempDir(), "genapi.db");
    const jobKey = await createKey(dbPath, "--daily-limit", "10");
    const args = ["--allow-private-targets", "--job-max-pages", "1000"];
    const first = await startBinary({ dbPath, args });
    let second: RunningBinary | undefined;
    try {
      const created = await fetch(`${first.url}/api/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": jobKey },
        body: JSON.stringify({ url: `${site.url}/`, link_report: { external: true } }),
      });
      const id = ((await created.json()) as any).data.id;
      await waitFor(() => served >= 80, 30_000, "80 pages served");
      expect(await first.stop("SIGTERM")).toBe(0);
      const firstRun = served;
      expect(firstRun).toBeLessThan(pages);
      const checkedFirst = external.log.length;
      expect(checkedFirst).toBeGreaterThan(0);
      second = await startBinary({ dbPath, args });
      const get = (path: string) => fetch(`${second!.url}${path}`, { headers: { "x-api-key": jobKey } });
      const job = await waitFor(
        async () => {
          const data = ((await (await get(`/api/jobs/${id}`)).json()) as any).data;
          return data.status === "queued" || data.status === "running" ? null : data;
        },
        60_000,
        "the job to finish in the second process",
      );
      expect(job.status).toBe("succeeded");
      expect(job.result.links).toMatchObject({ broken_count: 4, external_unchecked: 0 });
      const S = site.url;
      const expected = [7, 17, 27, 37].map((x) => {
        const referrers = Array.from({ length: pages }, (_, n) => n)
          .filter((n) => n % 40 === x)
          .map((n) => (n === 0 ? `${S}/` : `${S}/p${n}`))
          .sort();
        return {
          url: `${external.url}/x${x}`,
          kind: "external",
          status: 404,
          error: "HTTP 404",
          referrers: referrers.slice(0, 5),
          referrer_count: referrers.length,
        };
      });
      expected.sort((a, b) => (a.url < b.url ? -1 : 1));
      expect(((await (await get(`/api/jobs/${id}/links.json`)).json()) as any).broken).toEqual(expected);
      // Each of the 40 URLs was checked; one the first process had under way when it stopped may be asked again.
      const asked = new Set(external.log.map((r) => r.line));
      expect(asked.size).toBe(40);
      expect(external.log.length).toBeLessThanOrEqual(40 + 4);
    } finally {
      if (second) expect(await second.stop()).toBe(0);
      site.stop();
      external.stop();
    }
  }, 120_000);

  test("bad link_report values: 400 naming the field, for /api/generate and /api/jobs", async () => {
    const url = "http://127.0.0.1:9/";
    const cases: [unknown, string][] = [
      [{ external: "yes" }, "link_report.external must be true or false."],
      [{ resources: null }, "link_report.resources must be true or false."],
      [{ external: true, images: true }, "link_report takes only external and resources (true or false each)."],
      [[true], 'link_report must be true, false or an object {"external": true|false, "resources": true|false}.'],
    ];
    for (const [link_report, message] of cases) {
      for (const path of ["/api/generate", "/api/jobs"]) {
        expect(await call(path, { method: "POST", body: { url, link_report } })).toEqual({
          status: 400,
          body: { success: false, message },
        });
      }
    }
  });
});
