// Every shell example of the README, run for real, in README order, against the compiled executable:
// each ```sh block (and each indented block) is either run here, with a check of what it printed or
// wrote, or listed in SKIPPED with the reason it cannot run in a test. A block in neither list, or
// an entry that matches no block, fails the first test.
//
// The examples stay as users read them; only what a test may not do is changed, and only here:
// - https://example.com/ becomes a site this test serves on loopback (tests reach nothing else);
// - a server line (`npm start`, `dist/genapi serve ...`) is started by the test in the background,
//   as a user runs it in a terminal of its own, on an ephemeral port instead of 8080, on 127.0.0.1,
//   with --allow-private-targets (the site is on loopback); `npm start` is `bun src/main.ts serve`
//   after installing what is missing (nothing, here), so the test serves with the executable built
//   from the same sources; later examples then call that port in place of localhost:8080;
// - `npm run build` is not run again: the test built dist/genapi first (ensureBinary), and a second
//   build would replace the executable under the servers of this run;
// - `genapi` (the installed command) is dist/genapi, through a link on PATH.
// The examples run in a directory laid out like a clone (dist, src, node_modules and package.json
// linked to this one's), which is also where they write their files; shell variables (KEY, ID) carry
// over from one block to the next as they do in a user's terminal.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, tempDir } from "../support/binary.ts";
import { needs } from "../support/requires.ts";
import { serveSite, type Site } from "../support/site.ts";
import { validateSitemap } from "../support/xmllint.ts";

const root = join(import.meta.dir, "../..");

interface Block {
  /** The README line of the block's first line. */
  line: number;
  text: string;
}

/** The README's shell examples: ```sh fences (list items' too, unindented) and indented code blocks. */
function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^( *)```(\S*)\s*$/.exec(lines[i]!);
    if (fence) {
      let end = i + 1;
      while (end < lines.length && !/^ *```\s*$/.test(lines[end]!)) end++;
      const indent = fence[1]!.length;
      if (/^(sh|bash|shell|console|zsh)$/.test(fence[2]!))
        blocks.push({
          line: i + 2,
          text: lines
            .slice(i + 1, end)
            .map((l) => l.slice(indent))
            .join("\n"),
        });
      i = end;
    } else if (/^ {4}\S/.test(lines[i]!) && lines[i - 1]?.trim() === "") {
      let end = i;
      while (end < lines.length && /^ {4}\S/.test(lines[end]!)) end++;
      blocks.push({
        line: i + 1,
        text: lines
          .slice(i, end)
          .map((l) => l.slice(4))
          .join("\n"),
      });
      i = end - 1;
    }
  }
  return blocks;
}

/** A block's commands: lines joined across trailing backslashes, comment-only lines left out. */
function commands(text: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  for (const line of text.split("\n")) {
    current.push(line);
    if (line.endsWith("\\")) continue;
    const command = current.join("\n");
    current = [];
    if (command.trim() !== "" && !command.trim().startsWith("#")) out.push(command);
  }
  return out;
}

/** A block is named by its first line, spaces collapsed. */
const firstLine = (block: Block) => block.text.split("\n")[0]!.trim().replace(/\s+/g, " ");

const DEPLOY =
  "the deploy section's steps need root, a server and a booted systemd: test/ops/systemd-boot.test.ts runs them in a container";

/** Blocks that cannot run in a test, by first line, with the reason. */
const SKIPPED: Record<string, string> = {
  "npm start # installs what is missing (Bun, dependencies) and serves on :8080 with ./genapi.db":
    "a fresh clone's install fetches packages from the npm registry, which tests may not reach; `npm test` is the whole suite, this file included",
  'sudo -u postgres psql -c "CREATE ROLE genapi LOGIN PASSWORD \'CHANGE-ME\'" -c "CREATE DATABASE genapi OWNER genapi"':
    "needs root and the machine's own PostgreSQL; test/e2e/postgres.e2e.test.ts runs genapi on throwaway clusters",
  "GENAPI_DB=postgresql://genapi:CHANGE-ME@db.internal:5432/genapi": "the content of /etc/genapi/genapi.env on a server, not a command",
  "sudo sh -c 'export \"$(grep ^GENAPI_DB= /etc/genapi/genapi.env)\"; genapi keys create --name acme --daily-limit 1000'":
    "needs root, an installed /etc/genapi/genapi.env and PostgreSQL at db.internal",
  "npm test # the whole suite: unit tests and end-to-end tests of dist/genapi":
    "the development commands run the test suite (this file included), the type check and CI, not genapi",
  "npm run build": DEPLOY,
  "scp dist/genapi scripts/install.sh deploy/genapi.service deploy/genapi.env server:genapi-install/": DEPLOY,
  "cd genapi-install": DEPLOY,
  "sudoedit /etc/genapi/genapi.env": DEPLOY,
  "sudo systemd-run --quiet --pipe --wait --collect -p DynamicUser=yes -p User=genapi -p StateDirectory=genapi -p StateDirectoryMode=0700 -p UMask=0077 /usr/local/bin/genapi keys create --name alice":
    DEPLOY,
  "journalctl -u genapi -f": DEPLOY,
};

