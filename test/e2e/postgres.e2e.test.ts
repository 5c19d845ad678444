// Several genapi instances on one PostgreSQL database, through the compiled executable:
// exact quotas across instances, keys shared at once, counters that outlive a server restart, 503s
// (never a 500 or a hang) while the server is down or too slow and recovery without restarting
// genapi, and the URL's password nowhere in what genapi prints or serves.
import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKey, generate, runBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { createDatabase, PASSWORD, startServer, stopServer } from "../support/postgres.ts";
import { needs } from "../support/requires.ts";
import { serveSite, type Site } from "../support/site.ts";

const UNREACHABLE = "Service temporarily unavailable: the database is unreachable.";

let site: Site;
let url: string;
const servers: RunningBinary[] = [];
let target: string;

const postgres = needs(import.meta.path, "postgresql");

beforeAll(async () => {
  if (!postgres) return;
  site = await serveSite({ "/": "<!doctype html><title>home</title><p>one page</p>" });
  target = `${site.url}/`;
  url = await createDatabase();
  for (let i = 0; i < 3; i++) servers.push(await startBinary({ dbPath: url, args: ["--allow-private-targets"] }));
}, 30_000);

afterAll(async () => {
  if (!postgres) return;
  startServer();
  for (const server of servers) {
    expect(await server.stop()).toBe(0);
    // Everything an instance printed, request log included.
    expect(server.stdout.join("\n") + server.stderr()).not.toContain(PASSWORD);
  }
  await site.stop();
});

const tally = (statuses: number[]) =>
  statuses.reduce<Record<number, number>>((t, s) => {
    t[s] = (t[s] ?? 0) + 1;
    return t;
  }, {});

async function status(server: RunningBinary, key: string): Promise<number> {
  const res = await generate(server, key, target, {}, AbortSignal.timeout(10_000));
  await res.arrayBuffer();
  return res.status;
}

