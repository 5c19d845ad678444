// The fair ceiling of the password benchmark: a bare Bun.serve doing everything GET /api.php must
// do and nothing a framework adds: the query read into fields, genapi's own generator
// (generateFromFields, the same batched random source), the same response headers (CORS,
// Cache-Control: no-store, X-Request-Id) and body, and the same JSON log line per request with
// the peer address, batched per event-loop turn by genapi's own writer. genapi's ratio to it is
// the cost of Elysia, the request-log wrapper and the routing around the same work.
// Usage: fair-ceiling [--port N]; prints {"address": "http://127.0.0.1:N"}; log lines on stdout.
import { parseArgs } from "node:util";
import { batchedWriter } from "../../src/http/log-writer.ts";
import { createRandom } from "../../src/password/random.ts";
import { generateFromFields } from "../../src/password/service.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { port: { type: "string", default: "0" } } });

const random = createRandom();
const log = batchedWriter((chunk) => process.stdout.write(chunk));

// What genapi sends with every API answer (src/http/cors.ts, the no-store hook, the JSON type).
const HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers":
    "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Retry-After, X-Request-Id",
  "cache-control": "no-store",
  "content-type": "application/json;charset=utf-8",
};

function queryFields(url: string): Record<string, unknown> {
  const fields: Record<string, unknown> = Object.create(null);
  const start = url.indexOf("?");
  if (start === -1) return fields;
  for (const [name, value] of new URLSearchParams(url.slice(start + 1))) fields[name] = value;
  return fields;
}

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const end = url.indexOf("?", start);
  return end < 0 ? url.slice(start) : url.slice(start, end);
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(values.port),
  reusePort: false,
  routes: { "/healthz": new Response("ok") },
  fetch(request, srv) {
    const started = performance.timeOrigin + performance.now();
    const ip = srv.requestIP(request)?.address ?? "unknown";
    const requestId = crypto.randomUUID();
    const result = generateFromFields(queryFields(request.url), random);
    const response = Response.json(result.body, { status: result.status, headers: { ...HEADERS, "x-request-id": requestId } });
    const line: Record<string, unknown> = {
      time: new Date(started).toISOString(),
      method: request.method,
      path: pathOf(request.url),
      status: result.status,
      duration_ms: Math.round((performance.timeOrigin + performance.now() - started) * 100) / 100,
      ip,
      request_id: requestId,
    };
    const agent = request.headers.get("user-agent");
    if (agent) line.user_agent = agent.slice(0, 200);
    log.write(`${JSON.stringify(line)}\n`);
    return response;
  },
});
console.log(JSON.stringify({ address: `http://127.0.0.1:${server.port}` }));
