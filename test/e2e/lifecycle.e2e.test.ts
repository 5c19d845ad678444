// The compiled executable's life: it ignores the .env and bunfig.toml of the directory it starts in,
// serves as the process it was started as (started again in place without the JIT's top tier,
// src/commands/ftl.ts), and stops on SIGINT/SIGTERM with exit 0, leaving a cleanly closed database.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, FTL_CASES, procEntries, runBinary, startBinary, tempDir } from "../support/binary.ts";

// A site on loopback that the crawler would index if the hostile .env's
// GENAPI_ALLOW_PRIVATE_TARGETS=1 were read.
const site = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response("<html><body>hello</body></html>", { headers: { "content-type": "text/html" } }),
});
afterAll(() => site.stop(true));

/** A directory whose .env and bunfig.toml would change the service if a Bun runtime read them. */
function hostileDir(): { dir: string; marker: string; dotenvDb: string } {
  const dir = tempDir("genapi-hostile-");
  // A database path of its own, so a run that wrongly read .env leaves nothing outside the temp dir.
  const dotenvDb = join(dir, "from-dotenv", "x.db");
  writeFileSync(
    join(dir, ".env"),
    ["GENAPI_PORT=1", `GENAPI_DB=${dotenvDb}`, "GENAPI_ALLOW_PRIVATE_TARGETS=1", "GENAPI_FREE_DAILY_LIMIT=1", ""].join("\n"),
  );
  writeFileSync(join(dir, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
  writeFileSync(join(dir, "preload.ts"), 'await Bun.write(import.meta.dir + "/marker", "preloaded");\n');
  return { dir, marker: join(dir, "marker"), dotenvDb };
}

describe("the executable in a directory with a hostile .env and bunfig.toml", () => {
  test("the fixture is effective: plain Bun reads both", () => {
    const { dir, marker, dotenvDb } = hostileDir();
    const proc = Bun.spawnSync([process.execPath, "-e", "console.log(process.env.GENAPI_DB)"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(proc.stdout.toString()).toBe(`${dotenvDb}\n`);
    expect(existsSync(marker)).toBe(true);
  });

  test("genapi reads neither: flags, its own defaults and the given database hold", async () => {
    const { dir, marker, dotenvDb } = hostileDir();
    // No --db: the default ./genapi.db, not the .env's database.
    const created = await runBinary(["keys", "create", "--name", "hostile"], { cwd: dir });
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(existsSync(join(dir, "genapi.db"))).toBe(true);

    const server = await startBinary({ cwd: dir, dbPath: join(dir, "genapi.db") });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(new URL(server.url).port).not.toBe("1");
      expect(JSON.parse(server.stdout[0]!).db).toBe(join(dir, "genapi.db"));
      const response = await fetch(`${server.url}/api/generate`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ url: `http://127.0.0.1:${site.port}/` }),
      });
      const body = (await response.json()) as { success: boolean; message: string };
      // The key from ./genapi.db authenticates; private targets stay refused; the free quota is 5.
      expect(response.status).toBe(400);
      expect(body.success).toBe(false);
      expect(body.message).toContain("not allowed");
      expect(response.headers.get("x-ratelimit-limit")).toBe("5");
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(dotenvDb)).toBe(false);
  });
});

describe("the serving process", () => {
  test("starts itself again in place without JavaScriptCore's FTL tier: the same process id and arguments, BUN_JSC_useFTLJIT=0; a value the user set is kept", async () => {
    const binary = await ensureBinary();
    for (const [given, expected] of FTL_CASES) {
      const env: Record<string, string> = { GENAPI_TEST_MARK: "kept" };
      if (given !== undefined) env.BUN_JSC_useFTLJIT = given;
      const server = await startBinary({ env });
      try {
        // Listening: the process that answers is the one the test started, as it now runs.
        expect((await fetch(`${server.url}/api.php`)).status).toBe(200);
        const pid = server.proc.pid;
        expect(procEntries(pid, "cmdline")).toEqual([binary, "serve", "--host", "127.0.0.1", "--port", "0", "--db", server.dbPath]);
        const environ = procEntries(pid, "environ");
        expect(environ.filter((entry) => entry.startsWith("BUN_JSC_"))).toEqual([expected]);
        expect(environ).toContain("GENAPI_TEST_MARK=kept");
      } finally {
        expect(await server.stop()).toBe(0);
      }
    }
  });
});

describe("signals on an idle server", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    test(`${signal}: exit 0 within 2 s and the database closed cleanly`, async () => {
      const dir = tempDir("genapi-signal-");
      const dbPath = join(dir, "genapi.db");
      const key = (await runBinary(["keys", "create", "--name", "signal", "--db", dbPath])).stdout.trim();
      const server = await startBinary({ dbPath });
      // One authenticated request writes (last_used_at, the usage counter) while the server runs.
      const response = await fetch(`${server.url}/api/generate`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ url: "http://localhost/" }),
      });
      expect(response.status).toBe(400);
      expect(existsSync(`${dbPath}-wal`)).toBe(true);

      server.proc.kill(signal);
      const code = await Promise.race([server.proc.exited, Bun.sleep(2000).then(() => "still running after 2 s")]);
      if (code !== 0) server.proc.kill("SIGKILL");
      expect(code).toBe(0);
      expect(server.stderr()).toContain(`${signal} received`);

      // The last connection's close checkpoints the WAL into the database and removes it.
      expect(existsSync(`${dbPath}-wal`)).toBe(false);
      const db = new Database(dbPath, { readonly: true });
      try {
        expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      } finally {
        db.close();
      }
      const listed = await runBinary(["keys", "list", "--json", "--db", dbPath]);
      const [record] = JSON.parse(listed.stdout) as { name: string; last_used_at: string | null }[];
      expect(record!.name).toBe("signal");
      expect(record!.last_used_at).not.toBeNull();
      rmSync(dir, { recursive: true, force: true });
    });
  }
});