describe.skipIf(!postgres)("three instances on one database", () => {
  test("60 concurrent requests over three instances with a limit of 25 admit exactly 25", async () => {
    const key = await createKey(url, "--daily-limit", "25");
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => status(servers[i % 3]!, key)));
    expect(tally(statuses)).toEqual({ 200: 25, 429: 35 });
  }, 30_000);

  test("a key created with keys create works on all three at once; revoked, it fails on all three at once", async () => {
    const created = await runBinary(["keys", "create", "--name", "shared", "--db", url]);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(await Promise.all(servers.map((s) => status(s, key)))).toEqual([200, 200, 200]);
    const revoked = await runBinary(["keys", "revoke", key, "--db", url]);
    expect(revoked.code).toBe(0);
    expect(await Promise.all(servers.map((s) => status(s, key)))).toEqual([401, 401, 401]);
    for (const run of [created, revoked]) expect(run.stdout + run.stderr).not.toContain(PASSWORD);
  }, 30_000);

  test("counters survive a PostgreSQL restart", async () => {
    const key = await createKey(url, "--daily-limit", "3");
    for (const server of servers) expect(await status(server, key)).toBe(200);
    stopServer();
    startServer();
    expect(await Promise.all(servers.map((s) => status(s, key)))).toEqual([429, 429, 429]);
  }, 30_000);

  test("PostgreSQL stopped under load: 503 with Retry-After (never 500, never a hang), /api.php and /healthz answer, recovery without restarting genapi", async () => {
    const key = await createKey(url, "--daily-limit", "1000000");
    const seen: { server: number; status: number; at: number; ms: number; message?: string; retryAfter: string | null }[] = [];
    let load = true;
    const workers = Array.from({ length: 9 }, async (_, i) => {
      while (load) {
        const started = performance.now();
        const res = await generate(servers[i % 3]!, key, target, {}, AbortSignal.timeout(10_000));
        const body = (await res.json()) as { message?: string };
        const at = performance.now();
        seen.push({
          server: i % 3,
          status: res.status,
          at,
          ms: at - started,
          message: body.message,
          retryAfter: res.headers.get("retry-after"),
        });
      }
    });
    await Bun.sleep(500);
    stopServer();
    const downAt = performance.now();
    const downFrom = seen.length;
    await Bun.sleep(2_500);
    for (const server of servers) {
      for (const path of ["/api.php?length=20", "/healthz"]) {
        const started = performance.now();
        const res = await fetch(`${server.url}${path}`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        expect(performance.now() - started).toBeLessThan(500);
      }
      const started = performance.now();
      expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
      expect(performance.now() - started).toBeLessThan(3_000);
    }
    startServer();
    const upAt = performance.now();
    // Every instance admits again by itself (no genapi restart), within a few seconds.
    const recovered = async (server: number) => {
      for (;;) {
        const first = seen.find((r) => r.server === server && r.at > upAt && r.status === 200);
        if (first) return first.at - upAt;
        if (performance.now() - upAt > 10_000) return Infinity;
        await Bun.sleep(50);
      }
    };
    const recovery = await Promise.all([0, 1, 2].map(recovered));
    await Bun.sleep(500);
    load = false;
    await Promise.all(workers);

    // Never anything but 200 and 503, and never a hang: every answer, before, during and after. A
    // crawl admitted before the outage waits for the store's host leases rather than take a slot of
    // its own (politeness): it answers once PostgreSQL is back, within a few seconds of that.
    expect(seen.filter((r) => r.status !== 200 && r.status !== 503)).toEqual([]);
    expect(seen.filter((r) => r.ms >= 3_000 && !(r.status === 200 && r.at - r.ms < downAt + 500 && r.at - upAt < 3_000))).toEqual([]);
    const refused = seen.slice(downFrom).filter((r) => r.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.message).toBe(UNREACHABLE);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(r.retryAfter)).toBeLessThanOrEqual(2);
    }
    for (const ms of recovery) expect(ms).toBeLessThan(5_000);
    // After recovery, admitted on every instance, and every instance ready.
    for (const server of [0, 1, 2]) expect(seen.filter((r) => r.server === server).at(-1)!.status).toBe(200);
    expect(await Promise.all(servers.map((s) => fetch(`${s.url}/readyz`).then((r) => r.status)))).toEqual([200, 200, 200]);
    const slowest = Math.max(...refused.map((r) => r.ms));
    const firstRefusal = Math.min(...refused.map((r) => r.at)) - downAt;
    console.log(
      `outage: ${refused.length} answers 503 (slowest ${slowest.toFixed(0)} ms, first ${firstRefusal.toFixed(0)} ms after the stop); ` +
        `back to 200 on each instance ${recovery.map((ms) => `${ms.toFixed(0)} ms`).join(", ")} after the start`,
    );
  }, 60_000);

  test("PostgreSQL too slow (counters locked by another session): 503 within 2 s on every instance, and those requests count nothing", async () => {
    const key = await createKey(url, "--daily-limit", "5");
    expect(await status(servers[0]!, key)).toBe(200);
    const sql = new SQL(url, { max: 1 });
    const holder = await sql.reserve();
    try {
      await holder`BEGIN`;
      await holder`LOCK TABLE usage_counters IN ACCESS EXCLUSIVE MODE`;
      const answers = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          const started = performance.now();
          const res = await generate(servers[i % 3]!, key, target, {}, AbortSignal.timeout(10_000));
          const body = (await res.json()) as { message?: string };
          return { status: res.status, message: body.message, ms: performance.now() - started };
        }),
      );
      for (const answer of answers) {
        expect(answer).toMatchObject({ status: 503, message: UNREACHABLE });
        expect(answer.ms).toBeLessThan(2_500);
      }
    } finally {
      await holder`ROLLBACK`;
      holder.release();
      await sql.close();
    }
    await Bun.sleep(500);
    // 1 admitted before, 0 during: 4 left.
    const after: number[] = [];
    for (let i = 0; i < 5; i++) after.push(await status(servers[i % 3]!, key));
    expect(after).toEqual([200, 200, 200, 200, 429]);
  }, 30_000);

  test("the password is nowhere in /swagger/json", async () => {
    for (const server of servers) expect(await (await fetch(`${server.url}/swagger/json`)).text()).not.toContain(PASSWORD);
  });
});

describe.skipIf(!postgres)("an unreachable server at start", () => {
  test("keys list: exit 1 at once with one line naming the URL without its password", async () => {
    stopServer();
    try {
      const started = performance.now();
      const { stdout, stderr, code } = await runBinary(["keys", "list", "--db", url]);
      expect(code).toBe(1);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(stdout).toBe("");
      expect(stderr).not.toContain(PASSWORD);
      const lines = stderr.split("\n").filter((line) => line !== "");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`genapi: cannot open database ${url.replace(`:${PASSWORD}@`, ":***@")}: `);
    } finally {
      startServer();
    }
  });

  test("serve: retries for 30 s, then exit 1 with one line", async () => {
    stopServer();
    try {
      const { stdout, stderr, code } = await runBinary(["serve", "--host", "127.0.0.1", "--port", "0", "--db", url]);
      expect(code).toBe(1);
      expect(stdout + stderr).not.toContain(PASSWORD);
      const lines = stderr.split("\n").filter((line) => line !== "");
      expect(lines.at(-1)).toStartWith(`genapi: cannot open database ${url.replace(`:${PASSWORD}@`, ":***@")}: `);
      expect(lines).toHaveLength(1);
    } finally {
      startServer();
    }
  }, 45_000);

  test("serve: a server back within the 30 s is used", async () => {
    stopServer();
    const starting = startBinary({ dbPath: url });
    await Bun.sleep(2_000);
    startServer();
    const server = await starting.catch((error) => error as Error);
    // startBinary gives up after 10 s; the server came back after 2.
    expect(server).not.toBeInstanceOf(Error);
    const running = server as RunningBinary;
    expect((await fetch(`${running.url}/readyz`)).status).toBe(200);
    expect(await running.stop()).toBe(0);
  }, 30_000);
});
