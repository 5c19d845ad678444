// POST /api/jobs through app.handle(), wired as the server wires it (admission with the sitemap
// service's address check) but with a resolver the test controls: no name is looked up and no
// request is sent anywhere.
import { describe, expect, test } from "bun:test";
import { createAdmission } from "../../src/admission/admission.ts";
import { openDatabase } from "../../src/db/sqlite/database.ts";
import { createKey } from "../../src/db/sqlite/keys.ts";
import { sqliteMigrations } from "../../src/db/sqlite/migrations.ts";
import { createSqliteStore } from "../../src/db/sqlite/store.ts";
import { jobRoutes } from "../../src/jobs/routes.ts";
import { createSitemapService } from "../../src/sitemap/service.ts";
import { StoreUnavailableError } from "../../src/http/store-errors.ts";
import type { JobQueue } from "../../src/jobs/job-store.ts";
import type { Resolver } from "../../src/crawler/index.ts";

/** site.example.test and hooks.public.test are public; hooks.example.test resolves to a private address. */
const resolve: Resolver = async (host) => {
  const answers: Record<string, string> = {
    "site.example.test": "93.184.216.34",
    "hooks.public.test": "93.184.216.35",
    "hooks.example.test": "10.1.2.3",
    "mixed.example.test": "93.184.216.36",
  };
  if (host === "mixed.example.test")
    return [
      { address: "93.184.216.36", family: 4 },
      { address: "fd00::1", family: 6 },
    ];
  const address = answers[host];
  if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return [{ address, family: 4 }];
};

function setup(allowPrivateTargets = false) {
  const now = new Date("2026-11-21T10:00:00.000Z");
  const db = openDatabase(":memory:", sqliteMigrations);
  const store = createSqliteStore(db, ":memory:");
  const key = createKey(db, { name: "free", dailyLimit: null }, now).key;
  const sitemap = createSitemapService({ maxPages: 500, crawlTimeoutSeconds: 60, allowPrivateTargets, allowTargets: [] }, { resolve });
  const admission = createAdmission({
    keys: store.keys,
    quota: store.quota,
    now: () => now,
    clientIp: () => "198.51.100.7",
    freeDailyLimit: 5,
    checkTarget: sitemap.checkTarget,
  });
  const app = jobRoutes({
    hostConcurrency: 4,
    renderAvailable: false,
    store: store.jobs,
    now: () => now,
    authenticate: admission.authenticate,
    admit: admission.admit,
    maxPages: 1_000,
    maxQueued: 10,
    freeDailyLimit: 5,
    wake: () => {},
    log: (message) => {
      throw new Error(`unexpected log: ${message}`);
    },
  });
  const create = (body: Record<string, unknown>) =>
    app.handle(
      new Request("http://localhost/api/jobs", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify(body),
      }),
    );
  return { store, create };
}

describe("POST /api/jobs: callback_url through the address guard at creation (step 4)", () => {
  test.each([
    [
      "a name that resolves to a private address",
      "http://hooks.example.test/hook",
      "Target address not allowed: hooks.example.test resolves to 10.1.2.3, a private address.",
    ],
    ["a private IP", "http://10.0.0.1/hook", "Target address not allowed: 10.0.0.1 is a private address."],
    ["loopback by name", "http://hook.localhost:8080/", "Target address not allowed: hook.localhost is a loopback address."],
    ["loopback IPv6", "http://[::1]:8080/hook", "Target address not allowed: ::1 is a loopback address."],
    [
      "link-local (cloud metadata)",
      "http://169.254.169.254/latest",
      "Target address not allowed: 169.254.169.254 is a link-local address.",
    ],
    [
      "a name with one private address among public ones",
      "https://mixed.example.test/hook",
      "Target address not allowed: mixed.example.test resolves to fd00::1, a unique local address.",
    ],
    [
      "a port outside 80, 443 and 1024-65535",
      "http://hooks.public.test:22/hook",
      "Target port 22 not allowed: only 80, 443 and 1024-65535.",
    ],
  ])("%s: 400 `callback_url is not allowed: <reason>`, no job, nothing counted", async (_, callback, reason) => {
    const { store, create } = setup();
    const res = await create({ url: "https://site.example.test/", callback_url: callback });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, message: `callback_url is not allowed: ${reason}` });
    expect(res.headers.get("x-ratelimit-remaining")).toBe("5");
    expect(await store.jobs.counts()).toEqual({ queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 });
  });

  test("the target is judged first: a refused target answers with its own reason", async () => {
    const { create } = setup();
    const res = await create({ url: "http://10.9.9.9/", callback_url: "http://hooks.example.test/hook" });
    expect(await res.json()).toEqual({ success: false, message: "Target address not allowed: 10.9.9.9 is a private address." });
  });

  test("a public callback, or one whose name does not resolve now (judged again when sending), is accepted and counted", async () => {
    const { store, create } = setup();
    const accepted = await create({ url: "https://site.example.test/", callback_url: "https://hooks.public.test/hook" });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get("x-ratelimit-remaining")).toBe("4");
    const unresolved = await create({ url: "https://site.example.test/", callback_url: "https://nowhere.example.test/hook" });
    expect(unresolved.status).toBe(202);
    expect((await store.jobs.counts()).queued).toBe(2);
  });

  test("--allow-private-targets lets a loopback callback through", async () => {
    const { create } = setup(true);
    const res = await create({ url: "http://127.0.0.1:8080/", callback_url: "http://127.0.0.1:9090/hook" });
    expect(res.status).toBe(202);
  });
});

