// The executable's command line, run as users run it.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runBinary, startBinary, tempDir } from "../support/binary.ts";
import pkg from "../../package.json" with { type: "json" };

describe("genapi executable: command line", () => {
  test("--version prints the package version", async () => {
    const { stdout, code } = await runBinary(["--version"]);
    expect(code).toBe(0);
    expect(stdout).toBe(`genapi ${pkg.version}\n`);
  });

  test("--help lists every serve flag with its variable, and warns about private targets", async () => {
    const { stdout, code } = await runBinary(["--help"]);
    expect(code).toBe(0);
    for (const flag of [
      "--port",
      "--host",
      "--db",
      "--trust-proxy",
      "--free-daily-limit",
      "--max-pages",
      "--crawl-timeout",
      "--max-crawls",
      "--crawl-queue",
      "--allow-private-targets",
      "--allow-target",
    ]) {
      expect(stdout).toContain(flag);
    }
    expect(stdout).toContain("GENAPI_PORT, PORT");
    expect(stdout).toContain("NEVER in production");
  });

  test.each([
    [["serve", "--port", "abc"], 'genapi: --port must be an integer from 0 to 65535 (got "abc")\n'],
    [["serve", "--bogus"], "genapi: Unknown option '--bogus'\n"],
    [["serve", "--prot", "80"], "genapi: Unknown option '--prot' (did you mean --port?)\n"],
    [["serve", "--allow-private-target"], "genapi: Unknown option '--allow-private-target' (did you mean --allow-private-targets?)\n"],
    [["keys", "list", "--jsn"], "genapi: Unknown option '--jsn' (did you mean --json?)\n"],
    [["keys", "create", "--name", "x", "--daily-limt", "5"], "genapi: Unknown option '--daily-limt' (did you mean --daily-limit?)\n"],
    [["srve"], 'genapi: unknown command "srve" (did you mean serve?)\n'],
    [["--hlp"], 'genapi: unknown command "--hlp" (did you mean --help?)\n'],
    [["keys", "lst"], 'genapi: unknown keys command "lst" (did you mean list?)\n'],
    [["serve", "--max-pages", "50001"], 'genapi: --max-pages must be an integer from 1 to 50000 (got "50001")\n'],
    [["serve", "--trust-proxy", "10.0.0.0/99"], 'genapi: --trust-proxy: "10.0.0.0/99" is not an IP address or CIDR range.\n'],
    [["serve", "--allow-target", "host:99999"], 'genapi: --allow-target: "host:99999" has a port outside 1-65535.\n'],
    [["keys", "create"], "genapi: keys create needs --name NAME\n"],
    [["keys", "create", "--name", "x", "--daily-limit", "0"], 'genapi: --daily-limit must be an integer from 1 to 10000000 (got "0")\n'],
    [
      ["keys", "create", "--name", "x", "--daily-limit", "1e3"],
      'genapi: --daily-limit must be an integer from 1 to 10000000 (got "1e3")\n',
    ],
    [["keys", "create", "--name", " "], "genapi: --name must not be empty.\n"],
    [["frobnicate"], 'genapi: unknown command "frobnicate" (try genapi --help)\n'],
  ])("bad flag or value %p: one line naming it on stderr, exit 2, no database created", async (args, expected) => {
    const db = join(tempDir(), "x.db");
    const { stdout, stderr, code } = await runBinary(args, { env: { GENAPI_DB: db } });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(expected);
    expect(existsSync(db)).toBe(false);
  });

  test.each(
    [["serve"], ["keys"], ["keys", "create"], ["keys", "list"], ["keys", "revoke"]].map((command) => [command.join(" "), command] as const),
  )("genapi %s -h and --help print its usage on stdout, exit 0", async (_, command) => {
    for (const help of ["-h", "--help"]) {
      const { stdout, stderr, code } = await runBinary([...command, help], { env: { GENAPI_DB: join(tempDir(), "x.db") } });
      expect({ command, help, stderr, code }).toEqual({ command, help, stderr: "", code: 0 });
      expect(stdout).toContain(command[0] === "serve" ? "--allow-private-targets" : "genapi keys revoke ID_OR_PREFIX");
    }
  });

  test("a bad environment variable is named like a flag", async () => {
    const { stderr, code } = await runBinary(["serve"], { env: { GENAPI_MAX_CRAWLS: "many" } });
    expect(code).toBe(2);
    expect(stderr).toBe('genapi: GENAPI_MAX_CRAWLS must be an integer from 1 to 1000 (got "many")\n');
  });

  test("a second server on a busy port fails with 'address in use' instead of sharing it, and creates no database", async () => {
    const first = await startBinary();
    try {
      const port = new URL(first.url).port;
      const dir = tempDir();
      const { stderr, code } = await runBinary(["serve", "--host", "127.0.0.1", "--port", port, "--db", join(dir, "b.db")]);
      expect(code).toBe(1);
      expect(stderr).toBe(`genapi: cannot listen on 127.0.0.1:${port}: address in use\n`);
      // A start that failed leaves nothing behind: the database is created once the port is bound.
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      await first.stop();
    }
  });

  test("keys create prints only the key; list shows its prefix, never the key; revoke by prefix", async () => {
    const env = { GENAPI_DB: join(tempDir(), "keys.db") };
    const created = await runBinary(["keys", "create", "--name", "ci bot", "--daily-limit", "100"], { env });
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^genapi_[0-9A-Za-z]{38}\n$/);
    const key = created.stdout.trim();
    expect(created.stderr).not.toContain(key);

    const listed = await runBinary(["keys", "list", "--json"], { env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key);
    const [record] = JSON.parse(listed.stdout);
    expect(record).toMatchObject({
      id: 1,
      name: "ci bot",
      prefix: key.slice(0, 12),
      daily_limit: 100,
      last_used_at: null,
      revoked_at: null,
    });
    expect(Date.parse(record.created_at)).toBeGreaterThan(Date.now() - 60_000);

    const table = await runBinary(["keys", "list"], { env });
    expect(table.stdout).toContain(key.slice(0, 12));
    expect(table.stdout).not.toContain(key);

    const revoked = await runBinary(["keys", "revoke", key.slice(0, 12)], { env });
    expect(revoked.code).toBe(0);
    const after = JSON.parse((await runBinary(["keys", "list", "--json"], { env })).stdout);
    expect(after[0].revoked_at).not.toBeNull();

    const missing = await runBinary(["keys", "revoke", "999"], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('genapi: no key matches "999"\n');
  });
});
