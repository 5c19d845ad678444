// Crawling protected sites through the compiled executable, against loopback sites that
// record every request with its headers:
// - sites behind basic auth, a header and a cookie are crawled completely with their credentials
//   and answer 401 without, by /api/generate, by a job and by `genapi crawl`;
// - a redirect of the start URL to another origin, a redirect hop and links to it: that origin's
//   request log holds no credential header (raw mode; rendering is not built yet);
// - planted secrets appear nowhere: serve's stdout and stderr, every API answer, the job's events,
//   its callback, /metrics, a dump of SQLite's tables and a `pg_dump` taken while the job runs (the sealed
//   value only) and after it ends (nothing), the database files' bytes; `genapi crawl`'s output;
// - two instances on one PostgreSQL sharing --secret-key-file: a job started on one and continued
//   on the other after SIGTERM finishes with its credentials; without the flag, 400;
// - every bad shape answers the contract's 400 before admission (nothing counted);
// - the key file: made beside SQLite's database on first need, mode 0600; a bad one stops serve.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createKey, ensureBinary, runBinary, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { basicHeader, credentialHeadersOf, type ProtectedSite, serveProtectedSite } from "../support/protected-site.ts";
import { createDatabase, stopCluster } from "../support/postgres.ts";
import { needs, postgresBin } from "../support/requires.ts";
import { call, createJob, json, locs, readEventStream, waitForJob, type ServerSentEvent } from "../jobs/support.ts";
import { waitFor } from "../support/wait.ts";

afterAll(() => stopCluster());

// The planted secrets: one per kind of credential, and the basic header's encoded form.
const USER = "preview";
const PASSWORD = "Planted-Pa55word-7b2d";
const TOKEN = "Planted-T0ken-41f0";
const COOKIE = "Planted-C00kie-93ac";
const NEEDLES = [PASSWORD, TOKEN, COOKIE, Buffer.from(`${USER}:${PASSWORD}`).toString("base64")];
const AUTH = { basic: { username: USER, password: PASSWORD }, headers: { "X-Preview-Token": TOKEN }, cookies: { session: COOKIE } };
const REDACTED_AUTH = { basic: { username: USER, password: "***" }, headers: { "X-Preview-Token": "***" }, cookies: { session: "***" } };
const SHAPE = "auth must be an object with basic, headers or cookies.";

/** The planted secrets `text` holds (none, we expect), by where it was seen. */
function leaks(where: string, text: string): string[] {
  return NEEDLES.filter((needle) => text.includes(needle)).map((needle) => `${where}: ${needle}`);
}

const hasAll = (req: Request) =>
  req.headers.get("authorization") === basicHeader(USER, PASSWORD) &&
  req.headers.get("x-preview-token") === TOKEN &&
  req.headers.get("cookie") === `session=${COOKIE}`;

/** A request that carries any credential header, or a planted value anywhere. */
const credentialed = (site: ProtectedSite) =>
  site.requests.filter(
    (r) => Object.keys(credentialHeadersOf(r, ["x-preview-token"])).length > 0 || leaks("", JSON.stringify(r)).length > 0,
  );

const started: RunningBinary[] = [];
const sites: { stop: () => Promise<void> }[] = [];
afterAll(async () => {
  for (const server of started) if (server.proc.exitCode === null) server.proc.kill("SIGKILL");
  await Promise.all(sites.map((s) => s.stop()));
});
async function start(store: string, args: string[] = []) {
  const server = await startBinary({ dbPath: store, args: ["--allow-private-targets", ...args] });
  started.push(server);
  return server;
}
function site(options: Parameters<typeof serveProtectedSite>[0]) {
  const s = serveProtectedSite(options);
  sites.push(s);
  return s;
}

/** Every answer the API gave in a test, as text, for the leak search. */
class Answers {
  readonly texts: string[] = [];
  async read(res: Response): Promise<any> {
    const text = await res.text();
    this.texts.push(`${res.status} ${JSON.stringify([...res.headers])} ${text}`);
    return text === "" ? null : JSON.parse(text);
  }
  leaks(): string[] {
    return this.texts.flatMap((text, i) => leaks(`answer ${i}`, text));
  }
}

