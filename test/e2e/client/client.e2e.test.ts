// Every endpoint driven through a client generated from the served OpenAPI document
// (openapi-typescript types, openapi-fetch calls), each answer checked against the schema the
// document declares for its status (ajv). The document cannot drift from the behaviour, nor the
// committed types from the document, without a red test.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import createClient from "openapi-fetch";
import { createKey, startBinary, tempDir, type RunningBinary } from "../../support/binary.ts";
import { serveSite, type Site } from "../../support/site.ts";
import { contract } from "./contract.ts";
import { SCHEMA_FILE, typesFor } from "./generate-types.ts";
import type { paths } from "./schema.d.ts";

const page = (links: string[]) =>
  `<!doctype html><html><head><title>t</title></head><body>${links.map((l) => `<a href="${l}">x</a>`).join("")}</body></html>`;

let site: Site;
let server: RunningBinary;
let free: string;
let premium: string;
let check: ReturnType<typeof contract>["check"];
let document: any;
let client: ReturnType<typeof createClient<paths>>;

beforeAll(async () => {
  site = await serveSite({ "/": page(["/a"]), "/a": page(["/"]) });
  const dbPath = join(tempDir(), "genapi.db");
  free = await createKey(dbPath);
  premium = await createKey(dbPath, "--daily-limit", "100");
  server = await startBinary({ dbPath, args: ["--allow-private-targets", "--free-daily-limit", "1"] });
  document = await (await fetch(`${server.url}/swagger/json`)).json();
  check = contract(document).check;
  client = createClient<paths>({ baseUrl: server.url });
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
  site.stop();
});

