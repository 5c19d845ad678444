// deploy/genapi.service and deploy/genapi.env: systemd accepts the unit, its hardening holds, and
// the command line it runs, with the variables the example env file names, really serves.
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runBinary, tempDir } from "../support/binary.ts";
import { program } from "../support/requires.ts";

const root = join(import.meta.dir, "../..");
const unitText = readFileSync(join(root, "deploy/genapi.service"), "utf8");
const envText = readFileSync(join(root, "deploy/genapi.env"), "utf8");

/** The unit's [Service] settings: each key with every value it is given, in order. */
function serviceSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    if (line.startsWith("[")) {
      section = line;
      continue;
    }
    if (section !== "[Service]") continue;
    const eq = line.indexOf("=");
    const key = line.slice(0, eq);
    settings.set(key, [...(settings.get(key) ?? []), line.slice(eq + 1)]);
  }
  return settings;
}

/** Every VARIABLE=value of the env file, the commented-out defaults included. */
function envAssignments(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^#?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match) vars.set(match[1]!, match[2]!);
  }
  return vars;
}

const service = serviceSettings(unitText);
const single = (key: string) => {
  const values = service.get(key);
  expect(values, key).toHaveLength(1);
  return values![0]!;
};

const analyze = program(import.meta.path, "systemd-analyze");

describe("deploy/genapi.service", () => {
  test.skipIf(analyze === null)("systemd-analyze verify accepts it without a warning", async () => {
    // verify insists that ExecStart's binary exists, and the real path (/usr/local/bin/genapi) is
    // not installed here: check a copy that runs the freshly built executable instead.
    const binary = await ensureBinary();
    const dir = tempDir("genapi-unit-");
    const copy = join(dir, "genapi.service");
    const rewritten = unitText.replace(/^ExecStart=\/usr\/local\/bin\/genapi /m, `ExecStart=${binary} `);
    expect(rewritten).not.toBe(unitText);
    writeFileSync(copy, rewritten);
    const proc = Bun.spawnSync([analyze!, "verify", copy], { stdout: "pipe", stderr: "pipe" });
    // Unknown keys and bad values are only warnings (exit 0), so the output must be empty too.
    expect(`${proc.stdout}${proc.stderr}`).toBe("");
    expect(proc.exitCode).toBe(0);
  });

  // 1.1 before rendering; Chromium's sandbox needs user, PID and network namespaces,
  // @privileged, @resources and @mount calls and /proc beyond the process subset: 2.0.
  test.skipIf(analyze === null)("systemd-analyze security rates its exposure at most 2.0 (OK)", () => {
    const dir = tempDir("genapi-unit-");
    copyFileSync(join(root, "deploy/genapi.service"), join(dir, "genapi.service"));
    const proc = Bun.spawnSync([analyze!, "security", "--offline=true", "--no-pager", join(dir, "genapi.service")], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const output = `${proc.stdout}${proc.stderr}`;
    const level = /Overall exposure level for genapi\.service: ([\d.]+) (\w+)/.exec(output);
    expect(level, output).not.toBeNull();
    expect(Number(level![1])).toBeLessThanOrEqual(2.0);
    expect(level![2]).toBe("OK");
  });

  test("runs genapi serve as a throwaway user with the hardening the deployment relies on", () => {
    expect(single("ExecStart")).toBe("/usr/local/bin/genapi serve");
    expect(single("EnvironmentFile")).toBe("-/etc/genapi/genapi.env");
    const expected: Record<string, string> = {
      DynamicUser: "yes",
      StateDirectory: "genapi",
      Restart: "on-failure",
      KillSignal: "SIGTERM",
      NoNewPrivileges: "yes",
      ProtectSystem: "strict",
      ProtectHome: "yes",
      PrivateTmp: "yes",
      PrivateDevices: "yes",
      ProtectKernelTunables: "yes",
      ProtectKernelModules: "yes",
      ProtectKernelLogs: "yes",
      ProtectControlGroups: "yes",
      ProtectClock: "yes",
      ProtectHostname: "yes",
      RestrictAddressFamilies: "AF_INET AF_INET6 AF_UNIX",
      // Chromium's sandbox makes user, PID and network namespaces; nothing else may be made.
      RestrictNamespaces: "user pid net",
      LockPersonality: "yes",
      RestrictRealtime: "yes",
      RestrictSUIDSGID: "yes",
      SystemCallArchitectures: "native",
      CapabilityBoundingSet: "",
      UMask: "0077",
    };
    for (const [key, value] of Object.entries(expected)) expect(`${key}=${single(key)}`).toBe(`${key}=${value}`);
    // Bun's JIT needs writable+executable memory.
    expect(service.has("MemoryDenyWriteExecute")).toBe(false);
    // A stop lets a running crawl finish: crawl timeout (60 s) plus genapi's 5 s grace.
    expect(Number(single("TimeoutStopSec"))).toBeGreaterThan(65);
  });
});

describe("deploy/genapi.env", () => {
  test("names exactly the variables genapi serve reads, and warns about private targets", async () => {
    const help = await runBinary(["--help"]);
    expect(help.code).toBe(0);
    const documented = new Set([...help.stdout.matchAll(/\bGENAPI_[A-Z_]+\b/g)].map((m) => m[0]));
    expect(documented.size).toBeGreaterThan(5);
    expect(new Set(envAssignments(envText).keys())).toEqual(documented);
    // Nothing is switched on by the example itself.
    expect(envText.split("\n").filter((line) => /^[A-Z]/.test(line))).toEqual([]);
    expect(envText).toMatch(/never turn this on in production[\s\S]*#GENAPI_ALLOW_PRIVATE_TARGETS=0/i);
  });

  test("the unit's command line with every example setting serves from $STATE_DIRECTORY and stops cleanly", async () => {
    const binary = await ensureBinary();
    const [program, ...args] = single("ExecStart").split(/\s+/);
    expect(program).toBe("/usr/local/bin/genapi");
    // The env file the unit reads is the example this repository installs there.
    expect(single("EnvironmentFile").replace(/^-/, "")).toBe("/etc/genapi/genapi.env");
    const settings = Object.fromEntries(envAssignments(envText));
    // GENAPI_DB shows the production path, which is what STATE_DIRECTORY yields anyway; the
    // address is moved to an ephemeral loopback port so the test stays on this machine.
    delete settings.GENAPI_DB;
    const stateDir = tempDir("genapi-state-");
    const cwd = tempDir("genapi-cwd-");
    const proc = Bun.spawn([binary, ...args], {
      cwd,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        ...settings,
        GENAPI_HOST: "127.0.0.1",
        GENAPI_PORT: "0",
        STATE_DIRECTORY: stateDir,
      },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const started = await firstLine(proc);
      const listening = JSON.parse(started);
      expect(listening.db).toBe(join(stateDir, "genapi.db"));
      expect(listening.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const health = await fetch(`${listening.address}/healthz`);
      expect(health.status).toBe(200);
      expect(existsSync(join(stateDir, "genapi.db"))).toBe(true);
      expect(existsSync(join(cwd, "genapi.db"))).toBe(false);
    } finally {
      proc.kill("SIGTERM");
    }
    expect(await proc.exited).toBe(0);
  });
});

/** The first stdout line of a starting server (its "listening on" log line), or its stderr if it exits. */
async function firstLine(proc: Bun.Subprocess<"ignore", "pipe", "pipe">): Promise<string> {
  const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (!buffer.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`genapi exited before listening: ${await new Response(proc.stderr).text()}`);
    buffer += value;
  }
  reader.releaseLock();
  return buffer.slice(0, buffer.indexOf("\n"));
}
