// A/B of GET /api.php between executables, for trying a change to the password path before it
// lands: each executable serves pinned to the server core, wrk loads them in turn (rotating which
// goes first), and the figure is the server's CPU µs per request (utime + stime over the run ÷
// requests), which the shared machine's other work disturbs far less than requests/s.
//
//   bun scripts/bench/probes/ab-password.ts [--runs 8] [--seconds 2] NAME=EXECUTABLE ...
// An executable named fair-ceiling or ceiling is started as the bench's ceilings are; any other as
// `genapi serve`. Build scratch variants with `bun scripts/build.ts --outfile /tmp/x/genapi`.
import { mkdtempSync, rmSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { cpuSeconds } from "../harness/proc.ts";
import { summarize, type Summary } from "../harness/results.ts";
import { startGenapi, startServer, type Server } from "../harness/servers.ts";
import { rotating, runWrk } from "../harness/wrk.ts";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    runs: { type: "string", default: "8" },
    seconds: { type: "string", default: "2" },
    connections: { type: "string", default: "64" },
  },
  allowPositionals: true,
});
const subjects = positionals.map((arg) => {
  const at = arg.indexOf("=");
  return at < 0 ? { name: basename(arg), path: arg } : { name: arg.slice(0, at), path: arg.slice(at + 1) };
});
if (subjects.length === 0) throw new Error("usage: ab-password.ts [--runs N] [--seconds S] NAME=EXECUTABLE ...");

const dir = mkdtempSync("/tmp/genapi-ab-");
const servers: Server[] = [];
try {
  for (const { path } of subjects) {
    const kind = basename(path);
    servers.push(
      kind === "ceiling"
        ? await startServer([path, "--port", "0", "--body-bytes", "181"], dir)
        : kind === "fair-ceiling"
          ? await startServer([path, "--port", "0"], dir)
          : await startGenapi(path, dir),
    );
  }
  const runs = Number(values.runs);
  const measure =
    (server: Server) =>
    async (seconds = Number(values.seconds)) => {
      const before = await cpuSeconds(server.pid);
      const result = await runWrk("wrk", { url: `${server.url}/api.php`, connections: Number(values.connections), seconds });
      if (result.non2xx + result.socketErrors > 0)
        throw new Error(`${server.argv[0]}: ${result.non2xx} non-2xx, ${result.socketErrors} socket errors`);
      return { ...result, cpuUs: (((await cpuSeconds(server.pid)) - before) / result.requests) * 1e6 };
    };
  const results = await rotating(runs, 1, (r) => console.error(`run ${r + 1}/${runs}`), servers.map(measure));
  const show = (s: Summary | undefined, digits: number) =>
    s ? `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)})` : "?";
  console.log("| | CPU µs per request | requests/s | p99 ms |\n|---|---:|---:|---:|");
  subjects.forEach(({ name }, i) => {
    const rs = results[i]!;
    console.log(
      `| ${name} | ${show(summarize(rs.map((r) => r.cpuUs)), 1)} | ${show(summarize(rs.map((r) => r.requestsPerSecond)), 0)} | ${show(summarize(rs.map((r) => r.p99Ms)), 2)} |`,
    );
  });
} finally {
  for (const server of servers) await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
