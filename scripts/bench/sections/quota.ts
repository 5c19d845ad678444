// 5. Quota admission under an abusive client: POST /api/generate with a free key whose daily quota
// is used up, so every request goes through key lookup, body and URL checks and the SQLite
// admission statement, and is refused with 429. Baseline: the same requests with a mistyped key,
// refused with 401 by the key's checksum before any database access.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Context } from "../harness/context.ts";
import { CORES, freePort, showCommand } from "../harness/proc.ts";
import { missing, ratios, row, summarize, type SectionResult, type Target } from "../harness/results.ts";
import { createKey, startGenapi } from "../harness/servers.ts";
import { alternating, runWrk, wrkArgv, type WrkResult } from "../harness/wrk.ts";

const CONNECTIONS = 64;
const TITLE = "Quota admission: requests refused with 429";
// A well-formed key whose checksum is wrong: refused without a database lookup.
const MISTYPED_KEY = `genapi_${"A".repeat(38)}`;

export async function quotaBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const { plan, binaries, tools, workDir } = ctx;
  if (tools.wrk.argv === undefined) {
    return {
      id: "quota",
      title: TITLE,
      tables: [{ title: TITLE, columns: [], rows: [missing("wrk", "not installed", tools.wrk.note ?? "not installed")], notes: [] }],
      checks: [],
      targets: [target(undefined)],
      seconds: 0,
    };
  }
  const wrk = tools.wrk.argv[0]!;
  // The one admitted request crawls a closed loopback port: it fails at once (502) and uses the quota.
  const closedUrl = `http://127.0.0.1:${freePort()}/`;
  const genapi = await startGenapi(binaries.genapi, workDir, ["--allow-private-targets", "--free-daily-limit", "1"]);
  try {
    const key = createKey(binaries.genapi, genapi.db);
    const post = (apiKey: string) =>
      fetch(`${genapi.url}/api/generate`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": apiKey },
        body: JSON.stringify({ url: closedUrl }),
      }).then(async (res) => {
        await res.arrayBuffer();
        return res.status;
      });
    const first = await post(key);
    const before = [await post(key), await post(MISTYPED_KEY)];

    const script = join(workDir, "generate.lua");
    writeFileSync(
      script,
      `wrk.method = "POST"
wrk.body = '${JSON.stringify({ url: closedUrl })}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-API-Key"] = os.getenv("BENCH_KEY")
`,
    );
    const measure = (apiKey: string, seconds = plan.wrkSeconds) =>
      runWrk(wrk, { url: `${genapi.url}/api/generate`, connections: CONNECTIONS, seconds, script, env: { BENCH_KEY: apiKey } });
    const [refused, mistyped] = await alternating(
      plan.runs,
      plan.warmupSeconds,
      (r) => ctx.log(`quota: run ${r + 1}/${plan.runs}`),
      (seconds) => measure(key, seconds),
      (seconds) => measure(MISTYPED_KEY, seconds),
    );
    const after = [await post(key), await post(MISTYPED_KEY)];
    const rps = (results: WrkResult[]) => results.map((r) => r.requestsPerSecond);
    const ratio = summarize(ratios(rps(refused), rps(mistyped)));
    const allRefused = (results: WrkResult[]) => results.every((r) => r.non2xx === r.requests && r.socketErrors === 0);
    const cells = (results: WrkResult[]) => ({
      "requests/s": summarize(rps(results)),
      "p50 ms": summarize(results.map((r) => r.p50Ms)),
      "p99 ms": summarize(results.map((r) => r.p99Ms)),
    });
    const names = { [genapi.url]: "http://127.0.0.1:$PORT", [workDir]: "$WORK", [closedUrl]: "http://127.0.0.1:$CLOSED/" };
    return {
      id: "quota",
      title: TITLE,
      tables: [
        {
          title: `POST /api/generate, ${CONNECTIONS} connections, ${plan.wrkSeconds} s per run`,
          columns: ["requests/s", "p50 ms", "p99 ms", "ratio to 401 path"],
          rows: [
            row("401: mistyped key (checksum, no database)", cells(mistyped)),
            row(
              "429: free key over its daily quota (SQLite admission)",
              { ...cells(refused), "ratio to 401 path": ratio },
              {
                command: showCommand(genapi.argv, { ...names, [binaries.genapi]: "genapi", [genapi.db]: "$DB" }),
              },
            ),
          ],
          notes: [
            `Load: \`taskset -c ${CORES.load} BENCH_KEY=... ${showCommand(wrkArgv("wrk", { url: `${genapi.url}/api/generate`, connections: CONNECTIONS, seconds: plan.wrkSeconds, script }), names)}\` with a Lua script that sends \`{"url": "http://127.0.0.1:$CLOSED/"}\` and the key; genapi pinned to core ${CORES.server}.`,
            "The 429 path runs everything before a crawl: key lookup by hash, body and URL checks, target check, and the one-statement SQLite admission (INSERT ... ON CONFLICT DO UPDATE ... WHERE count < limit RETURNING) on a WAL database.",
          ],
        },
      ],
      checks: [
        { label: "the one admitted request used the quota", passed: first === 502, detail: `first request answered ${first}` },
        {
          label: "every measured request was refused (429 with the used-up key, 401 with the mistyped one)",
          passed: allRefused(refused) && allRefused(mistyped) && [...before, ...after].join() === "429,401,429,401",
          detail: `spot checks before and after: ${[...before, ...after].join(", ")}`,
        },
      ],
      targets: [target(ratio?.median, summarize(rps(refused))?.median)],
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await genapi.stop();
  }
}

function target(ratio: number | undefined, rps?: number): Target {
  return {
    label: "requests refused with 429 (SQLite admission), vs the 401 path that reads no database",
    goal: "show the admission path is not the bottleneck",
    measured:
      ratio === undefined || rps === undefined ? "not measured" : `${Math.round(rps).toLocaleString("en-US")}/s, ${ratio.toFixed(2)}×`,
    met: ratio === undefined ? undefined : null,
  };
}
