// `genapi crawl` runs without JavaScriptCore's top compiler tier (FTL): the executable starts
// itself again, in place (execve: the same process id, arguments and descriptors), with
// `BUN_JSC_useFTLJIT=0` in its environment, which JavaScriptCore reads only when it starts.
//
// Why, measured (scripts/bench/probes/ab-crawl.ts, the bench's site on nginx, both pinned, this
// executable with and without the variable in alternating rounds, 2026-11-28): CPU a page 0.79x at
// 10,000 pages (below 1 in 5 of 5 rounds) and 0.95x at 50,000 (3 of 4). The crawl's code calls into
// the runtime (sockets, decoding, SQLite) more than it loops on its own, so the FTL's code runs
// hardly faster than the DFG's, and compiling it costs about 1.6 s of a compiler thread on a
// 10,000-page crawl (100 functions; the HTTP head parser 200 ms, the tag scanner 190), a fixed cost
// a crawl never earns back. `bun:jsc`'s `noFTL(fn)` cannot do this per function: an async function's
// body is compiled apart from the function it hands out.
//
// `genapi serve` keeps FTL: its long-lived process pays the compiles once, and GET /api.php's
// generator is a tight loop the FTL speeds up. The variable is JavaScriptCore's, not a stable Bun
// API: a Bun that dropped it would stop the executable at start-up, which every test of the
// executable would show. Only the executable does this (`bun src/main.ts` profiles the code as
// written); a variable already set, either way, is the user's choice and is kept.

/** The JavaScriptCore option, read from the environment at start-up. */
export const FTL_VARIABLE = "BUN_JSC_useFTLJIT";

/**
 * The environment to start `genapi crawl` again with, or undefined when this process goes on as it
 * is: not the executable, not `crawl`, or the variable already set.
 */
export function crawlWithoutFtl(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  standalone: boolean,
): Record<string, string> | undefined {
  if (!standalone || args[0] !== "crawl" || env[FTL_VARIABLE] !== undefined) return undefined;
  const next: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) next[name] = value;
  next[FTL_VARIABLE] = "0";
  return next;
}
