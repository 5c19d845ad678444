// The crawl-job suite through the compiled executable, for one store backend: every endpoint with
// its exact statuses and messages, ownership, the quota counted once, a full queue, SSE read by a
// spec-following parser, the signed callback and its address guard, a split result, and
// durability (SIGTERM hands a job back; kill -9 loses the claim after the lease). Run on SQLite by
// test/e2e/jobs.e2e.test.ts and on PostgreSQL by test/e2e/jobs-postgres.e2e.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKey, startBinary, type RunningBinary } from "../support/binary.ts";
import { serveLinkSite, serveManyBroken } from "../support/link-site.ts";
import { stopRawServers } from "../support/raw-http-server.ts";
import { waitFor, within } from "../support/wait.ts";
import { validateSitemap } from "../support/xmllint.ts";
import {
  call,
  createJob,
  generatedSite,
  hangingSite,
  hmac,
  json,
  locs,
  readEventStream,
  waitForJob,
  type GeneratedSite,
  type ServerSentEvent,
} from "./support.ts";

const JOB_FIELDS = ["id", "status", "url", "options", "created_at", "started_at", "finished_at", "progress"];

export interface Backend {
  name: string;
  /** A fresh store: a SQLite path or a PostgreSQL URL. */
  store: () => Promise<string>;
  /** Every test skipped: the store's server is missing (its test file printed why). */
  skip?: boolean;
}