/** What a block printed, and the files it wrote (a file written by an earlier block is refused). */
interface Run {
  stdout: string;
  stderr: string;
  file: (name: string) => string;
}

interface Example {
  check: (run: Run) => void | Promise<void>;
}

/**
 * The programs an example may call beyond bash, coreutils, Node.js and npm (which the README
 * requires) and genapi: the README's Requirements name them. A block that calls one that is missing
 * is not run, and neither is any later block (they run as one terminal session, and later blocks
 * use what earlier ones made, such as the key).
 */
const PROGRAMS = ["curl"] as const;
const calls = (block: Block) => PROGRAMS.filter((name) => new RegExp(`(^|[\\s|;&($])${name}\\s`, "m").test(block.text));

const KEY_FORMAT = /^genapi_[0-9A-Za-z]{38}$/;
const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => m[1]!.replaceAll("&amp;", "&"));

/** The JSON values of a text that holds several in a row (curl prints bodies without newlines). */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (depth++ === 0) start = i;
    } else if ((c === "}" || c === "]") && --depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
  }
  return values;
}

let site: Site;
let dir: string;
let server: { proc: Bun.Subprocess<"ignore", "pipe", "pipe">; port: number; db: string } | undefined;
let env: Record<string, string>;
let state: string;
let marker: string;

const siteUrl = () => site.url;
const pages = () => [`${siteUrl()}/`, `${siteUrl()}/a`, `${siteUrl()}/admin/`, `${siteUrl()}/b?utm_source=readme`];

