// 1. The password endpoint under load: genapi serving GET /api.php with default parameters against
// the ceiling, a bare compiled Bun.serve answering a fixed JSON body of the same size.
import type { Context } from "./context.ts";
import { CORES, showCommand } from "./proc.ts";
import { missing, ratios, row, summarize, type SectionResult, type Target } from "./results.ts";
import { startGenapi, startServer, type Server } from "./servers.ts";
import { alternating, runWrk, wrkArgv, type WrkResult } from "./wrk.ts";

const CONNECTIONS = 64;

export async function passwordBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const { plan, binaries, tools, workDir } = ctx;
  const title = "Password endpoint: throughput and latency";
  if (tools.wrk.argv === undefined) {
    return {
      id: "password",
      title,
      tables: [{ title, columns: [], rows: [missing("wrk", "not installed", tools.wrk.note ?? "not installed")], notes: [] }],
      checks: [],
      targets: targets(undefined, undefined),
      seconds: (performance.now() - started) / 1000,
    };
  }
  const wrk = tools.wrk.argv[0]!;
  const genapi = await startGenapi(binaries.genapi, workDir);
  let ceiling: Server | undefined;
  try {
    const sample = await fetch(`${genapi.url}/api.php`);
    const bodyBytes = (await sample.arrayBuffer()).byteLength;
    const baseline = await startServer([binaries.ceiling, "--port", "0", "--body-bytes", String(bodyBytes)], workDir);
    ceiling = baseline;
    const ceilingBytes = (await (await fetch(`${ceiling.url}/api.php`)).arrayBuffer()).byteLength;

    const measure = (server: Server, seconds = plan.wrkSeconds) =>
      runWrk(wrk, { url: `${server.url}/api.php`, connections: CONNECTIONS, seconds });
    const [theirs, ours] = await alternating(
      plan.runs,
      (r) => ctx.log(`password: run ${r + 1}/${plan.runs}`),
      (seconds) => measure(baseline, seconds),
      (seconds) => measure(genapi, seconds),
    );
    const rps = (results: WrkResult[]) => results.map((r) => r.requestsPerSecond);
    const ratio = summarize(ratios(rps(ours), rps(theirs)));
    const p99 = summarize(ours.map((r) => r.p99Ms));
    const names = { [genapi.url]: "http://127.0.0.1:$PORT", [ceiling.url]: "http://127.0.0.1:$PORT", [workDir]: "$WORK" };
    const wrkLine = showCommand(wrkArgv("wrk", { url: `${genapi.url}/api.php`, connections: CONNECTIONS, seconds: plan.wrkSeconds }), names);
    const cells = (results: WrkResult[]) => ({
      "requests/s": summarize(rps(results)),
      "p50 ms": summarize(results.map((r) => r.p50Ms)),
      "p99 ms": summarize(results.map((r) => r.p99Ms)),
      "non-2xx + socket errors": String(results.reduce((sum, r) => sum + r.non2xx + r.socketErrors, 0)),
    });
    return {
      id: "password",
      title,
      tables: [
        {
          title: `GET /api.php (defaults), ${CONNECTIONS} connections, ${plan.wrkSeconds} s per run`,
          columns: ["requests/s", "p50 ms", "p99 ms", "non-2xx + socket errors", "ratio to ceiling"],
          rows: [
            row("ceiling: bare Bun.serve, fixed JSON body", cells(theirs), {
              command: showCommand(ceiling.argv, { ...names, [binaries.ceiling]: "ceiling" }),
              note: `body ${ceilingBytes} bytes, genapi's ${bodyBytes}`,
            }),
            row("genapi", { ...cells(ours), "ratio to ceiling": ratio }, { command: showCommand(genapi.argv, { ...names, [binaries.genapi]: "genapi", [genapi.db]: "$DB" }) }),
          ],
          notes: [
            `Load: \`taskset -c ${CORES.load} ${wrkLine}\`; servers pinned with \`taskset -c ${CORES.server}\`. Both servers are compiled with \`bun build --compile\` and warmed up for 1 s; the runs alternate which server goes first, and each ratio compares the two measurements of one run.`,
            "genapi writes its one-line JSON request log to a file, as under a service manager.",
          ],
        },
      ],
      checks: [
        {
          label: "every password request answered 200",
          passed: ours.every((r) => r.non2xx === 0 && r.socketErrors === 0),
          detail: `${ours.reduce((sum, r) => sum + r.requests, 0)} requests`,
        },
      ],
      targets: targets(ratio?.median, p99?.median),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await ceiling?.stop();
    await genapi.stop();
  }
}

function targets(ratio: number | undefined, p99: number | undefined): Target[] {
  return [
    {
      label: "password requests/s vs bare Bun.serve",
      goal: "≥ 0.85×",
      measured: ratio === undefined ? "not measured" : `${ratio.toFixed(2)}×`,
      met: ratio === undefined ? undefined : ratio >= 0.85,
    },
    {
      label: `password p99 latency at ${CONNECTIONS} connections`,
      goal: "< 5 ms",
      measured: p99 === undefined ? "not measured" : `${p99.toFixed(2)} ms`,
      met: p99 === undefined ? undefined : p99 < 5,
    },
  ];
}