export function describeJobs(backend: Backend) {
  // Servers a failed test left running are killed at the end (bun test runs no exit handlers).
  const started: RunningBinary[] = [];
  afterAll(() => {
    for (const server of started) if (server.proc.exitCode === null) server.proc.kill("SIGKILL");
  });
  const start = async (store: string, args: string[] = []) => {
    const server = await startBinary({ dbPath: store, args: ["--allow-private-targets", ...args] });
    started.push(server);
    return server;
  };

  describe.skipIf(backend.skip === true)(`jobs on ${backend.name}: endpoints`, () => {
    let site: GeneratedSite;
    let server: RunningBinary;
    let store: string;
    let key: string;
    let other: string;
    beforeAll(async () => {
      site = generatedSite(40, { fanout: 3 });
      store = await backend.store();
      key = await createKey(store, "--daily-limit", "10");
      other = await createKey(store);
      server = await start(store);
    });
    afterAll(async () => {
      expect(await server.stop()).toBe(0);
      await site.stop();
    });

    test("POST 202 with Location and the job; it runs to a result; sitemap.xml lists every page, gzip when accepted", async () => {
      const res = await createJob(server, key, { url: `${site.url}/`, max_pages: 500 });
      expect(res.status).toBe(202);
      const body = await json(res);
      expect(body).toMatchObject({ success: true, message: "Sitemap job accepted." });
      const id = body.data.id;
      expect(id).toMatch(/^[A-Za-z0-9_-]{22,}$/);
      expect(res.headers.get("location")).toBe(`/api/jobs/${id}`);
      expect(res.headers.get("x-ratelimit-remaining")).toBe("9");
      expect(Object.keys(body.data)).toEqual(expect.arrayContaining(JOB_FIELDS));
      expect(body.data).toMatchObject({ url: `${site.url}/`, options: { max_pages: 500, max_depth: null, include: [] } });
      expect(body.data.callback_secret).toBeUndefined();

      const job = await waitForJob(server, key, id);
      expect(job.status).toBe("succeeded");
      expect(job.error).toBeUndefined();
      expect(job.finished_at).not.toBeNull();
      expect(job.result).toMatchObject({
        url: `${site.url}/`,
        url_count: 40,
        truncated: false,
        sitemap_url: `/api/jobs/${id}/sitemap.xml`,
        sitemap_parts: 0,
      });
      expect(job.result.sitemap).toBeUndefined();
      expect(job.result.excluded).toMatchObject({ robots: 0, noindex: 0 });
      expect(job.progress).toMatchObject({ urls_listed: 40, pages_queued: 0 });

      const plain = await call(server, key, `/api/jobs/${id}/sitemap.xml`, { headers: { "accept-encoding": "identity" } });
      expect(plain.status).toBe(200);
      expect(plain.headers.get("content-type")).toStartWith("application/xml");
      expect(plain.headers.get("content-encoding")).toBeNull();
      const xml = await plain.text();
      expect(locs(xml)).toEqual(site.expected);
      expect((await validateSitemap(xml)).errors).toEqual([]);

      const zipped = await call(server, key, `/api/jobs/${id}/sitemap.xml`, { headers: { "accept-encoding": "gzip" }, decompress: false });
      expect(zipped.headers.get("content-encoding")).toBe("gzip");
      expect(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await zipped.arrayBuffer())))).toBe(xml);

      expect((await call(server, key, `/api/jobs/${id}/sitemap-1.xml`)).status).toBe(404);
      expect((await call(server, key, `/api/jobs/${id}/other.xml`)).status).toBe(404);
    });

    test("another key's job, or an unknown id, is 404 Job not found. on every job endpoint; no key is 401", async () => {
      const id = (await json(await createJob(server, key, { url: `${site.url}/` }))).data.id;
      for (const path of [`/api/jobs/${id}`, `/api/jobs/${id}/events`, `/api/jobs/${id}/sitemap.xml`, `/api/jobs/${id}/sitemap-1.xml`]) {
        const res = await call(server, other, path);
        expect(res.status).toBe(404);
        if (!path.endsWith("-1.xml")) expect(await json(res)).toEqual({ success: false, message: "Job not found." });
      }
      expect(await json(await call(server, other, `/api/jobs/${id}`, { method: "DELETE" }))).toEqual({
        success: false,
        message: "Job not found.",
      });
      expect((await call(server, key, `/api/jobs/AAAAAAAAAAAAAAAAAAAAAA`)).status).toBe(404);
      expect((await json(await call(server, other, "/api/jobs"))).data.jobs).toEqual([]);
      const anonymous = await fetch(`${server.url}/api/jobs/${id}`);
      expect(anonymous.status).toBe(401);
      expect(await json(anonymous)).toEqual({ success: false, message: "Authentication failed. Invalid or missing API key." });
      await waitForJob(server, key, id);
    });

    test("steps 1-5 as /api/generate: bad body, URL, option and callback_url answer 400 and count nothing", async () => {
      const before = (await createJob(server, other, { url: "nope" })).headers.get("x-ratelimit-remaining");
      const cases: [Record<string, unknown>, string][] = [
        [{ url: "ftp://x/" }, "Invalid URL. Provide a full URL that includes http:// or https://."],
        [{ url: `${site.url}/`, max_pages: 0 }, "max_pages must be an integer from 1 to 100000."],
        [
          { url: `${site.url}/`, callback_url: "javascript:alert(1)" },
          "callback_url must be a full URL that includes http:// or https://.",
        ],
      ];
      for (const [body, message] of cases) {
        const res = await createJob(server, other, body);
        expect(res.status).toBe(400);
        expect(await json(res)).toEqual({ success: false, message });
        expect(res.headers.get("x-ratelimit-remaining")).toBe(before);
      }
      const notJson = await fetch(`${server.url}/api/jobs`, { method: "POST", headers: { "x-api-key": other }, body: "{" });
      expect(notJson.status).toBe(400);
      const noKey = await fetch(`${server.url}/api/jobs`, { method: "POST", body: "{}" });
      expect(noKey.status).toBe(401);
    });

    test("a start page that fails ends the job failed with the /api/generate answer as its error", async () => {
      const id = (await json(await createJob(server, key, { url: `${site.url}/missing` }))).data.id;
      const job = await waitForJob(server, key, id);
      expect(job.status).toBe("failed");
      expect(job.error).toEqual({ status: 502, message: `Could not crawl ${site.url}/missing: HTTP 404` });
      expect(job.result).toBeUndefined();
      const res = await call(server, key, `/api/jobs/${id}/sitemap.xml`);
      expect(res.status).toBe(409);
      expect(await json(res)).toEqual({ success: false, message: `Job ${id} is failed.` });
    });

    test("GET /api/jobs: newest first, limit and cursor; bad limit 400", async () => {
      const all = (await json(await call(server, key, "/api/jobs?limit=100"))).data;
      expect(all.next_cursor).toBeNull();
      expect(all.jobs.length).toBeGreaterThanOrEqual(3);
      const created = all.jobs.map((j: any) => j.created_at);
      expect(created).toEqual([...created].sort().reverse());
      const first = (await json(await call(server, key, "/api/jobs?limit=1"))).data;
      expect(first.jobs.map((j: any) => j.id)).toEqual([all.jobs[0].id]);
      const second = (await json(await call(server, key, `/api/jobs?limit=1&cursor=${first.next_cursor}`))).data;
      expect(second.jobs.map((j: any) => j.id)).toEqual([all.jobs[1].id]);
      for (const limit of ["0", "101", "x"]) {
        const res = await call(server, key, `/api/jobs?limit=${limit}`);
        expect(res.status).toBe(400);
        expect(await json(res)).toEqual({ success: false, message: "limit must be an integer from 1 to 100." });
      }
      expect((await call(server, key, "/api/jobs?cursor=%%%")).status).toBe(400);
    });

    test("DELETE: a finished job is deleted with its result", async () => {
      const id = (await json(await createJob(server, key, { url: `${site.url}/` }))).data.id;
      await waitForJob(server, key, id);
      const res = await call(server, key, `/api/jobs/${id}`, { method: "DELETE" });
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ success: true, message: "Job deleted." });
      expect((await call(server, key, `/api/jobs/${id}`)).status).toBe(404);
      expect((await call(server, key, `/api/jobs/${id}/sitemap.xml`)).status).toBe(404);
    });

    test("a known path with another method is 405 with Allow; the OpenAPI document lists every job endpoint", async () => {
      const res = await fetch(`${server.url}/api/jobs`, { method: "PUT" });
      expect(res.status).toBe(405);
      const doc = await json(await fetch(`${server.url}/swagger/json`));
      for (const path of ["/api/jobs", "/api/jobs/{id}", "/api/jobs/{id}/events", "/api/jobs/{id}/sitemap.xml", "/api/jobs/{id}/{part}"]) {
        expect(Object.keys(doc.paths)).toContain(path);
      }
      expect(Object.keys(doc.paths["/api/jobs/{id}"])).toEqual(expect.arrayContaining(["get", "delete"]));
      expect(doc.paths["/api/jobs"].post.responses["202"].content["application/json"].example.message).toBe("Sitemap job accepted.");
    });
  });

  describe.skipIf(backend.skip === true)(`jobs on ${backend.name}: queue, quota, cancel`, () => {
    let site: GeneratedSite;
    let server: RunningBinary;
    let key: string;
    beforeAll(async () => {
      site = generatedSite(20);
      const store = await backend.store();
      key = await createKey(store, "--daily-limit", "5");
      // This instance runs no job: they stay queued.
      server = await start(store, ["--max-jobs", "0", "--job-queue", "1"]);
    });
    afterAll(async () => {
      expect(await server.stop()).toBe(0);
      await site.stop();
    });

    test("queue full: 503 with Retry-After and the admission given back; a job counts once; cancel a queued job", async () => {
      const first = await createJob(server, key, { url: `${site.url}/` });
      expect(first.status).toBe(202);
      expect(first.headers.get("x-ratelimit-remaining")).toBe("4");
      const id = (await json(first)).data.id;
      expect((await json(await call(server, key, `/api/jobs/${id}`))).data.status).toBe("queued");
      const full = await createJob(server, key, { url: `${site.url}/` });
      expect(full.status).toBe(503);
      expect(Number(full.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(full.headers.get("x-ratelimit-remaining")).toBe("4");
      expect((await json(full)).success).toBe(false);

      // Reading, listing and watching a job cost nothing.
      for (let i = 0; i < 5; i++) await call(server, key, `/api/jobs/${id}`);
      await call(server, key, "/api/jobs");
      const early = await call(server, key, `/api/jobs/${id}/sitemap.xml`);
      expect(early.status).toBe(409);
      expect(await json(early)).toEqual({ success: false, message: `Job ${id} is queued.` });

      const cancel = await call(server, key, `/api/jobs/${id}`, { method: "DELETE" });
      expect(cancel.status).toBe(200);
      const body = await json(cancel);
      expect(body).toMatchObject({ success: true, message: "Job cancelled.", data: { id, status: "cancelled" } });
      // Cancelled before any URL was listed: an error, no result.
      expect(body.data.error).toEqual({ status: 409, message: "Job cancelled before any URL was listed." });
      expect(body.data.result).toBeUndefined();

      // The queue has room again; the quota went 5 -> 4 -> 3 for two jobs, never for the 503.
      const again = await createJob(server, key, { url: `${site.url}/` });
      expect(again.status).toBe(202);
      expect(again.headers.get("x-ratelimit-remaining")).toBe("3");
      expect(site.pages()).toBe(0);
    });
  });

  describe.skipIf(backend.skip === true)(`jobs on ${backend.name}: SSE, callback, cancel while running`, () => {
    let site: GeneratedSite;
    let server: RunningBinary;
    let key: string;
    let hookFails = 1;
    beforeAll(async () => {
      // The hook fails once: the callback is retried.
      site = generatedSite(300, { fanout: 4, delayMs: 60, hookStatus: () => (hookFails-- > 0 ? 500 : 200) });
      const store = await backend.store();
      key = await createKey(store, "--daily-limit", "10");
      server = await start(store);
    });
    afterAll(async () => {
      expect(await server.stop()).toBe(0);
      await site.stop();
    });

    test("events: progress at least every 2 s while it runs, then one done with the final job; the callback is signed", async () => {
      const res = await createJob(server, key, { url: `${site.url}/`, callback_url: `${site.url}/hook` });
      const created = (await json(res)).data;
      const secret: string = created.callback_secret;
      expect(secret.length).toBeGreaterThanOrEqual(32);
      const stream = await call(server, key, `/api/jobs/${created.id}/events`);
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toStartWith("text/event-stream");
      const events: (ServerSentEvent & { at: number })[] = [];
      await readEventStream(stream.body!, (event) => events.push({ ...event, at: Date.now() }));
      const progress = events.filter((e) => e.type === "progress");
      const done = events.filter((e) => e.type === "done");
      expect(done.length).toBe(1);
      expect(events.at(-1)!.type).toBe("done");
      expect(progress.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < events.length; i++) expect(events[i]!.at - events[i - 1]!.at).toBeLessThan(2_000 + 1_000);
      const seen = progress.map((e) => JSON.parse(e.data).progress.pages_crawled);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
      const final = JSON.parse(done[0]!.data);
      expect(final).toMatchObject({ id: created.id, status: "succeeded", result: { url_count: 300 } });
      expect(final.callback_secret).toBeUndefined();

      // A finished job's stream is one done event at once.
      const again: ServerSentEvent[] = [];
      await readEventStream((await call(server, key, `/api/jobs/${created.id}/events`)).body!, (e) => again.push(e));
      expect(again.map((e) => e.type)).toEqual(["done"]);

      // The callback: failed once (500), retried, and signed with the secret shown once.
      await waitFor(() => site.callbacks.length >= 2, 15_000, "the callback retry");
      for (const { body, signature } of site.callbacks) {
        expect(signature).toBe(hmac(body, secret));
        expect(JSON.parse(body)).toMatchObject({ id: created.id, status: "succeeded" });
      }
      expect(hmac(site.callbacks[0]!.body, "another secret")).not.toBe(site.callbacks[0]!.signature);
      expect(JSON.stringify((await json(await call(server, key, `/api/jobs/${created.id}`))).data)).not.toContain(secret);
    });

    test("DELETE of a running job: Job cancelled., and what it found is kept, truncated", async () => {
      const id = (await json(await createJob(server, key, { url: `${site.url}/` }))).data.id;
      await waitForJob(server, key, id, (job) => job.progress.urls_listed >= 40);
      const res = await call(server, key, `/api/jobs/${id}`, { method: "DELETE" });
      expect(res.status).toBe(200);
      const answer = await json(res);
      expect(answer.message).toBe("Job cancelled.");
      // The answer is the job as it stays: cancelled, with the result its runner published.
      expect(answer.data.status).toBe("cancelled");
      expect(answer.data.result.truncated).toBe(true);
      const job = await waitForJob(server, key, id, (j) => j.result !== undefined);
      expect(answer.data).toEqual(job);
      expect(job.status).toBe("cancelled");
      expect(job.result.truncated).toBe(true);
      expect(job.result.url_count).toBeGreaterThanOrEqual(40);
      expect(job.result.url_count).toBeLessThan(300);
      // Every URL the crawl had found is in the result, and the final progress says as much.
      expect(job.progress.urls_listed).toBe(job.result.url_count);
      const xml = await (await call(server, key, `/api/jobs/${id}/sitemap.xml`)).text();
      expect(locs(xml).length).toBe(job.result.url_count);
    });

    /** Opens `count` event streams of the job; resolves once each has its first event. */
    async function watch(id: string, count: number) {
      const streams = Array.from({ length: count }, () => ({ events: [] as ServerSentEvent[], endedAt: 0 }));
      const ended = Promise.all(
        streams.map(async (stream) => {
          const res = await call(server, key, `/api/jobs/${id}/events`);
          await readEventStream(res.body!, (e) => stream.events.push(e));
          stream.endedAt = Date.now();
        }),
      );
      await waitFor(() => streams.every((stream) => stream.events.length > 0), 10_000, "a first event on every stream");
      return { streams, ended };
    }

    test("DELETE before the first checkpoint, a request in flight: within 2 s the request is aborted, the URLs found are the result, every stream ends with done", async () => {
      const site = hangingSite();
      try {
        const id = (await json(await createJob(server, key, { url: `${site.url}/` }))).data.id;
        await waitFor(() => ["/a", "/b", "/c", "/slow"].every((path) => site.requests.includes(path)), 10_000, "the four links");
        await Bun.sleep(200); // /a, /b and /c recorded; /slow hangs; no checkpoint yet (one a second at most)
        const { streams, ended } = await watch(id, 3);
        const deleted = Date.now();
        const res = await call(server, key, `/api/jobs/${id}`, { method: "DELETE" });
        expect(await json(res)).toMatchObject({ success: true, message: "Job cancelled." });
        await within(ended, 5_000, "every event stream to end after the DELETE");
        for (const stream of streams) {
          expect(stream.endedAt).toBeGreaterThan(0);
          expect(stream.endedAt - deleted).toBeLessThan(2_000);
          expect(stream.events.at(-1)!.type).toBe("done");
          expect(stream.events.filter((e) => e.type === "done").length).toBe(1);
        }
        expect(site.abortedAt.length).toBe(1);
        expect(site.abortedAt[0]! - deleted).toBeLessThan(2_000);
        const job = (await json(await call(server, key, `/api/jobs/${id}`))).data;
        expect(JSON.parse(streams[0]!.events.at(-1)!.data)).toEqual(job);
        expect(job).toMatchObject({ status: "cancelled", result: { url_count: 4, truncated: true }, progress: { urls_listed: 4 } });
        expect(job.error).toBeUndefined();
        expect(Date.parse(job.finished_at) - Date.parse(job.started_at)).toBeLessThan(deleted + 2_000 - Date.parse(job.started_at));
        expect(job.progress.elapsed_ms).toBeLessThan(deleted + 2_000 - Date.parse(job.started_at));
        const xml = await (await call(server, key, `/api/jobs/${id}/sitemap.xml`)).text();
        expect(locs(xml).sort()).toEqual(["/", "/a", "/b", "/c"].map((path) => `${site.url}${path}`));
      } finally {
        await site.stop();
      }
    });

    test("DELETE while the start page is in flight: cancelled with the 409 error, the request aborted, every stream ends with done", async () => {
      const site = hangingSite({ startHangs: true });
      try {
        const id = (await json(await createJob(server, key, { url: `${site.url}/` }))).data.id;
        await waitFor(() => site.requests.includes("/"), 10_000, "the start page's request");
        const { streams, ended } = await watch(id, 2);
        const deleted = Date.now();
        expect((await call(server, key, `/api/jobs/${id}`, { method: "DELETE" })).status).toBe(200);
        await within(ended, 5_000, "every event stream to end after the DELETE");
        for (const stream of streams) {
          expect(stream.endedAt).toBeGreaterThan(0);
          expect(stream.endedAt - deleted).toBeLessThan(2_000);
          expect(stream.events.at(-1)!.type).toBe("done");
        }
        expect(site.abortedAt.length).toBe(1);
        const job = (await json(await call(server, key, `/api/jobs/${id}`))).data;
        expect(job).toMatchObject({ status: "cancelled", error: { status: 409, message: "Job cancelled before any URL was listed." } });
        expect(job.result).toBeUndefined();
        const sitemap = await call(server, key, `/api/jobs/${id}/sitemap.xml`);
        expect(sitemap.status).toBe(409);
        expect(await json(sitemap)).toEqual({ success: false, message: `Job ${id} is cancelled.` });
      } finally {
        await site.stop();
      }
    });
  });

  describe.skipIf(backend.skip === true)(`jobs on ${backend.name}: the callback's address guard`, () => {
    test("a callback_url the guard refuses answers 400 at creation: no job, nothing counted, the hook never reached", async () => {
      const site = generatedSite(5);
      const hook = generatedSite(1);
      const store = await backend.store();
      const key = await createKey(store, "--daily-limit", "5");
      // The site's port is allowed; the hook, on another port of the same loopback address, is not.
      const server = await startBinary({ dbPath: store, args: ["--allow-target", `127.0.0.1:${new URL(site.url).port}`] });
      started.push(server);
      const refused = await createJob(server, key, { url: `${site.url}/`, callback_url: `${hook.url}/hook` });
      expect(refused.status).toBe(400);
      expect(await json(refused)).toEqual({
        success: false,
        message: "callback_url is not allowed: Target address not allowed: 127.0.0.1 is a loopback address.",
      });
      expect(refused.headers.get("x-ratelimit-remaining")).toBe("5");
      expect((await json(await call(server, key, "/api/jobs"))).data.jobs).toEqual([]);
      // Without the callback the same job is accepted, counted once, and runs.
      const accepted = await createJob(server, key, { url: `${site.url}/` });
      expect(accepted.status).toBe(202);
      expect(accepted.headers.get("x-ratelimit-remaining")).toBe("4");
      expect((await waitForJob(server, key, (await json(accepted)).data.id)).status).toBe("succeeded");
      expect(hook.pages()).toBe(0);
      expect(hook.callbacks).toEqual([]);
      expect(server.stderr()).toBe("");
      expect(await server.stop()).toBe(0);
      await site.stop();
      await hook.stop();
    });
  });

  describe.skipIf(backend.skip === true)(`jobs on ${backend.name}: two instances on one store`, () => {
    test("a job created through one instance runs on another, and the first serves, streams and cancels it", async () => {
      const site = generatedSite(400, { fanout: 4, delayMs: 30 });
      const store = await backend.store();
      const key = await createKey(store);
      const front = await start(store, ["--max-jobs", "0"]);
      const worker = await start(store);
      const id = (await json(await createJob(front, key, { url: `${site.url}/` }))).data.id;
      const running = await waitForJob(front, key, id, (job) => job.status === "running" && job.progress.urls_listed > 20);
      expect(running.started_at).not.toBeNull();
      const events: ServerSentEvent[] = [];
      const stream = readEventStream((await call(front, key, `/api/jobs/${id}/events`)).body!, (e) => events.push(e));
      await waitFor(() => events.length >= 1, 10_000, "a progress event");
      const cancel = await call(front, key, `/api/jobs/${id}`, { method: "DELETE" });
      // Answered with the job as the worker, another instance, left it.
      expect(await json(cancel)).toMatchObject({
        success: true,
        message: "Job cancelled.",
        data: { status: "cancelled", result: { truncated: true } },
      });
      await stream;
      const done = JSON.parse(events.at(-1)!.data);
      expect(events.at(-1)!.type).toBe("done");
      // The final job: cancelled, with what the worker found, which the front serves.
      expect(done).toMatchObject({ status: "cancelled", result: { truncated: true } });
      const job = (await json(await call(front, key, `/api/jobs/${id}`))).data;
      expect(job).toEqual(done);
      expect(job.result.truncated).toBe(true);
      const xml = await (await call(front, key, `/api/jobs/${id}/sitemap.xml`)).text();
      expect(locs(xml).length).toBe(job.result.url_count);
      expect(await front.stop()).toBe(0);
      expect(await worker.stop()).toBe(0);
      await site.stop();
    }, 60_000);
  });

  describe.skipIf(backend.skip === true)(`jobs on ${backend.name}: durable`, () => {
    test("SIGTERM hands a running job back; a new process finishes it with the same URLs, fetching well under twice the pages", async () => {
      const size = 600;
      const site = generatedSite(size, { fanout: 5, delayMs: 10 });
      const store = await backend.store();
      const key = await createKey(store);
      const first = await start(store);
      const id = (await json(await createJob(first, key, { url: `${site.url}/` }))).data.id;
      await waitFor(() => site.pages() >= 200, 30_000, "200 pages fetched");
      expect(await first.stop("SIGTERM")).toBe(0);
      const firstRun = site.pages();
      expect(firstRun).toBeLessThan(size);

      const second = await start(store);
      const job = await waitForJob(second, key, id);
      expect(job).toMatchObject({ status: "succeeded", result: { url_count: size, truncated: false } });
      const xml = await (await call(second, key, `/api/jobs/${id}/sitemap.xml`)).text();
      expect(locs(xml)).toEqual(site.expected);
      const secondRun = site.pages() - firstRun;
      console.log(`SIGTERM resume on ${backend.name}: site ${size} pages, first run fetched ${firstRun}, second ${secondRun}`);
      expect(firstRun + secondRun).toBeLessThan(size * 1.25);
      expect(await second.stop()).toBe(0);
      await site.stop();
    }, 90_000);

    test("kill -9: the claim is lost after the lease (--job-lease 3) and another instance finishes the job", async () => {
      const size = 800;
      const site = generatedSite(size, { fanout: 5, delayMs: 25 });
      const store = await backend.store();
      const key = await createKey(store);
      const lease = ["--job-lease", "3"];
      const a = await start(store, lease);
      const id = (await json(await createJob(a, key, { url: `${site.url}/` }))).data.id;
      // Past the first checkpoints (one a second at most).
      await waitFor(() => site.pages() >= 400, 30_000, "400 pages fetched");
      a.proc.kill("SIGKILL");
      await a.proc.exited;
      const killedAt = Date.now();
      const firstRun = site.pages();
      const b = await start(store, lease);
      const job = await waitForJob(b, key, id);
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(2_000);
      expect(job).toMatchObject({ status: "succeeded", result: { url_count: size, truncated: false } });
      expect(locs(await (await call(b, key, `/api/jobs/${id}/sitemap.xml`)).text())).toEqual(site.expected);
      const secondRun = site.pages() - firstRun;
      console.log(`kill -9 resume on ${backend.name}: site ${size} pages, first run fetched ${firstRun}, second ${secondRun}`);
      expect(firstRun + secondRun).toBeLessThan(size * 1.5);
      expect(await b.stop()).toBe(0);
      await site.stop();
    }, 90_000);
  });

  describe.skipIf(backend.skip === true)(`jobs on ${backend.name}: the link report`, () => {
    afterAll(() => stopRawServers());

    test("result.links counts the lists; links.json holds them as the site has them, gzip when accepted; 404 without link_report", async () => {
      const site = serveLinkSite({ fillers: 9 });
      const store = await backend.store();
      const key = await createKey(store, "--daily-limit", "10");
      const server = await start(store);
      const body = { url: `${site.url}/`, link_report: true, sitemaps_from_robots: true };
      const [withReport, without] = await Promise.all([
        createJob(server, key, body).then(json),
        createJob(server, key, { url: `${site.url}/` }).then(json),
      ]);
      expect(withReport.data.options).toMatchObject({ link_report: true, sitemaps_from_robots: true });
      expect(without.data.options.link_report).toBe(false);
      const id = withReport.data.id;
      const early = await call(server, key, `/api/jobs/${id}/links.json`);
      expect(early.status).toBe(404);
      expect((await json(early)).message).toMatch(new RegExp(`^Job ${id} is (queued|running)\\.$`));

      const job = await waitForJob(server, key, id);
      expect(job.status).toBe("succeeded");
      expect(job.result.links).toEqual({ broken_count: 7, redirect_count: 4, sitemap_error_count: 6 });
      const plain = await call(server, key, `/api/jobs/${id}/links.json`, { headers: { "accept-encoding": "identity" } });
      expect(plain.status).toBe(200);
      expect(plain.headers.get("content-type")).toStartWith("application/json");
      expect(plain.headers.get("content-encoding")).toBeNull();
      const text = await plain.text();
      expect(JSON.parse(text)).toEqual(site.expected("connection reset"));
      const zipped = await call(server, key, `/api/jobs/${id}/links.json`, { headers: { "accept-encoding": "gzip" }, decompress: false });
      expect(zipped.headers.get("content-encoding")).toBe("gzip");
      expect(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await zipped.arrayBuffer())))).toBe(text);

      const other = await waitForJob(server, key, without.data.id);
      expect(other.result.links).toBeUndefined();
      const none = await call(server, key, `/api/jobs/${without.data.id}/links.json`);
      expect(none.status).toBe(404);
      expect(await json(none)).toEqual({ success: false, message: `Job ${without.data.id} was run without link_report.` });
      expect((await call(server, await createKey(store), `/api/jobs/${id}/links.json`)).status).toBe(404);
      expect(await server.stop()).toBe(0);
    }, 60_000);

    test("a job stopped by SIGTERM and continued by a new process reports the same lists, referrers counted once", async () => {
      const fillers = 400;
      const site = serveLinkSite({ fillers, delayMs: 15 });
      const store = await backend.store();
      const key = await createKey(store);
      const first = await start(store);
      const id = (await json(await createJob(first, key, { url: `${site.url}/`, link_report: true, sitemaps_from_robots: true }))).data.id;
      await waitFor(() => site.pages() >= 150, 30_000, "150 pages fetched");
      expect(await first.stop("SIGTERM")).toBe(0);
      const firstRun = site.pages();
      expect(firstRun).toBeLessThan(fillers);
      const second = await start(store);
      const job = await waitForJob(second, key, id);
      expect(job).toMatchObject({
        status: "succeeded",
        result: { truncated: false, links: { broken_count: 7, redirect_count: 4, sitemap_error_count: 6 } },
      });
      const report = await json(await call(second, key, `/api/jobs/${id}/links.json`));
      expect(report).toEqual(site.expected("connection reset"));
      console.log(`link report after SIGTERM on ${backend.name}: first run fetched ${firstRun} pages, second ${site.pages() - firstRun}`);
      expect(await second.stop()).toBe(0);
    }, 90_000);

    test("1,003 broken links: links.json holds every one (no 1,000 cut for jobs)", async () => {
      const site = serveManyBroken(1_003);
      const store = await backend.store();
      const key = await createKey(store);
      const server = await start(store);
      const id = (await json(await createJob(server, key, { url: `${site.url}/`, link_report: true }))).data.id;
      const job = await waitForJob(server, key, id);
      expect(job.result.links).toEqual({ broken_count: 1_003, redirect_count: 0, sitemap_error_count: 0 });
      const report = await json(await call(server, key, `/api/jobs/${id}/links.json`));
      expect(report.truncated).toBe(false);
      expect(report.broken).toHaveLength(1_003);
      expect(report.broken.at(-1)).toEqual({
        url: `${site.url}/broken/01002`,
        kind: "page",
        status: 404,
        error: "HTTP 404",
        referrers: [`${site.url}/`],
        referrer_count: 1,
      });
      expect(await server.stop()).toBe(0);
      site.stop();
    }, 60_000);
  });

  describe.skipIf(backend.skip === true)(`jobs on ${backend.name}: a split result`, () => {
    test("60,000 URLs: a <sitemapindex> over parts at the crawled origin, every URL in exactly one part, each part valid", async () => {
      const size = 60_000;
      const site = generatedSite(size, { fanout: 20 });
      const store = await backend.store();
      const key = await createKey(store);
      const server = await start(store);
      const started = Date.now();
      const id = (await json(await createJob(server, key, { url: `${site.url}/` }))).data.id;
      const job = await waitForJob(server, key, id, undefined, 120_000);
      console.log(`60,000-page job on ${backend.name}: ${Date.now() - started} ms, ${JSON.stringify(job.progress)}`);
      expect(job).toMatchObject({ status: "succeeded", result: { url_count: size, sitemap_parts: 2, truncated: false } });
      const index = await (await call(server, key, `/api/jobs/${id}/sitemap.xml`)).text();
      expect(index).toContain("<sitemapindex");
      expect((await validateSitemap(index)).errors).toEqual([]);
      expect(locs(index)).toEqual([`${site.url}/sitemap-1.xml`, `${site.url}/sitemap-2.xml`]);
      const all: string[] = [];
      for (const n of [1, 2]) {
        const res = await call(server, key, `/api/jobs/${id}/sitemap-${n}.xml`);
        expect(res.status).toBe(200);
        const xml = await res.text();
        expect((await validateSitemap(xml)).errors).toEqual([]);
        all.push(...locs(xml));
      }
      expect(all.length).toBe(size);
      expect(new Set(all).size).toBe(size);
      expect(all).toEqual(site.expected);
      expect((await call(server, key, `/api/jobs/${id}/sitemap-3.xml`)).status).toBe(404);
      expect(await server.stop()).toBe(0);
      await site.stop();
    }, 120_000);
  });
}