/** Blocks run here, by first line, each with what it must have printed or written. */
const EXAMPLES: Record<string, Example> = {
  "npm run build # dist/genapi, or use `bun src/main.ts` in its place": {
    async check(run) {
      expect(run.stdout).toStartWith("Usage: genapi crawl URL [options]\n"); // --help; the sitemaps went to files
      const xml = run.file("sitemap.xml"); // the last crawl's: every page, none left out
      expect(locs(xml)).toEqual(pages());
      expect(await validateSitemap(xml)).toEqual({ valid: true, errors: [] });
      expect(JSON.parse(run.file("report.json"))).toMatchObject({ url: `${siteUrl()}/`, url_count: 4, truncated: false });
    },
  },
  "npm start": {
    check(run) {
      const [answer] = jsonValues(run.stdout) as Record<string, any>[];
      expect(answer).toMatchObject({ success: true, length: 20, parameters: { requested_length: 20, symbols: false } });
      expect(answer!.password).toMatch(/^[A-Za-z0-9]{20}$/);
    },
  },
  "curl -X POST -d 'length=12&exclude_similar=true' http://localhost:8080/api.php": {
    check(run) {
      const [generated, refused] = jsonValues(run.stdout) as Record<string, any>[];
      expect(generated).toMatchObject({ success: true, length: 12, parameters: { exclude_similar: true } });
      expect(refused).toEqual({ success: false, error: "length must be an integer from 8 to 128." });
    },
  },
  "KEY=$(npx bun src/main.ts keys create --name me) # or: dist/genapi keys create --name me": {
    check(run) {
      const [answer] = jsonValues(run.stdout) as Record<string, any>[];
      expect(answer).toMatchObject({ success: true, data: { url: `${siteUrl()}/`, url_count: 4 } });
      expect(locs(answer!.data.sitemap)).toEqual(pages());
    },
  },
  "curl -X POST http://localhost:8080/api/generate -H \"X-API-Key: $KEY\" -H 'Content-Type: application/json' \\": {
    check(run) {
      const [answer] = jsonValues(run.stdout) as Record<string, any>[];
      expect(answer).toMatchObject({ success: true, data: { url_count: 3 } });
      // /admin/ excluded, utm_source dropped, the start page's image listed.
      expect(locs(answer!.data.sitemap)).toEqual([`${siteUrl()}/`, `${siteUrl()}/a`, `${siteUrl()}/b`]);
      expect(answer!.data.sitemap).toContain(`<image:image><image:loc>${siteUrl()}/logo.png</image:loc></image:image>`);
    },
  },
  "curl -s -X POST http://localhost:8080/api/generate -H \"X-API-Key: $KEY\" -H 'Content-Type: application/json' \\": {
    check(run) {
      // The site here asks for nothing: the credentials go with every request to it, and the crawl is whole.
      const [answer] = jsonValues(run.stdout) as Record<string, any>[];
      expect(answer).toMatchObject({ success: true, data: { url_count: 4 } });
      expect(locs(answer!.data.sitemap)).toEqual(pages());
    },
  },
  "curl -s -X POST http://localhost:8080/api/jobs -H \"X-API-Key: $KEY\" -H 'Content-Type: application/json' \\": {
    async check(run) {
      const [job] = jsonValues(run.stdout); // the 202's body, as tee showed it
      expect(job).toMatchObject({ success: true, message: "Sitemap job accepted.", data: { options: { max_pages: 50000 } } });
      expect(JSON.parse(run.file("job.json"))).toEqual(job);
      expect(run.stdout).toContain("event: done\n");
      const xml = run.file("sitemap.xml");
      expect(locs(xml)).toEqual(pages());
      expect(await validateSitemap(xml)).toEqual({ valid: true, errors: [] });
      // One part only: the loop stopped at the first 404 and wrote no file for it.
      expect(existsSync(join(dir, "sitemap-1.xml"))).toBe(false);
    },
  },
  "genapi keys create --name alice # a free key; prints only the key, once": {
    check(run) {
      const [alice, acme, ...rest] = run.stdout.split("\n");
      expect(alice).toMatch(KEY_FORMAT);
      expect(acme).toMatch(KEY_FORMAT);
      const listed = JSON.parse(rest.join("\n")) as Record<string, unknown>[];
      // Key 1 is the one the "Try it" block created in the same ./genapi.db.
      expect(listed.map((k) => [k.id, k.name, k.daily_limit])).toEqual([
        [1, "me", null],
        [2, "alice", null],
        [3, "acme", 1000],
      ]);
      expect(run.stderr).toContain(`genapi: revoked key 2 "alice" (${alice!.slice(0, 12)}...)\n`);
    },
  },
  "npm run build # writes dist/genapi (bun build --compile --bytecode --splitting), about 117 MB": {
    async check(run) {
      expect(run.stdout).toStartWith("genapi "); // --help
      expect(run.stdout).toContain("Usage:\n");
      expect(server?.db).toBe("data/genapi.db");
      expect(existsSync(join(dir, "data/genapi.db"))).toBe(true);
      expect((await fetch(`http://127.0.0.1:${server!.port}/healthz`)).status).toBe(200);
    },
  },
};

const html = (body: string) => `<!doctype html><html><head><title>t</title></head><body>${body}</body></html>`;

beforeAll(async () => {
  const binary = await ensureBinary();
  site = await serveSite({
    "/": html('<a href="/a">a</a> <a href="/b?utm_source=readme">b</a> <a href="/admin/">admin</a> <img src="/logo.png">'),
    "/a": html('<a href="/">home</a>'),
    "/b": html("b"),
    "/admin/": html("admin"),
  });
  dir = tempDir("genapi-readme-");
  for (const name of ["dist", "src", "node_modules", "package.json"]) symlinkSync(join(root, name), join(dir, name));
  const bin = tempDir("genapi-readme-bin-");
  symlinkSync(binary, join(bin, "genapi"));
  const own = tempDir("genapi-readme-state-");
  state = join(own, "state.sh");
  marker = join(own, "block-started");
  env = {
    PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: process.env.HOME ?? "/root",
    // `npx bun` must find the clone's own Bun and never ask the registry.
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
  };
});

afterAll(async () => {
  await stopServer();
  await site?.stop();
});

async function stopServer() {
  if (!server) return;
  server.proc.kill("SIGTERM");
  await server.proc.exited;
  server = undefined;
}

