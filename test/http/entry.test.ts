// routableRequest against Bun's own request URLs: a real server, raw request lines.
import { afterAll, expect, test } from "bun:test";
import { FALLBACK_ORIGIN, routableRequest } from "../../src/http/entry.ts";

const seen: { url: string; same: boolean }[] = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    const routed = routableRequest(request);
    seen.push({ url: routed.url, same: routed === request });
    return new Response(null, { status: 204 });
  },
});
afterAll(() => server.stop(true));

async function urlFor(requestLine: string, host: string | null): Promise<string> {
  seen.length = 0;
  await new Promise<void>((resolve, reject) => {
    Bun.connect({
      hostname: "127.0.0.1",
      port: server.port!,
      socket: {
        open: (socket) => void socket.write(`${requestLine}\r\n${host === null ? "" : `Host: ${host}\r\n`}Connection: close\r\n\r\n`),
        data: () => {},
        close: () => resolve(),
        error: (_socket, error) => reject(error),
      },
    }).catch(reject);
  });
  expect(seen).toHaveLength(1);
  expect(seen[0]!.same).toBe(true);
  return seen[0]!.url;
}

test("a URL Elysia already routes right is left as Bun built it", async () => {
  expect(await urlFor("GET /api.php?length=9 HTTP/1.1", "127.0.0.1:8080")).toBe("http://127.0.0.1:8080/api.php?length=9");
  expect(await urlFor("GET /healthz HTTP/1.1", "[::1]:8080")).toBe("http://[::1]:8080/healthz");
  expect(await urlFor("GET /x HTTP/1.1", "abcd")).toBe("http://abcd/x");
});

test("a short, odd or missing Host gets the fixed origin before the target as sent", async () => {
  const cases: [string, string | null, string][] = [
    ["GET /healthz HTTP/1.1", "api", "/healthz"],
    ["GET /healthz HTTP/1.1", "a:80", "/healthz"],
    ["GET /api.php?length=9 HTTP/1.1", "a", "/api.php?length=9"],
    ["POST /api/generate HTTP/1.1", "a@b", "/api/generate"],
    ["GET /a/b HTTP/1.1", "a/b", "/a/b"],
    ["GET //double HTTP/1.1", "a@b", "//double"],
    ["GET /healthz HTTP/1.0", null, "/healthz"],
  ];
  for (const [line, host, target] of cases) expect(await urlFor(line, host)).toBe(FALLBACK_ORIGIN + target);
});
