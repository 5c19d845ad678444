// `genapi crawl` and `genapi serve` run without JavaScriptCore's top compiler tier (FTL): the
// executable starts itself again, in place (execve of /proc/self/exe: the same process, file,
// arguments and descriptors; no second process to forward signals to), with `BUN_JSC_useFTLJIT=0`
// in its environment, which JavaScriptCore reads only when it starts.
//
// Why, measured (scripts/bench/probes/ab-crawl.ts: the bench's site on nginx, this executable with
// and without the variable in alternating rounds, CPU a page, same-round ratio medians): 0.79x at
// 1,000 pages, 0.75-0.82x at 10,000 (every round of four A/Bs below 1), 0.95-1.06x at 50,000 and
// 1.01-1.05x at 100,000, their intervals spanning 1 but one (notes/bench-profile.md, sections 18
// and 19). A crawl's code calls into the runtime (sockets, decoding, the crawl state) more than it
// loops on its own, so the FTL's code is only a little faster than the DFG's, and compiling it
// takes about 1 s of a compiler thread (100 functions; the HTTP head parser 200 ms, the tag scanner
// 190): a fixed cost that pays back somewhere between 50,000 and 100,000 pages. Most sites are far
// smaller; for a crawl of well over 100,000 pages, set BUN_JSC_useFTLJIT=1 (README). `bun:jsc`'s
// `noFTL(fn)` cannot do this per function: an async function's body is compiled apart from the
// function it hands out.
//
// `genapi serve` runs without it too: a server's first crawl paid the compiles (the API's crawl of
// 10,000 pages in a fresh server: 0.35 CPU ms a page with FTL, 0.24 without; the crawls after it
// 0.20-0.26 either way, scripts/bench/probes/api-crawls.ts, 2 rounds of 5 crawls), which put the
// API 1.34x behind the command it should match (the bench's crawl-cli section), while `GET
// /api.php` loses nothing measurable (41.1 against 41.1 and 48.0 against 50.2 CPU µs a request,
// scripts/bench/probes/ab-password.ts, 10 and 8 rounds of 5 s), nor does a site's unchanged
// 100,000-page run 2 in a server that ran it before, its compiles paid (1.053x in section 19's
// A/B, 0.948x in section 20's: scripts/bench/probes/ab-site-run.ts, 4 rounds each;
// notes/bench-profile.md).
// The variable is JavaScriptCore's, not a stable Bun API, and Bun stops at start-up on one it does
// not know: a Bun without it would fail every `genapi crawl` and `genapi serve` of the executable,
// which the tests of the executable would show. Only the executable does this (`bun src/main.ts`
// profiles the code as written); a variable already set, either way, is the user's choice and is
// kept. Other commands (keys, the top-level --help and --version) are over before a compile would
// start and go on as they are; `crawl --help` and `serve --help` start again like their commands
// (the first image is 17 ms to its execve: scripts/build.ts keeps the program out of it). The
// variable passes to the processes a command starts (Chromium), which do not read it.

/** The JavaScriptCore option, read from the environment at start-up. */
export const FTL_VARIABLE = "BUN_JSC_useFTLJIT";

/** The commands that run without FTL. */
const COMMANDS: ReadonlySet<string> = new Set(["crawl", "serve"]);

/**
 * The environment to start `genapi crawl` or `genapi serve` again with, or undefined when this
 * process goes on as it is: not the executable, another command, or the variable already set.
 */
export function withoutFtl(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  standalone: boolean,
): Record<string, string> | undefined {
  if (!standalone || !COMMANDS.has(args[0] ?? "") || env[FTL_VARIABLE] !== undefined) return undefined;
  const next: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) next[name] = value;
  next[FTL_VARIABLE] = "0";
  return next;
}

/**
 * Starts the command again without FTL when withoutFtl says so; returns only when this process goes
 * on as it is. A failed execve (never seen: /proc/self/exe is this very file, even moved or
 * deleted) leaves the command to run here with the FTL's compiles: the same answers.
 */
export function restartWithoutFtl(args: readonly string[]): void {
  const env = withoutFtl(args, process.env, Bun.isStandaloneExecutable);
  if (env === undefined) return;
  // Bun warns that execve is experimental only when the call returns (fails): that warning would
  // reach stderr, which holds nothing but the report with `genapi crawl --json`.
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    process.execve?.("/proc/self/exe", [process.argv0, ...args], env);
  } catch {
    // The failure is the one above: nothing to tell the user that changes what the command does.
  } finally {
    process.emitWarning = emitWarning;
  }
}
