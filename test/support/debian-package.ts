// Finds a command that a Debian package provides, installing the package with apt (as root) when it
// is missing. Tests that need such a command skip with the reason returned when it cannot be had.

export type Found = { path: string; skip?: undefined } | { path?: undefined; skip: string };

const attempts = new Map<string, Promise<Found>>();

function run(argv: string[]): { ok: boolean; output: string } {
  const proc = Bun.spawnSync(argv, {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { ok: proc.exitCode === 0, output: `${proc.stdout}${proc.stderr}`.trim() };
}

export function ensureDebianCommand(command: string, debianPackage: string): Promise<Found> {
  let attempt = attempts.get(command);
  if (!attempt) {
    attempt = (async (): Promise<Found> => {
      const existing = Bun.which(command);
      if (existing) return { path: existing };
      if (process.getuid?.() !== 0) return { skip: `${command} is missing and installing ${debianPackage} needs root` };
      if (!Bun.which("apt-get")) return { skip: `${command} is missing and there is no apt-get to install ${debianPackage}` };
      for (const argv of [
        ["apt-get", "update"],
        ["apt-get", "install", "-y", "--no-install-recommends", debianPackage],
      ]) {
        const result = run(argv);
        if (!result.ok)
          return { skip: `${command} is missing: ${argv.join(" ")} failed: ${result.output.split("\n").slice(-3).join(" | ")}` };
      }
      const installed = Bun.which(command);
      return installed ? { path: installed } : { skip: `${debianPackage} installed but ${command} is still missing` };
    })();
    attempts.set(command, attempt);
  }
  return attempt;
}
