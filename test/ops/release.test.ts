// scripts/release.sh in smoke form: only this machine's target (linux-x64 needs no download; the
// cross targets fetch ~50 MB runtimes from the npm registry, so they are left to a real release).
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/binary.ts";

const root = join(import.meta.dir, "../..");
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version as string;

function release(args: string[], out: string) {
  const proc = Bun.spawnSync(["bash", join(root, "scripts/release.sh"), ...args], {
    env: { ...process.env, GENAPI_RELEASE_DIR: out },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

const foreignArch = process.arch !== "x64";
if (foreignArch) console.warn(`skipping the release smoke test: it builds linux-x64 and this machine is ${process.arch}`);

describe("scripts/release.sh", () => {
  test.skipIf(foreignArch)("builds the linux-x64 executable with the install files and checksums that verify", () => {
    const out = join(tempDir("genapi-release-"), "release");
    try {
      const result = release(["linux-x64"], out);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const executable = `genapi-${version}-linux-x64`;
      expect(result.stdout).toMatch(new RegExp(`MiB  ${executable.replaceAll(".", "\\.")}\\n`));

      const sums = readFileSync(join(out, "SHA256SUMS"), "utf8");
      expect(
        sums
          .trim()
          .split("\n")
          .map((line) => line.split(/\s+/)[1]),
      ).toEqual([executable, "install.sh", "genapi.service", "genapi.env"]);
      const check = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: out, stdout: "pipe", stderr: "pipe" });
      expect(check.exitCode).toBe(0);
      expect(readFileSync(join(out, "genapi.service"), "utf8")).toBe(readFileSync(join(root, "deploy/genapi.service"), "utf8"));

      const reported = Bun.spawnSync([join(out, executable), "--version"], { stdout: "pipe" });
      expect(reported.stdout.toString()).toBe(`genapi ${version}\n`);

      // The release directory is self-contained: its install.sh finds the unit and env beside it.
      const target = tempDir("genapi-root-");
      const install = Bun.spawnSync(["bash", join(out, "install.sh"), join(out, executable)], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GENAPI_ROOT: target },
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(install.stderr.toString()).toBe("");
      expect(install.exitCode).toBe(0);
      expect(existsSync(join(target, "etc/systemd/system/genapi.service"))).toBe(true);
      expect(existsSync(join(target, "etc/genapi/genapi.env"))).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test("refuses an unknown target before building anything", () => {
    const out = join(tempDir("genapi-release-"), "release");
    const result = release(["windows-x64"], out);
    expect(result.code).toBe(2);
    expect(result.stderr).toStartWith("release.sh: unknown target windows-x64 (");
    expect(existsSync(out)).toBe(false);
  });
});
