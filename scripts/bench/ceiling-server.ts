// The ceiling of the password benchmark and the baseline of the start-up one: a bare Bun.serve
// answering every request with the same fixed JSON body (of the size genapi's answer has) and
// /healthz with 200. Compiled like genapi, so both run the same runtime the same way.
// Usage: ceiling [--port N] [--body-bytes N]; prints {"address": "http://127.0.0.1:N"}.
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { port: { type: "string", default: "0" }, "body-bytes": { type: "string", default: "180" } },
});

function fixedBody(bytes: number): string {
  const shell = JSON.stringify({ success: true, password: "" });
  return JSON.stringify({ success: true, password: "x".repeat(Math.max(0, bytes - shell.length)) });
}

const body = fixedBody(Number(values["body-bytes"]));
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(values.port),
  routes: { "/healthz": new Response("ok") },
  fetch: () => new Response(body, { headers: { "content-type": "application/json" } }),
});
console.log(JSON.stringify({ address: `http://127.0.0.1:${server.port}` }));