/** A loopback server that records the callbacks it receives. */
function hookServer() {
  const bodies: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      bodies.push(`${JSON.stringify([...req.headers])} ${await req.text()}`);
      return new Response("ok");
    },
  });
  sites.push({ stop: () => server.stop(true) });
  return { url: `http://127.0.0.1:${server.port}/hook`, bodies };
}

function generate(server: RunningBinary, key: string, body: Record<string, unknown>) {
  return fetch(`${server.url}/api/generate`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify(body),
  });
}

/**
 * Every row of every table of the live database (WAL included), one line a table, as `sqlite3 FILE
 * .dump` shows them but read through bun:sqlite (no sqlite3 program needed); a blob as its bytes.
 */
function sqliteDump(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    const asText = (_key: string, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString("latin1") : value);
    return tables.map(({ name }) => `${name}: ${JSON.stringify(db.query(`SELECT * FROM "${name}"`).all(), asText)}`).join("\n");
  } finally {
    db.close();
  }
}

/** The database's files as bytes (main file, WAL, shared memory): the secrets never reach the disk in clear. */
function sqliteBytes(path: string): string {
  const dir = dirname(path);
  return readdirSync(dir)
    .filter((name) => name.startsWith("genapi.db"))
    .map((name) => readFileSync(join(dir, name)).toString("latin1"))
    .join("\n");
}

