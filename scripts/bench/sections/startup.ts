// 4. Start-up: time from exec to the first 200 on /healthz, for genapi as built (with bytecode) and
// built without, against the same measure of a bare compiled Bun.serve; and each executable's size.
import { statSync } from "node:fs";
import type { Context } from "../harness/context.ts";
import { CORES, freePort, pinned, waitFor200 } from "../harness/proc.ts";
import { ratios, row, summarize, type Row, type SectionResult, type Target } from "../harness/results.ts";
import { newDb } from "../harness/servers.ts";

interface Variant {
  label: string;
  argv: (port: number) => string[];
  path: string;
  times: number[];
}

export async function startupBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const { binaries, plan, workDir } = ctx;
  const serve = (binary: string, db: string) => (port: number) => [
    binary,
    "serve",
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--db",
    db,
  ];
  const baseline: Variant = {
    label: "bare Bun.serve (compiled)",
    path: binaries.ceiling,
    argv: (port) => [binaries.ceiling, "--port", String(port)],
    times: [],
  };
  const genapi: Variant = { label: "genapi", path: binaries.genapi, argv: serve(binaries.genapi, newDb(workDir)), times: [] };
  const variants: Variant[] = [
    baseline,
    genapi,
    { label: "genapi, --no-bytecode", path: binaries.sourceOnly, argv: serve(binaries.sourceOnly, newDb(workDir)), times: [] },
  ];
  // One unmeasured start each: the page cache holds the executable and genapi's database exists,
  // as on any start but the very first.
  for (let r = -1; r < plan.startupRuns; r++) {
    for (const variant of variants) {
      const time = await startOnce(variant.argv(freePort()));
      if (r >= 0) variant.times.push(time);
    }
  }
  const rows: Row[] = variants.map((variant) =>
    row(variant.label, {
      "ms to first 200": summarize(variant.times),
      "ratio to bare Bun.serve": variant === baseline ? undefined : summarize(ratios(variant.times, baseline.times)),
      "executable MB": (statSync(variant.path).size / 1e6).toFixed(1),
    }),
  );
  const median = summarize(genapi.times)?.median;
  const targets: Target[] = [
    {
      label: "start-up, genapi",
      goal: "< 100 ms median",
      measured: median === undefined ? "not measured" : `${median.toFixed(1)} ms`,
      met: median === undefined ? undefined : median < 100,
    },
  ];
  return {
    id: "startup",
    title: "Start-up and executable size",
    tables: [
      {
        title: `Exec to first 200 on /healthz, ${plan.startupRuns} starts each`,
        columns: ["ms to first 200", "ratio to bare Bun.serve", "executable MB"],
        rows,
        notes: [
          `Each start: \`taskset -c ${CORES.server} genapi serve --host 127.0.0.1 --port $PORT --db $DB\` (an existing database) while the harness polls \`GET /healthz\` every millisecond from core ${CORES.load}; the clock runs from just before exec to the first 200. The variants take turns, and one unmeasured start of each comes first so the executable is in the page cache.`,
          `Builds: \`${binaries.buildCommand}\`; the baseline is scripts/bench/fixtures/ceiling-server.ts built with \`bun build --compile\`.`,
        ],
      },
    ],
    checks: [],
    targets,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Milliseconds from spawning `argv` (pinned) to its first 200 on /healthz. */
async function startOnce(argv: string[]): Promise<number> {
  const port = argv[argv.indexOf("--port") + 1];
  const begin = performance.now();
  const proc = Bun.spawn(pinned(CORES.server, argv), { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  try {
    const answered = await waitFor200(`http://127.0.0.1:${port}/healthz`, 10_000, proc.exited);
    proc.kill("SIGTERM");
    await proc.exited;
    return answered - begin;
  } catch (error) {
    proc.kill("SIGKILL");
    throw new Error(`${(error as Error).message}: ${await new Response(proc.stderr).text()}`);
  }
}