describe("the generated client against the compiled server", () => {
  test("the committed types are what openapi-typescript makes of the served document", async () => {
    const defaults = await startBinary();
    try {
      const served = (await (await fetch(`${defaults.url}/swagger/json`)).json()) as object;
      // Regenerate with: bun test/e2e/client/generate-types.ts http://127.0.0.1:PORT (a default serve).
      expect(await typesFor(served)).toBe(readFileSync(SCHEMA_FILE, "utf8"));
    } finally {
      expect(await defaults.stop()).toBe(0);
    }
  });

  test("/healthz, /readyz, /metrics", async () => {
    const health = await client.GET("/healthz");
    check("GET", "/healthz", health.response, health.data);
    const ready = await client.GET("/readyz");
    check("GET", "/readyz", ready.response, ready.data);
    const metrics = await client.GET("/metrics", { parseAs: "text" });
    check("GET", "/metrics", metrics.response, metrics.data);
    expect(metrics.data).toContain("genapi_http_requests_total{");
  });

  test("/api.php: GET and POST, success and errors", async () => {
    const ok = await client.GET("/api.php", { params: { query: { length: 12, symbols: "false" } } });
    expect(ok.data && "length" in ok.data && ok.data.length).toBe(12);
    check("GET", "/api.php", ok.response, ok.data);
    const bad = await client.GET("/api.php", { params: { query: { length: 3 } } });
    expect(bad.response.status).toBe(400);
    check("GET", "/api.php", bad.response, bad.error);
    const posted = await client.POST("/api.php", { body: { length: 20, numbers: false } });
    expect(posted.data && "length" in posted.data && posted.data.length).toBe(20);
    check("POST", "/api.php", posted.response, posted.data);
    const none = await client.POST("/api.php", { body: { uppercase: false, lowercase: false, numbers: false, symbols: false } });
    expect(none.response.status).toBe(400);
    check("POST", "/api.php", none.response, none.error);
  });

  test("/api.php round 3: the passwords array, passphrases, minimums and their errors", async () => {
    const many = await client.GET("/api.php", { params: { query: { count: 5, min_symbols: 10, length: 14 } } });
    expect(many.response.status).toBe(200);
    check("GET", "/api.php", many.response, many.data);
    if (!many.data || !("passwords" in many.data) || "lengths" in many.data) throw new Error("expected a passwords array");
    expect(many.data.passwords).toHaveLength(5);
    expect(many.data.length).toBe(14);
    expect(many.data.parameters).toMatchObject({ count: 5, min_symbols: 10 });

    const phrase = await client.GET("/api.php", { params: { query: { type: "passphrase", words: 7, capitalize: "TRUE" } } });
    check("GET", "/api.php", phrase.response, phrase.data);
    if (!phrase.data || !("password" in phrase.data) || phrase.data.parameters.type !== "passphrase")
      throw new Error("expected a passphrase");
    expect(phrase.data.parameters).toEqual({ type: "passphrase", words: 7, separator: "-", capitalize: true, include_number: false });
    expect(phrase.data.length).toBe(phrase.data.password.length);
    expect(phrase.data.entropy_bits).toBe(90.47); // 7 x log2(7776)

    const phrases = await client.POST("/api.php", { body: { type: "passphrase", count: 3, include_number: true, separator: " " } });
    check("POST", "/api.php", phrases.response, phrases.data);
    if (!phrases.data || !("lengths" in phrases.data)) throw new Error("expected passphrases");
    expect(phrases.data.lengths).toEqual(phrases.data.passwords.map((p) => p.length));
    for (const p of phrases.data.passwords) expect(p.split(" ")).toHaveLength(6);

    for (const [query, error] of [
      [{ min_symbols: 16 }, "The minimums add up to more than length."],
      [{ count: 101 }, "count must be an integer from 1 to 100."],
      [{ type: "passphrase", words: 21 }, "words must be an integer from 3 to 20."],
    ] as const) {
      const bad = await client.GET("/api.php", { params: { query } });
      expect(bad.response.status).toBe(400);
      check("GET", "/api.php", bad.response, bad.error);
      expect(bad.error).toEqual({ success: false, error });
    }
  });

  test("/api.php: the booleans' documented schema takes every case the server takes (symbols=TRUE)", async () => {
    const operation = document.paths["/api.php"].get;
    const ajv = new Ajv({ strict: false });
    for (const value of ["TRUE", "False", "tRuE", "1", "0"]) {
      const answer = await client.GET("/api.php", { params: { query: { symbols: value, uppercase: "true" } } });
      expect(answer.response.status).toBe(200);
      check("GET", "/api.php", answer.response, answer.data);
      const schema = operation.parameters.find((p: any) => p.name === "symbols").schema;
      expect({ value, valid: ajv.validate(schema, value) }).toEqual({ value, valid: true });
    }
    const refused = await client.GET("/api.php", { params: { query: { symbols: "yes" } } });
    expect(refused.response.status).toBe(400);
    const schema = operation.parameters.find((p: any) => p.name === "symbols").schema;
    expect(ajv.validate(schema, "yes")).toBe(false);
  });

  test("/api/generate: 401, 400, 200, 502, 429", async () => {
    const call = (key: string | undefined, url: string) =>
      client.POST("/api/generate", { body: { url }, headers: key ? { "X-API-Key": key } : {} });
    const results = [
      [401, await call(undefined, `${site.url}/`)],
      [400, await call(premium, "not a url")],
      [200, await call(premium, `${site.url}/`)],
      [502, await call(premium, `${site.url}/missing`)],
      [200, await call(free, `${site.url}/`)],
      [429, await call(free, `${site.url}/`)],
    ] as const;
    for (const [status, result] of results) {
      expect(result.response.status).toBe(status);
      check("POST", "/api/generate", result.response, result.data ?? result.error);
    }
    expect(results[2][1].data?.data.url_count).toBe(2);
  }, 60_000);

  test("/api/jobs: create, list, read, 404, 401, cancel", async () => {
    const headers = { "X-API-Key": premium };
    const created = await client.POST("/api/jobs", { body: { url: `${site.url}/` }, headers });
    expect(created.response.status).toBe(202);
    check("POST", "/api/jobs", created.response, created.data);
    const id = created.data!.data.id;
    const listed = await client.GET("/api/jobs", { headers });
    check("GET", "/api/jobs", listed.response, listed.data);
    const read = await client.GET("/api/jobs/{id}", { params: { path: { id } }, headers });
    expect(read.response.status).toBe(200);
    check("GET", "/api/jobs/{id}", read.response, read.data);
    const missing = await client.GET("/api/jobs/{id}", { params: { path: { id: "q7Yc0JxkS1uQm3n2V5rT8w" } }, headers });
    expect(missing.response.status).toBe(404);
    check("GET", "/api/jobs/{id}", missing.response, missing.error);
    const anonymous = await client.GET("/api/jobs/{id}", { params: { path: { id } } });
    expect(anonymous.response.status).toBe(401);
    check("GET", "/api/jobs/{id}", anonymous.response, anonymous.error);
    const cancelled = await client.DELETE("/api/jobs/{id}", { params: { path: { id } }, headers });
    check("DELETE", "/api/jobs/{id}", cancelled.response, cancelled.data ?? cancelled.error);
  }, 60_000);
  /** A site with a broken link (from two pages), a redirect, a redirect loop and a robots-disallowed link. */
  const linkedSite = () => {
    let origin = "";
    const served = serveSite({
      "/robots.txt": new Response("User-agent: *\nDisallow: /private\n"),
      "/": () =>
        new Response(`${page(["/missing", "/old", "/a", "/private/x", "/loop"])}<a href="${origin}/a#x">same</a>`, {
          headers: { "content-type": "text/html" },
        }),
      "/a": page(["/", "/missing"]),
      "/old": new Response(null, { status: 301, headers: { location: "/a" } }),
      "/loop": new Response(null, { status: 302, headers: { location: "/loop" } }),
    });
    return served.then((linked) => {
      origin = linked.url;
      return linked;
    });
  };

  test("link_report: data.links as the document declares it", async () => {
    const linked = await linkedSite();
    try {
      const body = { url: `${linked.url}/`, link_report: true };
      const generated = await client.POST("/api/generate", { body, headers: { "X-API-Key": premium } });
      expect(generated.response.status).toBe(200);
      check("POST", "/api/generate", generated.response, generated.data);
      const links = generated.data!.data.links!;
      const path = (url: string) => url.slice(linked.url.length);
      expect(links.broken.map((b) => [path(b.url), b.status, b.referrer_count])).toEqual([
        ["/loop", null, 1],
        ["/missing", 404, 2],
      ]);
      expect(links.redirects.map((r) => [path(r.url), r.status, r.hops])).toEqual([
        ["/loop", 302, 1],
        ["/old", 301, 1],
      ]);
      expect(links.truncated).toBe(false);
    } finally {
      await linked.stop();
    }
  }, 60_000);

  test("link_report: a job's result.links and links.json as the document declares them, 404 without it", async () => {
    const linked = await linkedSite();
    try {
      const headers = { "X-API-Key": premium };
      const body = { url: `${linked.url}/`, link_report: true };
      const created = await client.POST("/api/jobs", { body, headers });
      expect(created.response.status).toBe(202);
      check("POST", "/api/jobs", created.response, created.data);
      const id = created.data!.data.id;
      await client.GET("/api/jobs/{id}/events", { params: { path: { id } }, headers, parseAs: "text" });
      const job = await client.GET("/api/jobs/{id}", { params: { path: { id } }, headers });
      check("GET", "/api/jobs/{id}", job.response, job.data);
      expect(job.data!.data.result!.links).toEqual({ broken_count: 2, redirect_count: 2, sitemap_error_count: 0 });
      const full = await client.GET("/api/jobs/{id}/links.json", { params: { path: { id } }, headers });
      expect(full.response.status).toBe(200);
      check("GET", "/api/jobs/{id}/links.json", full.response, full.data);
      const generated = await client.POST("/api/generate", { body, headers });
      expect(full.data).toEqual({ ...generated.data!.data.links!, truncated: false });

      const plain = await client.POST("/api/jobs", { body: { url: `${linked.url}/` }, headers });
      const plainId = plain.data!.data.id;
      await client.GET("/api/jobs/{id}/events", { params: { path: { id: plainId } }, headers, parseAs: "text" });
      const none = await client.GET("/api/jobs/{id}/links.json", { params: { path: { id: plainId } }, headers });
      expect(none.response.status).toBe(404);
      check("GET", "/api/jobs/{id}/links.json", none.response, none.error);
    } finally {
      await linked.stop();
    }
  }, 60_000);

  test("/api/jobs results: events, sitemap.xml 200 once succeeded, 409 before, 404 part", async () => {
    const headers = { "X-API-Key": premium };
    const created = await client.POST("/api/jobs", { body: { url: `${site.url}/` }, headers });
    expect(created.response.status).toBe(202);
    const id = created.data!.data.id;
    // The stream ends with its `done` event, so reading it whole waits for the job to finish.
    const events = await client.GET("/api/jobs/{id}/events", { params: { path: { id } }, headers, parseAs: "text" });
    expect(events.response.status).toBe(200);
    check("GET", "/api/jobs/{id}/events", events.response, events.data);
    expect(events.data).toContain("event: done");
    const sitemap = await client.GET("/api/jobs/{id}/sitemap.xml", { params: { path: { id } }, headers, parseAs: "text" });
    expect(sitemap.response.status).toBe(200);
    check("GET", "/api/jobs/{id}/sitemap.xml", sitemap.response, sitemap.data);
    expect(sitemap.data).toContain(`<loc>${site.url}/a</loc>`);
    const part = await client.GET("/api/jobs/{id}/{part}", { params: { path: { id, part: "sitemap-9.xml" } }, headers });
    expect(part.response.status).toBe(404);
    check("GET", "/api/jobs/{id}/{part}", part.response, part.error);

    // A server that runs no job (--max-jobs 0) keeps it queued: its sitemap is not there yet.
    const dbPath = join(tempDir(), "queued.db");
    const key = await createKey(dbPath, "--daily-limit", "10");
    const idle = await startBinary({ dbPath, args: ["--allow-private-targets", "--max-jobs", "0"] });
    try {
      const idleClient = createClient<paths>({ baseUrl: idle.url });
      const queued = await idleClient.POST("/api/jobs", { body: { url: `${site.url}/` }, headers: { "X-API-Key": key } });
      expect(queued.response.status).toBe(202);
      const early = await idleClient.GET("/api/jobs/{id}/sitemap.xml", {
        params: { path: { id: queued.data!.data.id } },
        headers: { "X-API-Key": key },
      });
      expect(early.response.status).toBe(409);
      check("GET", "/api/jobs/{id}/sitemap.xml", early.response, early.error);
      expect(early.error).toEqual({ success: false, message: `Job ${queued.data!.data.id} is queued.` });
    } finally {
      expect(await idle.stop()).toBe(0);
    }
  }, 60_000);
});
