// The SQLite store on a bad day, through the compiled executable: another process holding the write
// lock, a read-only or corrupted file, and --db values that cannot be opened.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, openSync, writeFileSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { createKey, ensureBinary, generate, runBinary, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { needs } from "../support/requires.ts";
import { serveSite, type Site } from "../support/site.ts";

const BUSY = "Service temporarily unavailable: the database is busy.";
// Two tests run genapi as a user that file modes hold back: as root (CI), `nobody` through runuser;
// otherwise the tests' own user, which is one already.
const isRoot = process.getuid?.() === 0;
const unprivileged = isRoot ? ["runuser", "-u", "nobody", "--"] : [];
const canRunUnprivileged = !isRoot || needs(import.meta.path, "runuser");

let site: Site;
beforeAll(async () => {
  site = await serveSite({ "/": "<!doctype html><title>home</title><a href='/a'>a</a>", "/a": "<!doctype html><title>a</title>" });
});
afterAll(() => site.stop());

async function timed(work: Promise<Response>): Promise<{ res: Response; ms: number }> {
  const started = performance.now();
  const res = await work;
  await res.arrayBuffer();
  return { res, ms: performance.now() - started };
}

describe("another process holds the SQLite write lock", () => {
  let server: RunningBinary;
  let key: string;
  let dbPath: string;
  beforeAll(async () => {
    dbPath = join(tempDir(), "genapi.db");
    key = await createKey(dbPath, "--daily-limit", "100");
    server = await startBinary({ dbPath, args: ["--allow-private-targets"] });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  test("open endpoints answer at once, authenticated requests 503 with Retry-After, and counts stay exact", async () => {
    const before = await generate(server, key, `${site.url}/`);
    expect(before.status).toBe(200);

    const holder = new Database(dbPath);
    holder.exec("BEGIN IMMEDIATE");
    try {
      // Ten authenticated requests at once: with a blocking busy wait they used to stall everything.
      const crawls = Array.from({ length: 10 }, () => timed(generate(server, key, `${site.url}/`)));
      await Bun.sleep(100);
      const health = await timed(fetch(`${server.url}/healthz`));
      const password = await timed(fetch(`${server.url}/api.php?length=20`));
      const ready = await timed(fetch(`${server.url}/readyz`));
      expect(health.res.status).toBe(200);
      expect(health.ms).toBeLessThan(500);
      expect(password.res.status).toBe(200);
      expect(password.ms).toBeLessThan(500);
      expect(ready.res.status).toBe(503);
      for (const { res, ms } of await Promise.all(crawls)) {
        expect(res.status).toBe(503);
        expect(ms).toBeLessThan(3000);
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(Number(res.headers.get("retry-after"))).toBeLessThanOrEqual(2);
      }
      const refused = await generate(server, key, `${site.url}/`);
      expect(await refused.json()).toEqual({ success: false, message: BUSY });
    } finally {
      holder.exec("ROLLBACK");
      holder.close();
    }

    const after = await generate(server, key, `${site.url}/`);
    expect(after.status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    // Two 200s, and the 503s were never counted.
    const counter = new Database(dbPath, { readonly: true });
    const rows = counter.query<{ count: number }, []>("SELECT count FROM usage_counters").all();
    counter.close();
    expect(rows.map((r) => r.count)).toEqual([2]);
    expect(after.headers.get("x-ratelimit-remaining")).toBe("98");
  }, 20_000);
});

/** Starts `genapi serve` as an unprivileged user: `nobody` when the tests run as root (CI), else their own. */
async function startUnprivileged(dbPath: string): Promise<RunningBinary> {
  return startBinary({ dbPath, wrapper: [...unprivileged, await unprivilegedBinary()] });
}

let unprivilegedCopy: string | undefined;
/**
 * The executable where `nobody` may run it: a copy in a directory of its own that anyone may enter
 * (the checkout may sit under a directory only root can, as a clone in a mktemp directory does).
 */
async function unprivilegedBinary(): Promise<string> {
  if (unprivilegedCopy !== undefined) return unprivilegedCopy;
  const dir = tempDir("genapi-nobody-");
  chmodSync(dir, 0o755);
  const copy = join(dir, "genapi");
  copyFileSync(await ensureBinary(), copy);
  chmodSync(copy, 0o755);
  unprivilegedCopy = copy;
  return copy;
}

/**
 * Requests that need the database answer 503 naming the problem, with Retry-After and no stack on
 * stderr: only one line each from the job runner (it cannot claim jobs, however often it polls) and
 * the retention sweep;
 * /api.php, which needs none, still answers.
 */
async function expectStoreRefusal(server: RunningBinary, key: string, message: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const res = await generate(server, key, `${site.url}/`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("2");
    expect(await res.json()).toEqual({ success: false, message });
  }
  expect((await fetch(`${server.url}/api.php`)).status).toBe(200);
  await Bun.sleep(1_500); // the runner polls every second
  const lines = server.stderr().split("\n").filter(Boolean);
  expect(lines).toContain(`genapi: job claim failed: ${message}`);
  // Background work (job claims, retention, the site scheduler) tells of the failing store once each.
  const background = [`genapi: job claim failed: ${message}`, `genapi: job retention: ${message}`, `genapi: site scheduler: ${message}`];
  expect(lines.filter((line) => !background.includes(line))).toEqual([]);
  expect(new Set(lines).size).toBe(lines.length);
}

describe("/readyz and requests tell whether the database takes writes", () => {
  test.skipIf(!canRunUnprivileged)("a read-only database file (server not root): /readyz 503, /healthz 200", async () => {
    const dir = tempDir();
    chmodSync(dir, 0o777);
    const dbPath = join(dir, "genapi.db");
    const key = await createKey(dbPath);
    chmodSync(dbPath, 0o444);
    const server = await startUnprivileged(dbPath);
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: "database unavailable" });
      await expectStoreRefusal(server, key, "Service temporarily unavailable: the database is read-only.");
      const binary = await unprivilegedBinary();
      const cli = Bun.spawnSync([...unprivileged, binary, "keys", "create", "--name", "more", "--db", dbPath]);
      expect(cli.exitCode).toBe(1);
      expect(cli.stdout.toString()).toBe("");
      expect(cli.stderr.toString()).toBe(`genapi: cannot use database ${dbPath}: it is read-only\n`);
    } finally {
      await server.stop();
    }
  });

  test("a corrupted file: /readyz 503", async () => {
    const dbPath = join(tempDir(), "genapi.db");
    const key = await createKey(dbPath);
    // Every page but the schema's (the header page and those sqlite_schema spills to), so that the
    // schema and its version stay readable and the server starts.
    const file = new Database(dbPath, { readonly: true });
    const schema = new Set(
      file
        .query<{ pageno: number }, []>(`SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'`)
        .all()
        .map((r) => r.pageno),
    );
    const pages = file.query<{ page_count: number }, []>("PRAGMA page_count").get()!.page_count;
    const pageSize = file.query<{ page_size: number }, []>("PRAGMA page_size").get()!.page_size;
    file.close();
    const fd = openSync(dbPath, "r+");
    for (let page = 1; page <= pages; page++) {
      if (!schema.has(page)) writeSync(fd, new Uint8Array(pageSize).fill(0xa5), 0, pageSize, (page - 1) * pageSize);
    }
    closeSync(fd);
    const server = await startBinary({ dbPath });
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      await expectStoreRefusal(server, key, "Service temporarily unavailable: the database is failing.");
    } finally {
      await server.stop();
    }
  });
});