function pgDump(url: string): string {
  const proc = Bun.spawnSync([join(postgresBin()!, "pg_dump"), "--data-only", "--no-owner", url], { stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`pg_dump: ${proc.stderr.toString()}`);
  return proc.stdout.toString();
}

/** The sealed values a dump holds (`v1.<nonce>.<ciphertext>`). */
const sealedIn = (dump: string) => [...dump.matchAll(/v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{20,}/g)].map((m) => m[0]);

/** Reads the job's event stream to its end (it ends after `done`). */
async function allEvents(server: RunningBinary, key: string, id: string): Promise<{ events: ServerSentEvent[]; text: string }> {
  const res = await call(server, key, `/api/jobs/${id}/events`);
  const [a, b] = res.body!.tee();
  const events: ServerSentEvent[] = [];
  const [text] = await Promise.all([new Response(a).text(), readEventStream(b, (e) => events.push(e))]);
  return { events, text };
}

describe("auth on SQLite (no --secret-key-file: genapi.secret beside the database)", () => {
  test("/api/generate: sites behind basic auth, a header and a cookie are crawled completely with them, 401 without; another origin gets nothing", async () => {
    const store = join(tempDir(), "genapi.db");
    const key = await createKey(store, "--daily-limit", "100");
    const server = await start(store);
    const answers = new Answers();
    const modes = [
      { auth: { basic: AUTH.basic }, ok: (r: Request) => r.headers.get("authorization") === basicHeader(USER, PASSWORD) },
      { auth: { headers: AUTH.headers }, ok: (r: Request) => r.headers.get("x-preview-token") === TOKEN },
      { auth: { cookies: AUTH.cookies }, ok: (r: Request) => r.headers.get("cookie") === `session=${COOKIE}` },
    ];
    for (const mode of modes) {
      const protectedSite = site({ size: 25, authorized: mode.ok });
      const ok = await answers.read(
        await generate(server, key, { url: `${protectedSite.url}/`, auth: mode.auth, sitemaps_from_robots: true }),
      );
      expect(ok.success).toBe(true);
      expect(locs(ok.data.sitemap)).toEqual(protectedSite.expected);
      expect(ok.data.excluded.http_error).toBe(0);
      const without = await generate(server, key, { url: `${protectedSite.url}/` });
      expect(without.status).toBe(502);
      expect(await answers.read(without)).toEqual({ success: false, message: `Could not crawl ${protectedSite.url}/: HTTP 401` });
    }

    // Another origin: the start URL redirects there (the crawl goes on there without credentials), and
    // the protected site links and redirects there (never fetched: out of scope).
    const other = site({ size: 4 });
    const protectedSite = site({
      size: 6,
      authorized: hasAll,
      links: (i) => (i === 0 ? [`${other.url}/p1`, `http://localhost:${other.port}/p2`] : []),
      routes: { "/go": () => Response.redirect(`${other.url}/`, 302), "/p5": () => Response.redirect(`${other.url}/p3`, 301) },
    });
    const crawled = await answers.read(await generate(server, key, { url: `${protectedSite.url}/`, auth: AUTH }));
    expect(locs(crawled.data.sitemap)).toEqual(protectedSite.expected.filter((u) => !u.endsWith("/p5")));
    expect(other.requests).toEqual([]);
    const moved = await answers.read(await generate(server, key, { url: `${protectedSite.url}/go`, auth: AUTH }));
    expect(moved.data.url).toBe(`${other.url}/`);
    expect(locs(moved.data.sitemap)).toEqual(other.expected);
    expect(other.requests.length).toBeGreaterThan(4);
    expect(credentialed(other)).toEqual([]);
    expect(protectedSite.requests.every((r) => hasAll(new Request("http://x/", { headers: r.headers })))).toBe(true);

    // Nothing asked for a key file: none was made.
    expect(existsSync(join(dirname(store), "genapi.secret"))).toBe(false);
    answers.texts.push(await (await fetch(`${server.url}/metrics`)).text());
    expect(await server.stop()).toBe(0);
    expect([
      ...answers.leaks(),
      ...leaks("stdout", server.stdout.join("\n")),
      ...leaks("stderr", server.stderr()),
      ...leaks("database", sqliteDump(store)),
      ...leaks("database files", sqliteBytes(store)),
    ]).toEqual([]);
  }, 60_000);

  test("a job: sealed while it runs, redacted in every answer, event and callback, erased when it ends; the secret appears nowhere", async () => {
    const store = join(tempDir(), "genapi.db");
    const key = await createKey(store, "--daily-limit", "100");
    const server = await start(store);
    const answers = new Answers();
    const hook = hookServer();
    const protectedSite = site({ size: 40, fanout: 4, authorized: hasAll, delayMs: 100 });

    const created = await createJob(server, key, {
      url: `${protectedSite.url}/`,
      auth: AUTH,
      max_concurrency: 1,
      sitemaps_from_robots: true,
      callback_url: hook.url,
    });
    expect(created.status).toBe(202);
    const body = await answers.read(created);
    const id = body.data.id;
    expect(body.data.options.auth).toEqual(REDACTED_AUTH);
    // The key file is made now, on first need, for the owner only.
    const keyFile = join(dirname(store), "genapi.secret");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, "utf8")).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);

    const streaming = allEvents(server, key, id);
    const running = await waitForJob(server, key, id, (job) => job.status === "running" && job.progress.pages_crawled >= 5);
    expect(running.options.auth).toEqual(REDACTED_AUTH);
    // While it runs the store holds the credentials sealed, never in clear.
    const during = sqliteDump(store);
    expect(sealedIn(during)).toHaveLength(1);
    expect(leaks("dump while running", during)).toEqual([]);
    expect(leaks("database files while running", sqliteBytes(store))).toEqual([]);
    answers.texts.push(await (await call(server, key, `/api/jobs/${id}`)).text());
    answers.texts.push(await (await call(server, key, "/api/jobs")).text());
    answers.texts.push(await (await fetch(`${server.url}/metrics`)).text());

    const job = await waitForJob(server, key, id);
    expect(job).toMatchObject({ status: "succeeded", result: { url_count: 40, truncated: false } });
    expect(job.result.excluded.http_error).toBe(0);
    expect(job.options.auth).toEqual(REDACTED_AUTH);
    expect(locs(await (await call(server, key, `/api/jobs/${id}/sitemap.xml`)).text())).toEqual(protectedSite.expected);
    expect(protectedSite.requests.every((r) => hasAll(new Request("http://x/", { headers: r.headers })))).toBe(true);

    const { events, text } = await streaming;
    expect(events.at(-1)!.type).toBe("done");
    for (const event of events) expect(JSON.parse(event.data).options.auth).toEqual(REDACTED_AUTH);
    await waitFor(() => hook.bodies.length === 1, 20_000, "the callback");
    expect(hook.bodies[0]).toContain('"X-Preview-Token":"***"');

    // Ended: nothing of the credentials is left in the store, sealed or not.
    const after = sqliteDump(store);
    expect(sealedIn(after)).toEqual([]);
    answers.texts.push(await (await call(server, key, `/api/jobs/${id}`)).text());
    answers.texts.push(await (await call(server, key, "/api/jobs")).text());
    answers.texts.push(await (await fetch(`${server.url}/metrics`)).text());
    answers.texts.push(await (await call(server, key, `/api/jobs/${id}`, { method: "DELETE" })).text());
    expect(await server.stop()).toBe(0);
    expect([
      ...answers.leaks(),
      ...leaks("events", text),
      ...leaks("callback", hook.bodies.join("\n")),
      ...leaks("dump after", after),
      ...leaks("database files", sqliteBytes(store)),
      ...leaks("stdout", server.stdout.join("\n")),
      ...leaks("stderr", server.stderr()),
    ]).toEqual([]);
  }, 90_000);

  test("a cancelled job: erased at once, running or queued", async () => {
    const store = join(tempDir(), "genapi.db");
    const key = await createKey(store, "--daily-limit", "100");
    const server = await start(store, ["--max-jobs", "1"]);
    const slow = site({ size: 200, fanout: 4, authorized: hasAll, delayMs: 100 });
    const running = (await json(await createJob(server, key, { url: `${slow.url}/`, auth: AUTH, max_concurrency: 1 }))).data.id;
    const queued = (await json(await createJob(server, key, { url: `${slow.url}/`, auth: AUTH }))).data.id;
    await waitForJob(server, key, running, (job) => job.status === "running" && job.progress.pages_crawled >= 2);
    expect(sealedIn(sqliteDump(store))).toHaveLength(2);
    expect((await json(await call(server, key, `/api/jobs/${queued}`, { method: "DELETE" }))).message).toBe("Job cancelled.");
    expect((await json(await call(server, key, `/api/jobs/${running}`, { method: "DELETE" }))).message).toBe("Job cancelled.");
    expect(sealedIn(sqliteDump(store))).toEqual([]);
    expect((await waitForJob(server, key, running, (job) => job.result !== undefined || job.error !== undefined)).status).toBe("cancelled");
    expect(await server.stop()).toBe(0);
    expect([
      ...leaks("dump", sqliteDump(store)),
      ...leaks("stdout", server.stdout.join("\n")),
      ...leaks("stderr", server.stderr()),
    ]).toEqual([]);
  }, 60_000);

  test("every bad shape answers the contract's 400 before admission: nothing counted, no job, no key file", async () => {
    const store = join(tempDir(), "genapi.db");
    const key = await createKey(store, "--daily-limit", "3");
    const server = await start(store);
    const answers = new Answers();
    const url = "http://127.0.0.1:9/";
    const bad: [unknown, string][] = [
      [null, SHAPE],
      ["Basic x", SHAPE],
      [{}, SHAPE],
      [{ token: TOKEN }, SHAPE],
      [{ basic: { username: "a:b", password: PASSWORD } }, SHAPE],
      [{ basic: { username: USER } }, SHAPE],
      [{ headers: { "X-Preview-Token": `${TOKEN}\r\nX-Evil: 1` } }, SHAPE],
      [{ headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-${i}`, TOKEN])) }, SHAPE],
      [{ cookies: { session: `${COOKIE}; admin=1` } }, SHAPE],
      [{ cookies: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`c${i}`, COOKIE])) }, SHAPE],
      [{ cookies: { session: "x".repeat(4097) } }, SHAPE],
      [{ headers: { Host: TOKEN } }, "auth.headers: Host cannot be set."],
      [{ headers: { Cookie: COOKIE } }, "auth.headers: Cookie cannot be set."],
      [{ headers: { authorization: TOKEN } }, "auth.headers: authorization cannot be set."],
      [{ headers: { "Proxy-Authorization": TOKEN } }, "auth.headers: Proxy-Authorization cannot be set."],
      [{ headers: { "Transfer-Encoding": "chunked" } }, "auth.headers: Transfer-Encoding cannot be set."],
    ];
    for (const [auth, message] of bad) {
      for (const res of [await generate(server, key, { url, auth }), await createJob(server, key, { url, auth })]) {
        expect(res.status).toBe(400);
        expect(res.headers.get("x-ratelimit-remaining")).toBe("3");
        expect(await answers.read(res)).toEqual({ success: false, message });
      }
    }
    expect((await json(await call(server, key, "/api/jobs"))).data.jobs).toEqual([]);
    expect(existsSync(join(dirname(store), "genapi.secret"))).toBe(false);
    expect(await server.stop()).toBe(0);
    expect([...answers.leaks(), ...leaks("stdout", server.stdout.join("\n")), ...leaks("stderr", server.stderr())]).toEqual([]);
  }, 60_000);

  test("the key file: a bad one stops serve with one line (exit 1), never its content; an empty flag is a usage error (exit 2)", async () => {
    const dir = tempDir();
    const file = join(dir, "secret");
    writeFileSync(file, `${PASSWORD}\n`);
    const bad = await runBinary(["serve", "--port", "0", "--db", join(dir, "genapi.db"), "--secret-key-file", file]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      `genapi: the secret key file ${file} must hold 32 random bytes in base64 (openssl rand -base64 32 > ${file})\n`,
    );
    expect(existsSync(join(dir, "genapi.db"))).toBe(false);
    const missing = await runBinary(["serve", "--port", "0", "--db", join(dir, "genapi.db")], {
      env: { GENAPI_SECRET_KEY_FILE: join(dir, "nope") },
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`genapi: cannot read the secret key file ${join(dir, "nope")}: no such file\n`);
    const empty = await runBinary(["serve", "--port", "0", "--db", join(dir, "genapi.db"), "--secret-key-file", ""]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe("genapi: --secret-key-file must not be empty\n");
  }, 30_000);
});

describe.skipIf(!needs(import.meta.path, "postgresql"))("auth on PostgreSQL", () => {
  test("two instances sharing --secret-key-file: a job started on one, continued on the other after SIGTERM, finishes with its credentials", async () => {
    const store = await createDatabase();
    const key = await createKey(store, "--daily-limit", "100");
    const keyFile = join(tempDir(), "genapi.key");
    writeFileSync(keyFile, `${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}\n`, { mode: 0o600 });
    const flag = ["--secret-key-file", keyFile];
    const size = 120;
    const protectedSite = site({ size, fanout: 4, authorized: hasAll, delayMs: 60 });
    const answers = new Answers();
    const a = await start(store, flag);
    const id = (await answers.read(await createJob(a, key, { url: `${protectedSite.url}/`, auth: AUTH, max_concurrency: 2 }))).data.id;
    await waitForJob(a, key, id, (job) => job.status === "running" && job.progress.pages_crawled >= 20);

    // While it runs: the sealed value only.
    const during = pgDump(store);
    expect(sealedIn(during)).toHaveLength(1);
    expect(leaks("pg_dump while running", during)).toEqual([]);

    expect(await a.stop("SIGTERM")).toBe(0);
    const handedBack = protectedSite.requests.length;
    expect(handedBack).toBeLessThan(size);
    const b = await start(store, flag);
    const job = await waitForJob(b, key, id);
    expect(job).toMatchObject({ status: "succeeded", result: { url_count: size, truncated: false } });
    expect(job.result.excluded.http_error).toBe(0);
    expect(job.options.auth).toEqual(REDACTED_AUTH);
    // The second instance crawled too, with the credentials it opened.
    expect(protectedSite.requests.length).toBeGreaterThan(handedBack);
    expect(protectedSite.requests.every((r) => hasAll(new Request("http://x/", { headers: r.headers })))).toBe(true);
    expect(locs(await (await call(b, key, `/api/jobs/${id}/sitemap.xml`)).text())).toEqual(protectedSite.expected);

    const after = pgDump(store);
    expect(sealedIn(after)).toEqual([]);
    answers.texts.push(await (await call(b, key, `/api/jobs/${id}`)).text());
    expect(await b.stop()).toBe(0);
    expect([
      ...answers.leaks(),
      ...leaks("pg_dump after", after),
      ...[a, b].flatMap((s, i) => [...leaks(`stdout ${i}`, s.stdout.join("\n")), ...leaks(`stderr ${i}`, s.stderr())]),
    ]).toEqual([]);
  }, 120_000);

  test("without --secret-key-file: a job with auth answers 400 before admission; /api/generate keeps them for the request only", async () => {
    const store = await createDatabase();
    const key = await createKey(store, "--daily-limit", "5");
    const server = await start(store);
    const protectedSite = site({ size: 5, authorized: hasAll });
    const refused = await createJob(server, key, { url: `${protectedSite.url}/`, auth: AUTH });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("5");
    expect(await json(refused)).toEqual({ success: false, message: "auth needs --secret-key-file on this server." });
    // A bad shape is still the shape's message.
    expect(await json(await createJob(server, key, { url: `${protectedSite.url}/`, auth: {} }))).toEqual({
      success: false,
      message: SHAPE,
    });
    const crawled = await generate(server, key, { url: `${protectedSite.url}/`, auth: AUTH });
    expect(crawled.status).toBe(200);
    expect(locs((await json(crawled)).data.sitemap)).toEqual(protectedSite.expected);
    expect(leaks("pg_dump", pgDump(store))).toEqual([]);
    expect(await server.stop()).toBe(0);
    expect([...leaks("stdout", server.stdout.join("\n")), ...leaks("stderr", server.stderr())]).toEqual([]);
  }, 60_000);
});

describe("genapi crawl with credentials", () => {
  const env = { GENAPI_AUTH_PASSWORD: PASSWORD };
  const flags = ["--auth-user", USER, "--header", `X-Preview-Token: ${TOKEN}`, "--cookie", `session=${COOKIE}`];

  test("--auth-user (password from GENAPI_AUTH_PASSWORD), --header, --cookie: crawled completely; without them exit 1 with HTTP 401", async () => {
    const protectedSite = site({ size: 30, authorized: hasAll });
    const ok = await runBinary(["crawl", `${protectedSite.url}/`, ...flags, "--sitemaps-from-robots"], { env });
    expect(ok.code).toBe(0);
    expect(locs(ok.stdout)).toEqual(protectedSite.expected);
    const json = await runBinary(["crawl", `${protectedSite.url}/`, ...flags, "--json"], { env });
    expect(JSON.parse(json.stderr).excluded.http_error).toBe(0);
    const without = await runBinary(["crawl", `${protectedSite.url}/`]);
    expect(without.code).toBe(1);
    expect(without.stderr).toBe(`Could not crawl ${protectedSite.url}/: HTTP 401\n`);
    // GENAPI_HEADERS and GENAPI_COOKIES keep values out of the command line too: one per line.
    const fromEnv = await runBinary(["crawl", `${protectedSite.url}/`, "--auth-user", USER], {
      env: { ...env, GENAPI_HEADERS: `X-Preview-Token: ${TOKEN}\n`, GENAPI_COOKIES: `session=${COOKIE}` },
    });
    expect(fromEnv.code).toBe(0);
    expect(locs(fromEnv.stdout)).toEqual(protectedSite.expected);
    expect([ok, json, without, fromEnv].flatMap((r, i) => [...leaks(`stdout ${i}`, r.stdout), ...leaks(`stderr ${i}`, r.stderr)])).toEqual(
      [],
    );
  }, 60_000);

  test("the password never shows in the process's command line", async () => {
    const binary = await ensureBinary();
    const slow = site({ size: 30, authorized: hasAll, delayMs: 50 });
    const proc = Bun.spawn([binary, "crawl", `${slow.url}/`, ...flags, "--max-concurrency", "1"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      cwd: tempDir(),
      stdout: "pipe",
      stderr: "pipe",
    });
    await waitFor(() => slow.requests.length >= 3, 20_000, "the crawl to start");
    const cmdline = readFileSync(`/proc/${proc.pid}/cmdline`, "latin1");
    expect(cmdline).toContain("--auth-user");
    expect(cmdline).not.toContain(PASSWORD);
    expect(await proc.exited).toBe(0);
  }, 60_000);

  test("no password variable and no terminal: exit 2 with what to do; bad flags: exit 2 naming the flag, never the value", async () => {
    const protectedSite = site({ size: 2, authorized: hasAll });
    const noPassword = await runBinary(["crawl", `${protectedSite.url}/`, "--auth-user", USER]);
    expect(noPassword.code).toBe(2);
    expect(noPassword.stderr).toBe(
      "genapi: --auth-user needs a password: set GENAPI_AUTH_PASSWORD, or run at a terminal to be asked for it\n",
    );
    const cases: [string[], string][] = [
      [["--header", `Host: ${TOKEN}`], "genapi: --header: Host cannot be set\n"],
      [["--header", `Authorization: Bearer ${TOKEN}`], "genapi: --header: Authorization cannot be set\n"],
      [["--header", TOKEN], "genapi: --header must be 'Name: value'\n"],
      [["--header", `: ${TOKEN}`], "genapi: --header must be 'Name: value'\n"],
      [["--header", `X-A: ${TOKEN}`, "--header", `x-a: ${TOKEN}`], "genapi: --header: x-a is given twice\n"],
      [["--cookie", COOKIE], "genapi: --cookie must be 'name=value'\n"],
      [
        ["--cookie", `session=${COOKIE}; admin=1`],
        `genapi: --cookie: a name must be an HTTP token and a value visible ASCII without ";" or spaces, at most 4096 characters each, at most 50 cookies\n`,
      ],
      [["--auth-user", "a:b"], `genapi: --auth-user: a user name of at most 4096 characters, without ":" or control characters\n`],
    ];
    for (const [args, message] of cases) {
      const run = await runBinary(["crawl", `${protectedSite.url}/`, ...args], { env });
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(message);
    }
    expect(protectedSite.requests).toEqual([]);
  }, 60_000);

  test.skipIf(!needs(import.meta.path, "script"))(
    "at a terminal: the password is asked for on stderr and never echoed",
    async () => {
      const binary = await ensureBinary();
      const protectedSite = site({ size: 10, authorized: hasAll });
      const out = join(tempDir(), "s.xml");
      const command = `'${binary}' crawl ${protectedSite.url}/ --auth-user ${USER} --header 'X-Preview-Token: ${TOKEN}' --cookie 'session=${COOKIE}' --output '${out}' --quiet`;
      // util-linux script(1) runs the command in a pseudo-terminal; what we write is typed into it,
      // with the terminal's own echo on (by default script turns it off when its input is a pipe).
      const proc = Bun.spawn(["script", "-qfec", command, "--echo", "always", "/dev/null"], {
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", TERM: "xterm" },
      });
      let screen = "";
      const reading = (async () => {
        for await (const chunk of proc.stdout.pipeThrough(new TextDecoderStream())) screen += chunk;
      })();
      // Typed only once the prompt shows: the terminal is in raw mode, no echo, by then.
      await waitFor(() => screen.includes(`Password for ${USER}: `), 20_000, "the prompt");
      proc.stdin.write(`${PASSWORD}\r`);
      await proc.stdin.flush();
      expect(await proc.exited).toBe(0);
      await reading;
      proc.stdin.end();
      expect(locs(readFileSync(out, "utf8"))).toEqual(protectedSite.expected);
      expect(screen.replace(command, "")).not.toContain(PASSWORD);
      expect(screen).toContain(`Password for ${USER}: `);
    },
    60_000,
  );
});
