// HTTP defects once found, through the executable, with raw TCP requests so that the Host header,
// the request line and the pace of the body are exactly what a hostile or odd client sends.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKey, startBinary, type RunningBinary } from "../support/binary.ts";
import { requestLogLine } from "../support/wait.ts";

let server: RunningBinary;
let port: number;
let key: string;

beforeAll(async () => {
  server = await startBinary();
  port = Number(new URL(server.url).port);
  key = await createKey(server.dbPath);
});

afterAll(async () => {
  await server.stop();
});

interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
  /** Milliseconds from connecting to the connection's close. */
  ms: number;
}

/**
 * Writes `head` (request line and headers, CRLF-separated, without the blank line) and `body` on
 * a fresh connection and reads until the server closes it. `holdOpen` keeps the socket open after
 * writing (a body that never completes); otherwise `Connection: close` ends the exchange.
 */
function raw(head: string[], body = "", holdOpen = false): Promise<RawResponse> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(socket) {
          const lines = holdOpen ? head : [...head, "Connection: close"];
          socket.write(`${lines.join("\r\n")}\r\n\r\n${body}`);
        },
        data(_socket, data) {
          chunks.push(Buffer.from(data));
        },
        close() {
          const text = Buffer.concat(chunks).toString("utf8");
          const split = text.indexOf("\r\n\r\n");
          const [statusLine, ...headerLines] = text.slice(0, split < 0 ? text.length : split).split("\r\n");
          const headers = new Map<string, string>();
          for (const line of headerLines) {
            const colon = line.indexOf(":");
            if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
          }
          resolve({
            status: Number(statusLine?.split(" ")[1] ?? 0),
            headers,
            body: split < 0 ? "" : text.slice(split + 4),
            ms: performance.now() - started,
          });
        },
        error(_socket, error) {
          reject(error);
        },
      },
    }).catch(reject);
  });
}

/** The request's log line, found by the X-Request-Id it answered with. */
async function logLine(response: RawResponse): Promise<Record<string, unknown>> {
  const id = response.headers.get("x-request-id");
  expect(id).toBeString();
  return requestLogLine(server.stdout, id);
}

/** Every route, as a request line and a body, with the status a well-formed request gets. */
const ROUTES: { method: string; target: string; path: string; body?: string; type?: string; status: number }[] = [
  { method: "GET", target: "/healthz", path: "/healthz", status: 200 },
  { method: "GET", target: "/readyz", path: "/readyz", status: 200 },
  { method: "GET", target: "/api.php?length=12&symbols=false", path: "/api.php", status: 200 },
  {
    method: "POST",
    target: "/api.php?symbols=false",
    path: "/api.php",
    body: "length=20",
    type: "application/x-www-form-urlencoded",
    status: 200,
  },
  {
    method: "POST",
    target: "/api/generate",
    path: "/api/generate",
    body: '{"url":"http://localhost/"}',
    type: "application/json",
    status: 400,
  },
  { method: "OPTIONS", target: "/api/generate", path: "/api/generate", status: 204 },
  { method: "GET", target: "/swagger", path: "/swagger", status: 200 },
  { method: "GET", target: "/swagger/json", path: "/swagger/json", status: 200 },
  { method: "GET", target: "/swagger/assets/swagger-ui.css", path: "/swagger/assets/swagger-ui.css", status: 200 },
  { method: "GET", target: "/api/jobs?limit=5", path: "/api/jobs", status: 200 },
  { method: "DELETE", target: "/api/generate", path: "/api/generate", status: 405 },
  { method: "GET", target: "/no/such/path?q=1", path: "/no/such/path", status: 404 },
];

/** Host values a proxy, a container network or a hostile client may send; null: no Host (HTTP/1.0). */
const HOSTS: (string | null)[] = [
  "api",
  "web",
  "a",
  "a:80",
  "127.0.0.1",
  "10.0.0.1:8080",
  "[::1]",
  "[::1]:8080",
  "a@b",
  "a/b",
  "x y",
  null,
];

test("any Host routes normally, and the log's path comes from the request target", async () => {
  // Every answer that differs from a well-formed request's, listed at once for the failure message.
  const wrong: string[] = [];
  for (const host of HOSTS) {
    for (const route of ROUTES) {
      const head = [`${route.method} ${route.target} ${host === null ? "HTTP/1.0" : "HTTP/1.1"}`];
      if (host !== null) head.push(`Host: ${host}`);
      if (route.path.startsWith("/api/")) head.push(`X-API-Key: ${key}`);
      if (route.method === "OPTIONS") head.push("Origin: https://app.example", "Access-Control-Request-Method: POST");
      if (route.type) head.push(`Content-Type: ${route.type}`);
      if (route.body !== undefined) head.push(`Content-Length: ${Buffer.byteLength(route.body)}`);
      const response = await raw(head, route.body);
      const line = await logLine(response);
      const message = route.status === 404 ? JSON.parse(response.body).message : undefined;
      const seen = `${response.status} logged ${line.status} ${line.path}${message ? ` (${message})` : ""}`;
      const expected = `${route.status} logged ${route.status} ${route.path}${message ? ` (Not found: ${route.path})` : ""}`;
      if (seen !== expected)
        wrong.push(`Host ${host ?? "(none, HTTP/1.0)"}: ${route.method} ${route.target} -> ${seen}, expected ${expected}`);
    }
  }
  expect(wrong).toEqual([]);
}, 30_000);

