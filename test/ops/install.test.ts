// scripts/install.sh against a temporary root (GENAPI_ROOT) and a fake systemctl that logs its
// calls and remembers whether the service "runs", so installing twice, keeping an edited env file
// and uninstalling are checked without a real systemd.
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/binary.ts";

const root = join(import.meta.dir, "../..");
const script = join(root, "scripts/install.sh");
const unitSource = readFileSync(join(root, "deploy/genapi.service"), "utf8");
const envSource = readFileSync(join(root, "deploy/genapi.env"), "utf8");

/** A stand-in genapi: enough to pass install.sh's `--version` check, and tell two builds apart. */
function fakeBinary(dir: string, version: string): string {
  const path = join(dir, "genapi");
  writeFileSync(path, `#!/bin/sh\necho "genapi ${version}"\n`);
  chmodSync(path, 0o755);
  return path;
}

/** Logs each call as one line; `is-active` answers from a state file that start/stop maintain. */
function fakeSystemctl(dir: string): { command: string; calls: () => string[] } {
  const log = join(dir, "systemctl.log");
  const state = join(dir, "active");
  const command = join(dir, "systemctl");
  writeFileSync(
    command,
    `#!/bin/sh
echo "$*" >> '${log}'
case "$*" in
  "is-active --quiet genapi.service") test -e '${state}' ;;
  "enable --now genapi.service"|"restart genapi.service") touch '${state}' ;;
  "disable --now genapi.service") rm -f '${state}' ;;
esac
`,
  );
  chmodSync(command, 0o755);
  return { command, calls: () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []) };
}

function runInstall(args: string[], env: Record<string, string>, cwd: string) {
  const proc = Bun.spawnSync(["bash", script, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

describe("scripts/install.sh", () => {
  test("installs, upgrades idempotently without touching an edited env file, then uninstalls", () => {
    const target = tempDir("genapi-root-");
    const work = tempDir("genapi-install-");
    const systemctl = fakeSystemctl(work);
    const env = { GENAPI_ROOT: target, SYSTEMCTL: systemctl.command };
    const installedBin = join(target, "usr/local/bin/genapi");
    const installedUnit = join(target, "etc/systemd/system/genapi.service");
    const installedEnv = join(target, "etc/genapi/genapi.env");

    // First install: the default binary is ./genapi in the working directory.
    fakeBinary(work, "1.0.0");
    const first = runInstall([], env, work);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(readFileSync(installedBin, "utf8")).toContain("genapi 1.0.0");
    expect(statSync(installedBin).mode & 0o777).toBe(0o755);
    expect(readFileSync(installedUnit, "utf8")).toBe(unitSource);
    expect(readFileSync(installedEnv, "utf8")).toBe(envSource);
    expect(systemctl.calls()).toEqual(["daemon-reload", "is-active --quiet genapi.service", "enable --now genapi.service"]);

    // The operator edits the settings; a new build is installed from an explicit path.
    const edited = "GENAPI_PORT=9090\n";
    writeFileSync(installedEnv, edited);
    const newBuild = tempDir("genapi-build-");
    const second = runInstall([fakeBinary(newBuild, "1.1.0")], env, work);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`kept your ${installedEnv}`);
    expect(readFileSync(installedEnv, "utf8")).toBe(edited);
    expect(readFileSync(installedBin, "utf8")).toContain("genapi 1.1.0");
    expect(readFileSync(installedUnit, "utf8")).toBe(unitSource);
    expect(existsSync(`${installedBin}.new`)).toBe(false);
    // Already running: restarted so the new binary takes effect.
    expect(systemctl.calls().slice(3)).toEqual([
      "daemon-reload",
      "is-active --quiet genapi.service",
      "enable genapi.service",
      "restart genapi.service",
    ]);

    const removed = runInstall(["--uninstall"], env, work);
    expect(removed.code).toBe(0);
    expect(systemctl.calls().slice(7)).toEqual(["disable --now genapi.service", "daemon-reload"]);
    expect(existsSync(installedBin)).toBe(false);
    expect(existsSync(installedUnit)).toBe(false);
    // Settings (and, on a real host, the state directory) stay.
    expect(readFileSync(installedEnv, "utf8")).toBe(edited);
    expect(removed.stdout).toContain("kept");
    expect(removed.stdout).toContain("/var/lib/private/genapi");

    // Uninstalling again is harmless and does not ask systemd to disable a unit that is gone.
    const again = runInstall(["--uninstall"], env, work);
    expect(again.code).toBe(0);
    expect(systemctl.calls().slice(9)).toEqual(["daemon-reload"]);
  });

  test("refuses a binary that does not run, before replacing anything", () => {
    const target = tempDir("genapi-root-");
    const work = tempDir("genapi-install-");
    const systemctl = fakeSystemctl(work);
    const broken = join(work, "genapi");
    writeFileSync(broken, "#!/bin/sh\necho 'Exec format error' >&2\nexit 126\n");
    chmodSync(broken, 0o755);
    const result = runInstall([broken], { GENAPI_ROOT: target, SYSTEMCTL: systemctl.command }, work);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("does not run on this host");
    expect(existsSync(join(target, "usr/local/bin/genapi"))).toBe(false);
    expect(existsSync(join(target, "usr/local/bin/genapi.new"))).toBe(false);
    expect(systemctl.calls()).toEqual([]);
  });

  test("without a binary to install it says where it looked", () => {
    const work = tempDir("genapi-install-");
    const result = runInstall([], { GENAPI_ROOT: tempDir("genapi-root-"), SYSTEMCTL: "false" }, work);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("no ./genapi or ./dist/genapi here");
  });

  test("with GENAPI_ROOT and no SYSTEMCTL it installs files but leaves the service manager alone", () => {
    const target = tempDir("genapi-root-");
    const work = tempDir("genapi-install-");
    const result = runInstall([fakeBinary(work, "1.0.0")], { GENAPI_ROOT: target }, work);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("did not enable or start genapi.service");
    expect(existsSync(join(target, "etc/systemd/system/genapi.service"))).toBe(true);
  });

  test("--help explains usage and what --uninstall keeps; unknown options exit 1", () => {
    const help = runInstall(["--help"], {}, tempDir());
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: install.sh [PATH_TO_BINARY]");
    expect(help.stdout).toContain("--uninstall keeps /etc/genapi");
    const bad = runInstall(["--frobnicate"], {}, tempDir());
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe("install.sh: unknown option --frobnicate (try --help)\n");
  });
});