/** Starts a server line of the README in the background, as a user runs it in another terminal. */
async function startServer(command: string) {
  await stopServer(); // both serve on port 8080: a user stops the first
  let line = command.replace(/\s+#.*$/, "").replace(/^npm start\b/, "dist/genapi serve");
  line = /--port \d+/.test(line) ? line.replace(/--port 8080\b/, "--port 0") : `${line} --port 0`;
  line += " --host 127.0.0.1 --allow-private-targets";
  const proc = Bun.spawn(["bash", "-c", `exec ${line}`], { cwd: dir, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const deadline = Date.now() + 10_000;
  while (!buffer.includes("listening on")) {
    const { value, done } = await Promise.race([
      reader.read(),
      Bun.sleep(Math.max(0, deadline - Date.now())).then(() => ({ value: "", done: true })),
    ]);
    if (done) {
      proc.kill("SIGKILL");
      throw new Error(`${line} did not start: ${buffer}${await new Response(proc.stderr).text()}`);
    }
    buffer += value;
  }
  const listening = JSON.parse(buffer.split("\n").find((l) => l.includes("listening on"))!);
  // Keep draining its request log so that it never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done) {}
  })();
  server = { proc, port: Number(new URL(listening.address).port), db: listening.db };
}

/** The test's only changes to an example's text: the site's address and the server's port. */
function rewrite(text: string): string {
  let out = text.replaceAll("https://example.com/", `${siteUrl()}/`);
  if (out.includes("localhost:8080")) {
    if (!server) throw new Error("an example calls localhost:8080 before any server was started");
    out = out.replaceAll("localhost:8080", `localhost:${server.port}`);
  }
  if (/example\.com|\b8080\b/.test(out)) throw new Error(`an example names a host or port this test cannot serve:\n${out}`);
  return out;
}

/** Runs commands in bash in the examples' directory, with the variables of earlier blocks. */
async function shell(text: string) {
  const script = `set -eo pipefail\n[ -f "${state}" ] && source "${state}"\nset -a\n${text}\nset +a\nexport -p > "${state}"\n`;
  const proc = Bun.spawn(["bash", "-c", script], { cwd: dir, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 25_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { stdout, stderr, code };
}

async function run(block: Block): Promise<Run> {
  // Files written from now on are this block's: compared with a file of the same file system, so
  // that a coarse timestamp granularity cannot tell otherwise.
  writeFileSync(marker, "");
  const started = statSync(marker).mtimeMs;
  let stdout = "";
  let stderr = "";
  let pending: string[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    const text = rewrite(pending.join("\n"));
    pending = [];
    const result = await shell(text);
    stdout += result.stdout;
    stderr += result.stderr;
    if (result.code !== 0) throw new Error(`README line ${block.line}: exit code ${result.code} from\n${text}\nstderr: ${result.stderr}`);
  };
  for (const command of commands(block.text)) {
    if (/^npm run build\b/.test(command)) {
      await flush(); // built once before the examples (ensureBinary)
    } else if (/^(npm start|dist\/genapi serve)\b/.test(command)) {
      await flush();
      await startServer(command);
    } else {
      pending.push(command);
    }
  }
  await flush();
  return {
    stdout,
    stderr,
    file(name) {
      const path = join(dir, name);
      expect({ name, writtenByThisBlock: existsSync(path) && statSync(path).mtimeMs >= started }).toEqual({
        name,
        writtenByThisBlock: true,
      });
      return readFileSync(path, "utf8");
    },
  };
}

const blocks = shellBlocks(readFileSync(join(root, "README.md"), "utf8"));

describe("the README's shell examples", () => {
  test("every shell block is run here or skipped with its reason; every entry names one block", () => {
    expect(blocks.length).toBeGreaterThan(10);
    const names = blocks.map(firstLine);
    expect(names.filter((name) => !(name in SKIPPED) && !(name in EXAMPLES))).toEqual([]);
    const entries = [...Object.keys(SKIPPED), ...Object.keys(EXAMPLES)];
    expect(entries.filter((entry) => names.filter((name) => name === entry).length !== 1)).toEqual([]);
  });

  // Why the examples from a block on are not run: a program that block calls is missing.
  let missing: string | undefined;
  for (const block of blocks) {
    const name = firstLine(block);
    const skipped = SKIPPED[name];
    const example = EXAMPLES[name];
    if (skipped !== undefined) {
      test.skip(`README line ${block.line}: ${name.slice(0, 60)} (not run: ${skipped})`, () => {});
    } else if (example) {
      const absent = missing === undefined ? calls(block).find((program) => !needs(import.meta.path, program)) : undefined;
      if (absent !== undefined) missing = `README line ${block.line} needs ${absent}, which is missing`;
      test.skipIf(missing !== undefined)(
        `README line ${block.line}: ${name.slice(0, 80)}${missing ? ` (not run: ${missing})` : ""}`,
        async () => {
          await example.check(await run(block));
        },
        30_000,
      );
    }
  }
});