describe("prototype names are unknown paths", () => {
  const NAMES = ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty", "isPrototypeOf", "__defineGetter__"];

  test("each answers 404 JSON, and a flood of them writes nothing on stderr", async () => {
    const before = server.stderr().length;
    for (const name of NAMES) {
      const response = await fetch(`${server.url}/swagger/assets/${name}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ success: false, message: `Not found: /swagger/assets/${name}` });
    }
    const flood = Array.from({ length: 400 }, (_, i) =>
      fetch(`${server.url}/swagger/assets/${NAMES[i % NAMES.length]}`).then((r) => r.status),
    );
    expect(new Set(await Promise.all(flood))).toEqual(new Set([404]));
    await Bun.sleep(100);
    expect(server.stderr().slice(before)).toBe("");
  });
});

describe("a body that stops arriving", () => {
  // The deadline is 10 s (src/http/body.ts); Bun's own idle cut, at 30 s, would answer nothing.
  test("answers 408 in each endpoint's error shape, logged as 408, with nothing on stderr", async () => {
    const before = server.stderr().length;
    const partial = (path: string, extra: string[]) =>
      raw([`POST ${path} HTTP/1.1`, "Host: 127.0.0.1", "Content-Type: application/json", "Content-Length: 100", ...extra], '{"len', true);
    const [password, sitemap] = await Promise.all([partial("/api.php", []), partial("/api/generate", [`X-API-Key: ${key}`])]);
    for (const response of [password, sitemap]) {
      expect(response.status).toBe(408);
      expect(response.ms).toBeGreaterThan(9_000);
      expect(response.ms).toBeLessThan(20_000);
      expect(response.headers.get("connection")).toBe("close");
      expect((await logLine(response)).status).toBe(408);
    }
    expect(JSON.parse(password.body)).toEqual({ success: false, error: "Request body did not arrive within 10 s." });
    expect(JSON.parse(sitemap.body)).toEqual({ success: false, message: "Request body did not arrive within 10 s." });
    expect(server.stderr().slice(before)).toBe("");
  }, 30_000);
});

describe("one trailing-slash rule and no Vary: *", () => {
  test("every documented route answers with a trailing slash as without it", async () => {
    const spec = (await (await fetch(`${server.url}/swagger/json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const checked: string[] = [];
    for (const [template, operations] of Object.entries(spec.paths)) {
      const path = template.replace(/\{[^}]+\}/g, "x");
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        if (!["GET", "POST", "DELETE"].includes(method)) continue;
        const init = {
          method,
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: method === "POST" ? "{}" : undefined,
        };
        const plain = await fetch(`${server.url}${path}`, init);
        const slashed = await fetch(`${server.url}${path}/`, init);
        expect({ route: `${method} ${path}/`, status: slashed.status }).toEqual({ route: `${method} ${path}/`, status: plain.status });
        // A refusal is the route's own (`Job not found.`), never the router's `Not found: <path>/`.
        if (plain.status >= 400) expect(await slashed.text()).toBe(await plain.text());
        checked.push(`${method} ${path}`);
      }
    }
    expect(checked).toContain("POST /api/generate");
    expect(checked).toContain("GET /api.php");
    expect(checked).toContain("GET /healthz");
    // A known path with another method is 405 with or without the slash.
    const wrong = await fetch(`${server.url}/api.php/`, { method: "DELETE" });
    expect(wrong.status).toBe(405);
    expect(await wrong.json()).toEqual({ success: false, error: "Method DELETE is not allowed here; use GET, HEAD, POST." });
  });

  test("no response carries Vary: *, preflights still allow both endpoints from any origin", async () => {
    const origin = { Origin: "https://app.example" };
    const answers = await Promise.all([
      fetch(`${server.url}/healthz`, { headers: origin }),
      fetch(`${server.url}/api.php`, { headers: origin }),
      fetch(`${server.url}/api/generate`, { method: "POST", headers: origin }),
      fetch(`${server.url}/nowhere`, { headers: origin }),
    ]);
    for (const response of answers) {
      expect(response.headers.get("vary")).toBeNull();
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
    }
    for (const path of ["/api.php", "/api/generate"]) {
      const preflight = await fetch(`${server.url}${path}`, {
        method: "OPTIONS",
        headers: { ...origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, x-api-key" },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("vary")).toBeNull();
      expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
      expect(preflight.headers.get("access-control-allow-headers")).toBe("Content-Type, X-API-Key");
      expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    }
  });
});