/**
 * The jobs plugin alone (no app around it): its own onError answers what its handlers and its
 * `ownJob` macro throw. `get`, when given, stands in for the store's read of one job.
 */
function ownedJobRoutes(get?: JobQueue["get"]) {
  const now = new Date("2026-11-21T10:00:00.000Z");
  const db = openDatabase(":memory:", sqliteMigrations);
  const store = createSqliteStore(db, ":memory:");
  const created = createKey(db, { name: "free", dailyLimit: null }, now);
  const other = createKey(db, { name: "other", dailyLimit: null }, now);
  const logged: string[] = [];
  const admission = createAdmission({
    keys: store.keys,
    quota: store.quota,
    now: () => now,
    clientIp: () => "198.51.100.7",
    freeDailyLimit: 5,
    checkTarget: async () => {},
  });
  const app = jobRoutes({
    hostConcurrency: 4,
    renderAvailable: false,
    store: get ? { ...store.jobs, get } : store.jobs,
    now: () => now,
    authenticate: admission.authenticate,
    admit: admission.admit,
    maxPages: 1_000,
    maxQueued: 10,
    freeDailyLimit: 5,
    wake: () => {},
    log: (message) => logged.push(message),
  });
  const call = (path: string, headers: Record<string, string> = { "x-api-key": created.key }) =>
    app.handle(new Request(`http://localhost${path}`, { headers }));
  const addJob = (id: string) =>
    store.jobs.create(
      {
        id,
        keyId: created.record.id,
        url: "https://site.example.test/",
        options: {} as never,
        callbackUrl: null,
        callbackSecret: null,
        createdAt: now.toISOString(),
      },
      10,
    );
  return { key: created.key, otherKey: other.key, call, logged, addJob };
}

describe("job routes: errors answer through the plugin's onError", () => {
  test("a store that cannot answer: 503 naming the problem, Retry-After 2, nothing logged", async () => {
    const { call, logged } = ownedJobRoutes(async () => {
      throw new StoreUnavailableError("busy");
    });
    const res = await call("/api/jobs/j1");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("2");
    expect(await res.json()).toEqual({ success: false, message: "Service temporarily unavailable: the database is busy." });
    expect(logged).toEqual([]);
  });

  test("anything unexpected: 500 without internals, logged once with what failed", async () => {
    const { call, logged } = ownedJobRoutes(async () => {
      throw new Error("disk on fire");
    });
    const res = await call("/api/jobs/j1/sitemap.xml");
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ success: false, message: "Internal server error." });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toStartWith("GET /api/jobs/j1/sitemap.xml failed: Error: disk on fire");
  });

  test("ownership: no key 401, another key's job 404; `?api_key=` is a key only for the event stream", async () => {
    const { key, otherKey, call, addJob } = ownedJobRoutes();
    expect(await addJob("j1")).toBe(true);
    expect((await call("/api/jobs/j1")).status).toBe(200);
    const noKey = await call("/api/jobs/j1", {});
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({ success: false, message: "Authentication failed. Invalid or missing API key." });
    for (const res of [await call("/api/jobs/j1", { "x-api-key": otherKey }), await call("/api/jobs/j2")]) {
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ success: false, message: "Job not found." });
    }
    expect((await call(`/api/jobs/j1?api_key=${key}`, {})).status).toBe(401);
    const events = await call(`/api/jobs/j1/events?api_key=${key}`, {});
    expect(events.status).toBe(200);
    expect(events.headers.get("content-type")).toStartWith("text/event-stream");
    await events.body?.cancel();
  });
});