describe("a --db that cannot be opened: one stderr line naming it, exit 1", () => {
  const root = tempDir();
  const aFile = join(root, "plain-file");
  writeFileSync(aFile, "x");
  const notDb = join(root, "not-a-db.db");
  writeFileSync(notDb, "this is not a SQLite database, just text that is long enough to have a header ".repeat(200));
  const aDir = join(root, "a-directory");
  mkdirSync(aDir);
  const cases: [string, string, RegExp][] = [
    ["a directory", aDir, /unable to open|directory/],
    ["a parent that is a file", join(aFile, "genapi.db"), /not a directory/],
    ["a file that is not a database", notDb, /not a SQLite database/],
  ];
  for (const [what, path, reason] of cases) {
    for (const command of [
      ["serve", "--port", "0", "--host", "127.0.0.1"],
      ["keys", "list"],
    ]) {
      test(`${what}: genapi ${command[0]}${command[1] === "list" ? " list" : ""}`, async () => {
        const { stdout, stderr, code } = await runBinary([...command, "--db", path]);
        expect(code).toBe(1);
        expect(stdout).toBe("");
        const lines = stderr.split("\n").filter((line) => line !== "");
        expect(lines).toHaveLength(1);
        expect(lines[0]).toStartWith(`genapi: cannot open database ${path}: `);
        expect(lines[0]).toMatch(reason);
      });
    }
  }

  // A typo in --db must not create a directory and an empty database that no server reads (a key
  // created there fails with 401 everywhere). A missing file in an existing directory is created.
  for (const command of [
    ["serve", "--port", "0", "--host", "127.0.0.1"],
    ["keys", "create", "--name", "x"],
    ["keys", "list"],
  ]) {
    test(`a directory that does not exist: genapi ${command.slice(0, 2).join(" ")} creates nothing`, async () => {
      const missing = join(tempDir(), "typo");
      const path = join(missing, "x.db");
      const { stdout, stderr, code } = await runBinary([...command, "--db", path]);
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(stderr).toBe(`genapi: cannot open database ${path}: its directory does not exist\n`);
      expect(existsSync(missing)).toBe(false);
    });
  }

  test.skipIf(!canRunUnprivileged)("a read-only directory, as an unprivileged user: serve and keys create", async () => {
    const dir = tempDir();
    chmodSync(dir, 0o555);
    const binary = await unprivilegedBinary();
    for (const command of [
      ["serve", "--port", "0"],
      ["keys", "create", "--name", "x"],
    ]) {
      const proc = Bun.spawn([...unprivileged, binary, ...command, "--db", join(dir, "genapi.db")], {
        cwd: "/",
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      expect(code).toBe(1);
      const lines = stderr.split("\n").filter((line) => line !== "");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`genapi: cannot open database ${join(dir, "genapi.db")}: `);
    }
  });
});
