// GET /metrics of the compiled executable, read by a Prometheus text parser: the named families,
// counts that rise with requests, and no label value that names a key, an address, a URL or a job id.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createKey, generate, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { serveSite, type Site } from "../support/site.ts";
import { waitFor } from "../support/wait.ts";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format 0.0.4: `# TYPE` lines and samples (escaped label values unescaped). */
function parsePrometheus(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP")) continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not Prometheus text: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const m of (sample[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g)) {
      labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) });
  }
  return { types, samples };
}

const page = (links: string[]) =>
  `<!doctype html><html><head><title>t</title></head><body>${links.map((l) => `<a href="${l}">x</a>`).join("")}</body></html>`;

let site: Site;
let server: RunningBinary;
let key: string;
beforeAll(async () => {
  site = await serveSite({ "/": page(["/a"]), "/a": page(["/"]) });
  const dbPath = join(tempDir(), "genapi.db");
  key = await createKey(dbPath);
  server = await startBinary({ dbPath, args: ["--allow-private-targets", "--free-daily-limit", "2"] });
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
  site.stop();
});

async function scrape() {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePrometheus(await res.text());
}
const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

describe("GET /metrics (compiled executable)", () => {
  test("no key needed; the named families with their types, and the process's memory and CPU", async () => {
    const { types, samples } = await scrape();
    expect(Object.fromEntries([...types].filter(([name]) => name.startsWith("genapi_")))).toEqual({
      genapi_http_requests_total: "counter",
      genapi_http_request_duration_seconds: "histogram",
      genapi_crawls_running: "gauge",
      genapi_crawls_queued: "gauge",
      genapi_crawl_pages_total: "counter",
      genapi_crawl_throttled_total: "counter",
      genapi_quota_refusals_total: "counter",
      genapi_jobs: "gauge",
    });
    for (const name of ["process_cpu_seconds_total", "process_resident_memory_bytes", "nodejs_heap_size_used_bytes"]) {
      expect(samples.some((s) => s.name === name && s.value > 0)).toBe(true);
    }
    expect(
      samples
        .filter((s) => s.name === "genapi_jobs")
        .map((s) => s.labels.status)
        .sort(),
    ).toEqual(["cancelled", "failed", "queued", "running", "succeeded"]);
  });

  // What `promtool check metrics` enforces on names: `_total` marks a counter, and only a counter.
  test("promtool's naming rules: every counter ends in _total, no other family does; every family has help", async () => {
    const { types } = await scrape();
    expect(types.size).toBeGreaterThan(10);
    const misnamed = [...types].filter(([name, type]) => name.endsWith("_total") !== (type === "counter"));
    expect(misnamed).toEqual([]);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const helped = new Set([...text.matchAll(/^# HELP (\S+) \S/gm)].map((m) => m[1]));
    expect([...types.keys()].filter((name) => !helped.has(name))).toEqual([]);
  });

  test("counts rise after requests; every endpoint leaves only templates and status codes in labels", async () => {
    const before = (await scrape()).samples;
    const jsonPost = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });

    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/api.php?length=12`)).status).toBe(200);
    expect((await fetch(`${server.url}/api.php?length=3`)).status).toBe(400);
    expect((await fetch(`${server.url}/api.php`, { method: "POST", body: new URLSearchParams({ length: "20" }) })).status).toBe(200);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz/`)).status).toBe(200);
    expect((await fetch(`${server.url}/swagger/json`)).status).toBe(200);
    expect((await fetch(`${server.url}/no/such/${key}`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz`, { method: "DELETE" })).status).toBe(405);
    expect((await generate(server, "wrong-key", `${site.url}/`)).status).toBe(401);
    const crawled = await generate(server, key, `${site.url}/`);
    expect(crawled.status).toBe(200);
    const created = await jsonPost("/api/jobs", { url: `${site.url}/` }, { "x-api-key": key });
    expect(created.status).toBe(202);
    const jobId = ((await created.json()) as { data: { id: string } }).data.id;
    expect((await fetch(`${server.url}/api/jobs/${jobId}`, { headers: { "x-api-key": key } })).status).toBe(200);
    expect((await fetch(`${server.url}/api/jobs/not-a-job/sitemap.xml`, { headers: { "x-api-key": key } })).status).toBe(404);
    // The free tier of 2 is used up by the crawl and the job above.
    expect((await generate(server, key, `${site.url}/`)).status).toBe(429);
    expect((await jsonPost("/api/jobs", { url: `${site.url}/` }, { "x-api-key": key })).status).toBe(429);

    const after = (await scrape()).samples;
    const requests = (labels: Record<string, string>) =>
      value(after, "genapi_http_requests_total", labels) - value(before, "genapi_http_requests_total", labels);
    expect(requests({ method: "GET", route: "/api.php", status: "200" })).toBe(3);
    expect(requests({ method: "GET", route: "/api.php", status: "400" })).toBe(1);
    expect(requests({ method: "POST", route: "/api.php", status: "200" })).toBe(1);
    expect(requests({ route: "/readyz", status: "200" })).toBe(1);
    expect(requests({ route: "unmatched", status: "404" })).toBe(1);
    expect(requests({ method: "DELETE", route: "/healthz", status: "405" })).toBe(1);
    expect(requests({ route: "/api/generate", status: "401" })).toBe(1);
    expect(requests({ route: "/api/generate", status: "200" })).toBe(1);
    expect(requests({ route: "/api/generate", status: "429" })).toBe(1);
    expect(requests({ method: "POST", route: "/api/jobs", status: "429" })).toBe(1);
    expect(requests({ method: "POST", route: "/api/jobs", status: "202" })).toBe(1);
    expect(requests({ method: "GET", route: "/api/jobs/:id", status: "200" })).toBe(1);
    expect(requests({ route: "/api/jobs/:id/sitemap.xml", status: "404" })).toBe(1);
    const histogram = (name: string) => value(after, name, { route: "/api.php" }) - value(before, name, { route: "/api.php" });
    expect(histogram("genapi_http_request_duration_seconds_count")).toBe(5);
    expect(histogram("genapi_http_request_duration_seconds_bucket")).toBeGreaterThan(0);
    expect(value(after, "genapi_quota_refusals_total") - value(before, "genapi_quota_refusals_total")).toBe(2);
    expect(value(after, "genapi_crawls_running")).toBe(0);
    expect(value(after, "genapi_jobs")).toBe(1);
    // The fixture site has two pages: / and /a; the crawl fetched them, and the job does once it has run.
    const crawlPages = (samples: Sample[]) => value(samples, "genapi_crawl_pages_total") - value(before, "genapi_crawl_pages_total");
    expect([2, 4]).toContain(crawlPages(after));
    await waitFor(
      async () => {
        const job = (await (await fetch(`${server.url}/api/jobs/${jobId}`, { headers: { "x-api-key": key } })).json()) as {
          data: { status: string };
        };
        expect(["queued", "running", "succeeded"]).toContain(job.data.status);
        return job.data.status === "succeeded";
      },
      30_000,
      `job ${jobId} to succeed`,
      50,
    );
    expect(crawlPages((await scrape()).samples)).toBe(4);

    const forbidden = [key, "wrong-key", jobId, "not-a-job", site.url, new URL(site.url).host, "127.0.0.1", "::1", "/no/such"];
    const labelValues = new Set(after.flatMap((s) => Object.values(s.labels)));
    for (const label of labelValues) {
      for (const word of forbidden) expect({ label, contains: label.includes(word) ? word : null }).toEqual({ label, contains: null });
    }
    const routes = new Set(after.filter((s) => s.name === "genapi_http_requests_total").map((s) => s.labels.route));
    for (const route of routes) expect(route === "unmatched" || route!.startsWith("/")).toBe(true);
  }, 60_000);
});
