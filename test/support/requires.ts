// What a test needs that `npm install` cannot bring: a program of the system (Chromium, systemd,
// PostgreSQL, ...) or root. Everything else the suite needs comes from the npm registry, so that
// `npm test` passes on a machine with only Node.js and npm: a test whose need is not met skips
// (`describe.skipIf(!needs(...))`, `test.skipIf(...)`), and the first ask of a test file for a need
// that is not met prints one line for the file and that need, e.g.
//   skip: test/e2e/render.e2e.test.ts: needs chromium (Debian: apt-get install chromium; bash .ci/run installs it)
// Tests never install anything themselves (they reach nothing beyond loopback): `bash .ci/run`
// installs these packages as root before the suite, and runs it as root.
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { findChromium } from "../../src/crawler/index.ts";

const root = join(import.meta.dir, "../..");

interface Program {
  /** Its path when it is here, else null. */
  find: () => string | null;
  /** How to get it, in the skip line. */
  how: string;
}

const debian = (pkg: string) => `Debian: apt-get install ${pkg}; bash .ci/run installs it`;
const onPath = (name: string, pkg: string): Program => ({ find: () => Bun.which(name), how: debian(pkg) });

/** Debian's PostgreSQL server programs (initdb, pg_ctl, psql, pg_dump), newest major version first. */
export function postgresBin(): string | null {
  const dir = "/usr/lib/postgresql";
  const versions = (existsSync(dir) ? readdirSync(dir) : [])
    .filter((name) => existsSync(join(dir, name, "bin/initdb")))
    .map(Number)
    .sort((a, b) => b - a);
  return versions.length === 0 ? null : join(dir, String(versions[0]), "bin");
}

const PROGRAMS = {
  // As the crawler finds it (chromium, chromium-browser, google-chrome... on PATH).
  chromium: { find: () => findChromium(null), how: debian("chromium") },
  curl: onPath("curl", "curl"),
  // util-linux script(1), to run a command in a pseudo-terminal.
  script: onPath("script", "bsdutils"),
  "systemd-analyze": onPath("systemd-analyze", "systemd"),
  "systemd-nspawn": onPath("systemd-nspawn", "systemd-container"),
  "dbus-daemon": onPath("dbus-daemon", "dbus"),
  timeout: onPath("timeout", "coreutils"),
  unshare: onPath("unshare", "util-linux"),
  nsenter: onPath("nsenter", "util-linux"),
  runuser: onPath("runuser", "util-linux"),
  // Throwaway clusters (test/support/postgres.ts): initdb and pg_ctl from Debian's server package,
  // looked for in /usr/lib/postgresql/<version>/bin, not on PATH.
  postgresql: { find: postgresBin, how: debian("postgresql") },
} satisfies Record<string, Program>;

export type ProgramName = keyof typeof PROGRAMS;

/** root: what the test does with it, in the skip line. */
export type Need = ProgramName | { root: string };

const printed = new Set<string>();

function unmet(need: Need): string | null {
  if (typeof need === "object") {
    return process.getuid?.() === 0 ? null : `needs root (${need.root}; bash .ci/run runs the suite as root)`;
  }
  const program = PROGRAMS[need];
  return program.find() === null ? `needs ${need} (${program.how})` : null;
}

/**
 * Whether every need is met. When one is not, prints `skip: <file>: needs <what> (<how to get it>)`
 * for the first unmet one, once per file and need, and returns false. `file` is the test file's
 * `import.meta.path`.
 */
export function needs(file: string, ...wanted: Need[]): boolean {
  for (const need of wanted) {
    const reason = unmet(need);
    if (reason === null) continue;
    const line = `skip: ${relative(root, file)}: ${reason}`;
    if (!printed.has(line)) {
      printed.add(line);
      console.warn(line);
    }
    return false;
  }
  return true;
}

/** A program's path, or null after `needs` printed the file's skip line for it. */
export function program(file: string, name: ProgramName): string | null {
  return needs(file, name) ? PROGRAMS[name].find() : null;
}
