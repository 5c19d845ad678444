// The crawler's HTTP/1.1 client (src/crawler/net/http-client.ts) against servers written here, on
// 127.0.0.1 ephemeral ports: raw TCP servers (Bun.listen) that answer byte for byte what each test
// needs, well-behaved or hostile, and a node:https server for TLS. Reuse is proven by counting the
// connections the server accepted.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";
import { readCapped } from "../../../src/crawler/net/body.ts";
import { describeFailure } from "../../../src/crawler/net/request.ts";
import { BufferedResponse, createHttpClient, type HttpClient, type HttpClientOptions } from "../../../src/crawler/net/http-client.ts";
import { rawServer, send, stopRawServers, type RawServer } from "../../support/raw-http-server.ts";
import { CERT, KEY } from "../../support/test-certificate.ts";
import { waitFor } from "../../support/wait.ts";

// ---------------------------------------------------------------------------------------------
// Fixtures

const servers: { stop(): void }[] = [];
const clients: HttpClient[] = [];

afterEach(() => {
  for (const client of clients.splice(0)) client.close();
  for (const server of servers.splice(0)) server.stop();
  stopRawServers();
});

function client(options: HttpClientOptions = {}): HttpClient {
  const made = createHttpClient(options);
  clients.push(made);
  return made;
}

function response(status: string, headers: [string, string | number][], body: string | Uint8Array = ""): Uint8Array {
  const bytes = typeof body === "string" ? Buffer.from(body, "latin1") : body;
  const head = `HTTP/1.1 ${status}\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join("")}\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), bytes]);
}

/** A server answering every request with `body` (Content-Length framed) and `headers`. */
function okServer(body: string | Uint8Array = "hello", headers: [string, string | number][] = []): RawServer {
  return rawServer(
    (_, conn) =>
      void send(conn, response("200 OK", [["Content-Length", typeof body === "string" ? body.length : body.byteLength], ...headers], body)),
  );
}

const never = new AbortController().signal;
/**
 * The connections `server` accepted other than a probe of the test's own, opened now: once the
 * server has the probe, it has every connection opened before it (a listener accepts them in the
 * order they were made), however slow the machine. A sleep before counting proved nothing.
 */
async function connectionsBeforeProbe(server: RawServer): Promise<number> {
  const probe = await Bun.connect({ hostname: "127.0.0.1", port: server.port, socket: { data() {} } });
  try {
    const isProbe = (c: RawServer["connections"][number]) => c.socket.remotePort === probe.localPort;
    await waitFor(() => server.connections.some(isProbe), 2000, "the probe connection");
    return server.connections.filter((c) => !isProbe(c)).length;
  } finally {
    probe.end();
  }
}
const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => err as Error & { code?: string },
  );
/** A deterministic text that compresses to about a third of its size. */
function pseudoText(size: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = 12345;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = 97 + ((x >>> 16) % 26);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

describe("requests and responses", () => {
  test("sends the request line and headers as given, with the defaults fetch adds", async () => {
    const server = okServer();
    const res = await client().send(`${server.url}/a/b?c=1&d=%20`, { headers: { "User-Agent": "genapi/test", host: "example.test:8080" } });
    expect(await res.text()).toBe("hello");
    const [req] = server.requests();
    expect(req).toMatchObject({ method: "GET", target: "/a/b?c=1&d=%20", version: "HTTP/1.1" });
    expect(req!.lines).toEqual([
      "Host: example.test:8080",
      "User-Agent: genapi/test",
      "Accept: */*",
      "Accept-Encoding: gzip, deflate, br",
      "Connection: keep-alive",
    ]);
  });

  test("a conditional request's validators follow the record's fields, which stay the record's (one frozen record, three requests), and a record's own field is sent once", async () => {
    const server = okServer();
    const http = client();
    const headers = Object.freeze({ "User-Agent": "genapi/test", Host: "example.test" });
    await (
      await http.send(`${server.url}/a`, { headers, validators: { etag: 'W/"a-1"', lastModified: "Tue, 24 Nov 2026 10:00:00 GMT" } })
    ).text();
    await (
      await http.send(`${server.url}/b`, { headers, validators: { etag: null, lastModified: "Wed, 25 Nov 2026 10:00:00 GMT" } })
    ).text();
    await (await http.send(`${server.url}/c`, { headers })).text();
    const [a, b, c] = server.requests();
    const common = ["Accept: */*", "Accept-Encoding: gzip, deflate, br", "Connection: keep-alive"];
    expect(a!.lines).toEqual([
      "Host: example.test",
      "User-Agent: genapi/test",
      'If-None-Match: W/"a-1"',
      "If-Modified-Since: Tue, 24 Nov 2026 10:00:00 GMT",
      ...common,
    ]);
    expect(b!.lines).toEqual([
      "Host: example.test",
      "User-Agent: genapi/test",
      "If-Modified-Since: Wed, 25 Nov 2026 10:00:00 GMT",
      ...common,
    ]);
    expect(c!.lines).toEqual(["Host: example.test", "User-Agent: genapi/test", ...common]);
    // A record that sets a validator's field itself (a user's header) keeps its own: the field is sent once.
    const own = { "If-Modified-Since": "Mon, 01 Jan 2024 00:00:00 GMT" };
    await (
      await http.send(`${server.url}/e`, { headers: own, validators: { etag: '"e"', lastModified: "Wed, 25 Nov 2026 10:00:00 GMT" } })
    ).text();
    expect(server.requests()[3]!.lines.filter((line) => line.startsWith("If-"))).toEqual([
      "If-Modified-Since: Mon, 01 Jan 2024 00:00:00 GMT",
      'If-None-Match: "e"',
    ]);
    const bad = http.send(`${server.url}/d`, { headers, validators: { etag: '"x"\r\nInjected: yes', lastModified: null } });
    await expect(bad).rejects.toThrow("http-client: invalid value for header If-None-Match");
    expect(server.requests()).toHaveLength(4);
  });

  test("Host and User-Agent default as fetch's do; a caller's Accept and Accept-Encoding are kept", async () => {
    const server = okServer();
    await (
      await client().send(`${server.url}/`, {
        headers: [
          ["Accept", "text/html"],
          ["accept-encoding", "identity"],
        ],
      })
    ).text();
    expect(server.requests()[0]!.lines).toEqual([
      `Host: 127.0.0.1:${server.port}`,
      "Accept: text/html",
      "accept-encoding: identity",
      `User-Agent: Bun/${Bun.version}`,
      "Connection: keep-alive",
    ]);
  });

  test("status, status text, headers (repeated ones combined as fetch does) and body bytes", async () => {
    const body = Uint8Array.from({ length: 300 }, (_, i) => i % 256);
    const server = rawServer(
      (_, conn) =>
        void send(
          conn,
          response(
            "203 Somewhat Fine",
            [
              ["Content-Length", body.byteLength],
              ["X-Multi", "a"],
              ["x-multi", "b"],
              ["Set-Cookie", "a=1"],
              ["Set-Cookie", "b=2"],
              ["X-Spaces", " \t padded \t "],
              ["Content-Type", "application/octet-stream"],
            ],
            body,
          ),
        ),
    );
    const res = await client().send(`${server.url}/`, {});
    expect(res.status).toBe(203);
    expect(res.statusText).toBe("Somewhat Fine");
    expect(res.ok).toBe(true);
    expect(res.headers).toBeInstanceOf(Headers);
    expect(res.headers.get("x-multi")).toBe("a, b");
    expect(res.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(res.headers.get("x-spaces")).toBe("padded");
    expect(res.headers.get("content-length")).toBe("300");
    expect(await res.bytes()).toEqual(body);
  });

  test("a redirect is returned as it is, never followed", async () => {
    const server = rawServer(
      (req, conn) =>
        void send(
          conn,
          req.target === "/from"
            ? response(
                "302 Found",
                [
                  ["Location", "/to"],
                  ["Content-Length", 5],
                ],
                "moved",
              )
            : response("200 OK", [["Content-Length", 0]]),
        ),
    );
    const res = await client().send(`${server.url}/from`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/to");
    expect(await res.text()).toBe("moved");
    expect(server.requests().map((r) => r.target)).toEqual(["/from"]);
  });

  test("connects to IP literals only: a name is refused before any connection", async () => {
    const server = okServer();
    const error = await errorOf(client().send(`http://localhost:${server.port}/`, {}));
    expect(error).toBeInstanceOf(TypeError);
    expect(error!.message).toBe(`http-client: localhost:${server.port} is not an IP address`);
    expect(await connectionsBeforeProbe(server)).toBe(0);
  });

  test("other methods, request bodies and header values with CR or LF are refused before connecting", async () => {
    const server = okServer();
    const http = client();
    await expect(http.send(`${server.url}/`, { method: "POST", body: "x" })).rejects.toThrow(
      "http-client: POST is not supported (GET and HEAD only)",
    );
    await expect(http.send(`${server.url}/`, { headers: { "X-Evil": "a\r\nInjected: yes" } })).rejects.toThrow(
      "http-client: invalid value for header X-Evil",
    );
    await expect(http.send(`${server.url}/`, { headers: { "Bad Name": "x" } })).rejects.toThrow("invalid header name");
    await expect(http.send(`ftp://127.0.0.1:${server.port}/`, {})).rejects.toThrow("unsupported protocol ftp:");
    expect(await connectionsBeforeProbe(server)).toBe(0);
  });

  test("paths the URL parser would change are sent as it serialises them", async () => {
    const server = okServer();
    const http = client();
    const paths = ["/a b", "/a/../b", "/x/%2e%2e/y", "/.well-known/z", "/q?a=<b>#frag", "/a b?", "/a b?#frag", "/q?"];
    for (const path of [...paths, "/a/./b", "/a/..", "/a/.?q", "/.x/..y?q='z'", "/q?a='b'"])
      await (await http.send(`${server.url}${path}`, {})).text();
    // An empty query stays: "/x?" is another URL than "/x" (robots.txt's "/x$" matches only the latter).
    expect(server.requests().map((r) => r.target)).toEqual([
      "/a%20b",
      "/b",
      "/y",
      "/.well-known/z",
      "/q?a=%3Cb%3E",
      "/a%20b?",
      "/a%20b?",
      "/q?",
      "/a/b",
      "/",
      "/a/?q",
      // A query's "'" as written (the guarded fetch gives the URL as it is listed): the parser's is "%27".
      "/.x/..y?q='z'",
      "/q?a='b'",
    ]);
  });

  test("HEAD, 204 and 304 have no body, whatever Content-Length says; the connection serves on", async () => {
    const server = rawServer((req, conn) => {
      const status = req.target === "/204" ? "204 No Content" : req.target === "/304" ? "304 Not Modified" : "200 OK";
      void send(conn, response(status, [["Content-Length", 10]], req.method === "HEAD" || status !== "200 OK" ? "" : "0123456789"));
    });
    const http = client();
    const head = await http.send(`${server.url}/head`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    for (const path of ["/204", "/304"]) {
      const res = await http.send(`${server.url}${path}`, {});
      expect(res.body).toBeNull();
    }
    expect(await (await http.send(`${server.url}/after`, {})).text()).toBe("0123456789");
    expect(server.connections).toHaveLength(1);
  });

  test("interim 1xx responses are skipped; 101 is an error", async () => {
    const server = rawServer((req, conn) => {
      if (req.target === "/101") return void send(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n");
      void send(conn, `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n`);
      void send(conn, response("200 OK", [["Content-Length", 5]], "final"));
    });
    const res = await client().send(`${server.url}/`, {});
    expect(res.status).toBe(200);
    expect(res.headers.get("link")).toBeNull();
    expect(await res.text()).toBe("final");
    const error = await errorOf(client().send(`${server.url}/101`, {}));
    expect(error).toMatchObject({ code: "ERR_HTTP_MALFORMED", message: "malformed HTTP response (unexpected 101 Switching Protocols)" });
  });

  test("a response that arrives a byte at a time, with bare LF line ends and a folded field", async () => {
    const server = rawServer(async (_, conn) => {
      for (const byte of "HTTP/1.1 200 OK\nX-Folded: one\n  two\nContent-Length: 4\n\nbody") {
        await send(conn, byte);
        await Bun.sleep(1);
      }
    });
    const res = await client().send(`${server.url}/`, {});
    expect(res.headers.get("x-folded")).toBe("one two");
    expect(await res.text()).toBe("body");
  });

  test("connection refused carries ECONNREFUSED", async () => {
    const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = listener.port;
    listener.stop(true);
    const error = await errorOf(client().send(`http://127.0.0.1:${port}/`, {}));
    expect(error!.code).toBe("ECONNREFUSED");
  });

  const noIpv6 = (() => {
    try {
      Bun.listen({ hostname: "::1", port: 0, socket: { data() {} } }).stop(true);
      return null;
    } catch (err) {
      return `no IPv6 loopback on this machine (listening on ::1 failed: ${(err as Error).message})`;
    }
  })();
  // A skip says why, in its name and on the console, rather than passing unnoticed.
  if (noIpv6) console.warn(`http-client.test.ts: "an IPv6 literal in brackets" skipped: ${noIpv6}`);

  test.skipIf(noIpv6 !== null)(`an IPv6 literal in brackets${noIpv6 ? ` (skipped: ${noIpv6})` : ""}`, async () => {
    let seen = "";
    const listener = Bun.listen({
      hostname: "::1",
      port: 0,
      socket: {
        data(socket, chunk) {
          seen = Buffer.from(chunk).toString("latin1");
          socket.write(response("200 OK", [["Content-Length", 3]], "six"));
        },
      },
    });
    servers.push(listener);
    const res = await client().send(`http://[::1]:${listener.port}/v6`, {});
    expect(await res.text()).toBe("six");
    expect(seen).toStartWith(`GET /v6 HTTP/1.1\r\nHost: [::1]:${listener.port}\r\n`);
  });
});

describe("framing", () => {
  test("chunked: extensions, trailers, chunks split across packets; the connection serves on", async () => {
    const server = rawServer(async (req, conn) => {
      if (req.target === "/next") return void send(conn, response("200 OK", [["Content-Length", 4]], "next"));
      await send(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhel");
      await Bun.sleep(5);
      await send(conn, "lo\r\n0000");
      await Bun.sleep(5);
      await send(conn, "000007 ; e");
      await Bun.sleep(5);
      await send(conn, "xt\r\n, world\r");
      await Bun.sleep(5);
      await send(conn, "\n0\r\nX-Trailer: ignored\r\n");
      await Bun.sleep(5);
      await send(conn, "\r\n");
    });
    const http = client();
    const res = await http.send(`${server.url}/`, {});
    expect(await res.text()).toBe("hello, world");
    expect(res.headers.get("x-trailer")).toBeNull();
    expect(await (await http.send(`${server.url}/next`, {})).text()).toBe("next");
    expect(server.connections).toHaveLength(1);
  });

  test("a body delimited by the server closing the connection", async () => {
    const server = rawServer(async (_, conn) => {
      await send(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil ");
      await Bun.sleep(10);
      await send(conn, "the end");
      conn.socket.end();
    });
    const http = client();
    expect(await (await http.send(`${server.url}/`, {})).text()).toBe("until the end");
    expect(await (await http.send(`${server.url}/`, {})).text()).toBe("until the end");
    expect(server.connections).toHaveLength(2);
  });

  test("Content-Length: repeated equal values are one length; conflicting, negative or overflowing ones are errors", async () => {
    const lengths: Record<string, [string, string][]> = {
      "/same": [
        ["Content-Length", "3"],
        ["Content-Length", "3, 3"],
      ],
      "/conflict": [
        ["Content-Length", "3"],
        ["Content-Length", "4"],
      ],
      "/negative": [["Content-Length", "-1"]],
      "/huge": [["Content-Length", "99999999999999999999"]],
      "/hex": [["Content-Length", "0x3"]],
    };
    const server = rawServer((req, conn) => void send(conn, response("200 OK", lengths[req.target]!, "abc")));
    const http = client();
    expect(await (await http.send(`${server.url}/same`, {})).text()).toBe("abc");
    for (const path of ["/conflict", "/negative", "/huge", "/hex"]) {
      const error = await errorOf(http.send(`${server.url}${path}`, {}));
      expect(error).toMatchObject({ code: "ERR_HTTP_MALFORMED" });
      expect(error!.message).toStartWith("malformed HTTP response (invalid Content-Length");
    }
  });

  test("invalid chunk sizes and chunk data without CRLF are errors", async () => {
    const bodies: Record<string, string> = {
      "/letters": "zz\r\nabc\r\n0\r\n\r\n",
      "/overflow": "fffffffffffffffff\r\nabc\r\n0\r\n\r\n",
      "/negative": "-5\r\nabc\r\n0\r\n\r\n",
      "/nocrlf": "3\r\nabcX0\r\n\r\n",
      "/longline": `1;${"x".repeat(5000)}\r\na\r\n0\r\n\r\n`,
    };
    const server = rawServer((req, conn) => void send(conn, `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${bodies[req.target]}`));
    for (const path of Object.keys(bodies)) {
      const error = await errorOf(client().send(`${server.url}${path}`, {}));
      expect(error).toMatchObject({ code: "ERR_HTTP_MALFORMED" });
    }
  });

  test("a transfer coding other than chunked is refused", async () => {
    const server = rawServer((_, conn) => void send(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"));
    const error = await errorOf(client().send(`${server.url}/`, {}));
    expect(error).toMatchObject({ code: "ERR_HTTP_UNSUPPORTED_ENCODING" });
  });

  test("a connection closed mid-body: the request fails with ECONNRESET, a streamed body errors", async () => {
    const big = pseudoText(600 * 1024);
    const server = rawServer(async (req, conn) => {
      if (req.target === "/small") await send(conn, response("200 OK", [["Content-Length", 100]], "only ten b"));
      else await send(conn, Buffer.concat([response("200 OK", [["Content-Length", 1024 * 1024]]), big]));
      await Bun.sleep(20);
      conn.socket.end();
    });
    const small = await errorOf(client().send(`${server.url}/small`, {}));
    expect(small).toMatchObject({ code: "ECONNRESET", message: "connection closed before the end of the response" });
    const res = await client().send(`${server.url}/big`, {});
    expect(res.status).toBe(200);
    const error = await errorOf(res.bytes());
    expect(error).toMatchObject({ code: "ECONNRESET" });
  });

  test("a connection closed before any response byte fails with ECONNRESET", async () => {
    const server = rawServer((_, conn) => void conn.socket.end());
    const error = await errorOf(client().send(`${server.url}/`, {}));
    expect(error).toMatchObject({ code: "ECONNRESET", message: "connection closed before a response" });
    expect(server.connections).toHaveLength(1);
  });
});

describe("keep-alive", () => {
  test("one connection serves sequential requests; Connection: close and HTTP/1.0 end it", async () => {
    const server = rawServer((req, conn) => {
      if (req.target === "/close")
        return void send(
          conn,
          response(
            "200 OK",
            [
              ["Content-Length", 1],
              ["Connection", "close"],
            ],
            "c",
          ),
        );
      if (req.target === "/http10") return void send(conn, "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n10");
      if (req.target === "/http10-keep") return void send(conn, "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nka");
      void send(conn, response("200 OK", [["Content-Length", 2]], "ok"));
    });
    const http = client();
    const get = async (path: string) => (await http.send(`${server.url}${path}`, {})).text();
    for (let i = 0; i < 5; i++) expect(await get("/")).toBe("ok");
    expect(server.connections).toHaveLength(1);
    expect(await get("/close")).toBe("c");
    expect(await get("/")).toBe("ok");
    expect(server.connections).toHaveLength(2);
    expect(await get("/http10")).toBe("10");
    expect(await get("/")).toBe("ok");
    expect(server.connections).toHaveLength(3);
    expect(await get("/http10-keep")).toBe("ka");
    expect(await get("/")).toBe("ok");
    expect(server.connections).toHaveLength(3);
    expect(http.stats()).toEqual({ opened: 3, idle: 1 });
  });

  test("a caller's Connection: close or keepalive: false is not pooled", async () => {
    const server = okServer();
    const http = client();
    await (await http.send(`${server.url}/`, { headers: { Connection: "close" } })).text();
    await (await http.send(`${server.url}/`, { keepalive: false })).text();
    expect(server.requests().map((r) => r.headers.connection)).toEqual(["close", "close"]);
    expect(http.stats()).toEqual({ opened: 2, idle: 0 });
  });

  test("parallel requests open parallel connections; idle ones past maxIdlePerKey are closed", async () => {
    const server = rawServer(async (_, conn) => {
      await Bun.sleep(30);
      void send(conn, response("200 OK", [["Content-Length", 2]], "ok"));
    });
    const http = client({ maxIdlePerKey: 2 });
    const texts = await Promise.all(Array.from({ length: 5 }, async () => (await http.send(`${server.url}/`, {})).text()));
    expect(texts).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    expect(server.connections).toHaveLength(5);
    expect(http.stats()).toEqual({ opened: 5, idle: 2 });
    await waitFor(() => server.connections.filter((c) => c.closed).length === 3, 2000, "three connections closed");
  });

  test("keys: another port, scheme or TLS server name is another pool", async () => {
    const a = okServer("a");
    const b = okServer("b");
    const http = client();
    expect(await (await http.send(`${a.url}/`, {})).text()).toBe("a");
    expect(await (await http.send(`${b.url}/`, {})).text()).toBe("b");
    expect(await (await http.send(`${a.url}/`, {})).text()).toBe("a");
    expect([a.connections.length, b.connections.length]).toEqual([1, 1]);
  });

  test("idle connections close after idleTimeoutMs", async () => {
    const server = okServer();
    const http = client({ idleTimeoutMs: 100 });
    await (await http.send(`${server.url}/`, {})).text();
    expect(http.stats().idle).toBe(1);
    await waitFor(() => server.connections[0]!.closed, 2000, "the connection to close");
    expect(http.stats().idle).toBe(0);
    await (await http.send(`${server.url}/`, {})).text();
    expect(server.connections).toHaveLength(2);
  });

  test("a server that closed an idle connection is noticed: the next request opens another", async () => {
    const server = rawServer(async (_, conn) => {
      await send(conn, response("200 OK", [["Content-Length", 2]], "ok"));
      await Bun.sleep(10);
      conn.socket.end();
    });
    const http = client();
    await (await http.send(`${server.url}/`, {})).text();
    await waitFor(() => server.connections[0]!.closed, 2000, "the connection to close");
    await waitFor(() => http.stats().idle === 0, 2000, "no idle connection left in the pool");
    expect(await (await http.send(`${server.url}/`, {})).text()).toBe("ok");
    expect(server.connections).toHaveLength(2);
  });

  test("a reused connection that fails before any response byte is retried once on a new one", async () => {
    // The second request on each connection finds it closed (the server's keep-alive ran out just then).
    const server = rawServer((_, conn) => {
      if (conn.requests.length > 1) conn.socket.terminate();
      else void send(conn, response("200 OK", [["Content-Length", 2]], "ok"));
    });
    const http = client();
    expect(await (await http.send(`${server.url}/1`, {})).text()).toBe("ok");
    expect(await (await http.send(`${server.url}/2`, {})).text()).toBe("ok");
    expect(server.connections.map((c) => c.requests.map((r) => r.target))).toEqual([["/1", "/2"], ["/2"]]);
  });

  test("only once: a retried request that fails again fails", async () => {
    let served = 0;
    const server = rawServer((_, conn) => {
      if (served++ === 0) void send(conn, response("200 OK", [["Content-Length", 2]], "ok"));
      else conn.socket.terminate();
    });
    const http = client();
    await (await http.send(`${server.url}/1`, {})).text();
    const error = await errorOf(http.send(`${server.url}/2`, {}));
    expect(error!.code).toBe("ECONNRESET");
    expect(server.requests().map((r) => r.target)).toEqual(["/1", "/2", "/2"]);
  });

  test("a response that fails after its first byte is not retried", async () => {
    const server = rawServer((_, conn) => {
      if (conn.requests.length === 1) void send(conn, response("200 OK", [["Content-Length", 2]], "ok"));
      else void send(conn, "HTTP/1.1 200 OK\r\nContent-").then(() => conn.socket.end());
    });
    const http = client();
    await (await http.send(`${server.url}/1`, {})).text();
    const error = await errorOf(http.send(`${server.url}/2`, {}));
    expect(error!.code).toBe("ECONNRESET");
    expect(server.requests()).toHaveLength(2);
  });

  test("a body cancelled before its end closes the connection", async () => {
    const big = pseudoText(2 * 1024 * 1024);
    const server = rawServer(
      (req, conn) =>
        void send(
          conn,
          req.target === "/big"
            ? response("200 OK", [["Content-Length", big.byteLength]], big)
            : response("200 OK", [["Content-Length", 2]], "ok"),
        ),
    );
    const http = client();
    const res = await http.send(`${server.url}/big`, {});
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.value!.byteLength).toBeGreaterThan(0);
    await reader.cancel();
    await waitFor(() => server.connections[0]!.closed, 2000, "the connection to close");
    expect(await (await http.send(`${server.url}/small`, {})).text()).toBe("ok");
    expect(server.connections).toHaveLength(2);
  });

  test("bytes after the end of a response (a second response nobody asked for) end the connection", async () => {
    const server = rawServer(
      (_, conn) =>
        void send(
          conn,
          Buffer.concat([response("200 OK", [["Content-Length", 3]], "one"), response("200 OK", [["Content-Length", 3]], "two")]),
        ),
    );
    const http = client();
    expect(await (await http.send(`${server.url}/`, {})).text()).toBe("one");
    expect(await (await http.send(`${server.url}/`, {})).text()).toBe("one");
    expect(server.connections).toHaveLength(2);
    await waitFor(() => server.connections[0]!.closed, 2000, "the connection to close");
  });

  test("bytes arriving on an idle connection end it", async () => {
    const server = rawServer(async (_, conn) => {
      await send(conn, response("200 OK", [["Content-Length", 2]], "ok"));
      await Bun.sleep(20);
      await send(conn, "surprise");
    });
    const http = client();
    await (await http.send(`${server.url}/`, {})).text();
    await waitFor(() => server.connections[0]!.closed, 2000, "the connection to close");
    expect(http.stats().idle).toBe(0);
  });
});

describe("bodies", () => {
  test("a body larger than bufferBytes arrives as a stream, in order, and the connection serves on", async () => {
    const big = pseudoText(3 * 1024 * 1024 + 17);
    const server = rawServer(
      (req, conn) =>
        void send(
          conn,
          req.target === "/big"
            ? response("200 OK", [["Content-Length", big.byteLength]], big)
            : response("200 OK", [["Content-Length", 2]], "ok"),
        ),
    );
    const http = client();
    const res = await http.send(`${server.url}/big`, {});
    expect(res).not.toBeInstanceOf(BufferedResponse);
    expect(await res.bytes()).toEqual(big);
    expect(await (await http.send(`${server.url}/small`, {})).text()).toBe("ok");
    expect(server.connections).toHaveLength(1);
  });

  test("a slow reader pauses the socket: a server that sends forever costs what is read", async () => {
    const chunk = new Uint8Array(64 * 1024).fill(120);
    let sent = 0;
    const server = rawServer(async (_, conn) => {
      await send(conn, "HTTP/1.1 200 OK\r\n\r\n");
      while (!conn.closed && sent < 512 * 1024 * 1024) {
        await send(conn, chunk);
        sent += chunk.byteLength;
      }
    });
    const res = await client().send(`${server.url}/`, {});
    const { bytes, overflow } = await readCapped(res, 1024 * 1024, never);
    expect(bytes.byteLength).toBe(1024 * 1024);
    expect(overflow).toBe(true);
    await waitFor(() => server.connections[0]!.closed, 2000, "the connection to close");
    // The kernel's buffers and the stream's high-water mark, not 512 MiB.
    expect(sent).toBeLessThan(32 * 1024 * 1024);
  });

  test("a streamed body that ends while its reader is behind: the connection serves the next request", async () => {
    // The last piece of the body filled the stream past its high-water mark, which paused the
    // socket; the body ended there and the connection went back to the pool paused. A stream
    // that is closed is never pulled again, so nothing resumed it: the next request on it was
    // written and its answer never read, until the request's own deadline (a page counted failed).
    const big = pseudoText(300 * 1024);
    const head = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${big.byteLength}\r\n\r\n`);
    const server = rawServer(({ target }, conn) => {
      if (target === "/big") void send(conn, Buffer.concat([head, big.subarray(0, 270 * 1024)]));
      else void send(conn, response("200 OK", [["Content-Length", 2]], "ok"));
    });
    const http = client();
    // Handed over as a stream once past bufferBytes (256 KiB): 270 KiB wait in it, unread.
    const res = await http.send(`${server.url}/big`, {});
    void send(server.connections[0]!, big.subarray(270 * 1024));
    await waitFor(() => http.stats().idle === 1, 2000, "one idle connection in the pool");
    expect(await res.bytes()).toEqual(big);
    const next = await http.send(`${server.url}/small`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.text(),
      (err: Error) => `failed: ${err.name}`,
    );
    expect(next).toBe("ok");
    expect(server.connections).toHaveLength(1);
  });

  test("a small whole body is a BufferedResponse: bytes as received, a stream on demand, used once", async () => {
    const server = okServer("héllo wörld", [["Content-Type", "text/plain"]]);
    const http = client();
    const res = await http.send(`${server.url}/`, {});
    expect(res).toBeInstanceOf(BufferedResponse);
    expect(res).toBeInstanceOf(Response);
    expect(res.bodyUsed).toBe(false);
    const copy = res.clone();
    expect(await res.text()).toBe(Buffer.from("héllo wörld", "latin1").toString("utf8"));
    expect(res.bodyUsed).toBe(true);
    await expect(res.bytes()).rejects.toThrow("Body already used");
    expect(new Uint8Array(await copy.arrayBuffer())).toEqual(Buffer.from("héllo wörld", "latin1"));

    const streamed = await http.send(`${server.url}/`, {});
    const reader = streamed.body!.getReader();
    expect(streamed.bodyUsed).toBe(true);
    expect((await reader.read()).value).toEqual(Buffer.from("héllo wörld", "latin1"));
    expect((await reader.read()).done).toBe(true);
    // As a Response of the same bytes and headers would.
    const blob = await (await http.send(`${server.url}/`, {})).blob();
    const native = await new Response(Buffer.from("héllo wörld", "latin1"), { headers: { "Content-Type": "text/plain" } }).blob();
    expect([blob.type, blob.size]).toEqual([native.type, native.size]);
  });

  test("an empty body", async () => {
    const server = okServer("");
    const res = await client().send(`${server.url}/`, {});
    expect(await res.bytes()).toEqual(new Uint8Array(0));
  });
});

describe("content encodings", () => {
  const original = pseudoText(40_000);
  const encoders: Record<string, (bytes: Uint8Array) => Uint8Array> = {
    gzip: (b) => zlib.gzipSync(b),
    "x-gzip": (b) => zlib.gzipSync(b),
    deflate: (b) => zlib.deflateSync(b),
    "deflate (raw)": (b) => zlib.deflateRawSync(b),
    br: (b) => zlib.brotliCompressSync(b),
    "gzip, br": (b) => zlib.brotliCompressSync(zlib.gzipSync(b)),
  };

  test.each(Object.keys(encoders))("%s, small and streamed, decoded; headers as received", async (name) => {
    const encoding = name.replace(" (raw)", "");
    const small = encoders[name]!(original);
    const large = encoders[name]!(pseudoText(3 * 1024 * 1024));
    const server = rawServer((req, conn) => {
      const body = req.target === "/large" ? large : small;
      void send(
        conn,
        response(
          "200 OK",
          [
            ["Content-Length", body.byteLength],
            ["Content-Encoding", encoding],
          ],
          body,
        ),
      );
    });
    const http = client();
    const res = await http.send(`${server.url}/small`, {});
    expect(res.headers.get("content-encoding")).toBe(encoding);
    expect(res.headers.get("content-length")).toBe(String(small.byteLength));
    expect(await res.bytes()).toEqual(original);
    expect(await (await http.send(`${server.url}/large`, {})).bytes()).toEqual(pseudoText(3 * 1024 * 1024));
    expect(server.connections).toHaveLength(1);
  });

  test("chunked and gzipped", async () => {
    const gz = zlib.gzipSync(original);
    const server = rawServer(async (_, conn) => {
      await send(conn, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n");
      for (let at = 0; at < gz.byteLength; at += 1000) {
        const part = gz.subarray(at, at + 1000);
        await send(conn, Buffer.concat([Buffer.from(`${part.byteLength.toString(16)}\r\n`), part, Buffer.from("\r\n")]));
      }
      await send(conn, "0\r\n\r\n");
    });
    expect(await (await client().send(`${server.url}/`, {})).bytes()).toEqual(original);
  });

  test("decompress: false hands the encoded bytes over and asks for no encoding", async () => {
    const gz = zlib.gzipSync(original);
    const server = okServer(gz, [["Content-Encoding", "gzip"]]);
    const res = await client().send(`${server.url}/`, { decompress: false });
    expect(await res.bytes()).toEqual(new Uint8Array(gz));
    expect(server.requests()[0]!.headers["accept-encoding"]).toBeUndefined();
  });

  test("an unknown encoding is an error; a corrupt body errors when read", async () => {
    const server = rawServer(
      (req, conn) =>
        void send(
          conn,
          response(
            "200 OK",
            [
              ["Content-Length", 10],
              ["Content-Encoding", req.target === "/zstd" ? "zstd" : "gzip"],
            ],
            "not gzip!!",
          ),
        ),
    );
    const unknown = await errorOf(client().send(`${server.url}/zstd`, {}));
    expect(unknown).toMatchObject({ code: "ERR_HTTP_UNSUPPORTED_ENCODING", message: 'unsupported content encoding "zstd"' });
    const res = await client().send(`${server.url}/corrupt`, {});
    expect(res.status).toBe(200);
    expect(await errorOf(res.bytes())).toMatchObject({ code: "ERR_HTTP_DECODE" });
  });

  test("gzip bombs stop at readCapped's cap, decoding only about what is read", async () => {
    // 64 MiB of spaces in 64 KiB (a body read whole, decoded at once up to maxSyncDecodedBytes) and
    // 1 GiB of zeros in about 1 MiB (a streamed body).
    const small = Bun.gzipSync(new Uint8Array(64 * 1024 * 1024).fill(32));
    const large = Bun.gzipSync(new Uint8Array(1024 * 1024 * 1024));
    Bun.gc(true);
    const server = rawServer((req, conn) => {
      const body = req.target === "/large" ? large : small;
      void send(
        conn,
        response(
          "200 OK",
          [
            ["Content-Length", body.byteLength],
            ["Content-Encoding", "gzip"],
          ],
          body,
        ),
      );
    });
    const rssBefore = process.memoryUsage().rss;
    for (const path of ["/small", "/large"]) {
      const res = await client().send(`${server.url}${path}`, {});
      const { bytes, overflow } = await readCapped(res, 8 * 1024 * 1024, never);
      expect(overflow).toBe(true);
      expect(bytes.byteLength).toBe(8 * 1024 * 1024);
      expect(bytes.every((b) => b === (path === "/small" ? 32 : 0))).toBe(true);
    }
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(128 * 1024 * 1024);
  }, 30_000);
});

describe("hostile responses", () => {
  test.each([
    ["a garbage status line", "HTTZ/1.1 200 OK\r\n\r\n", "invalid status line"],
    ["HTTP/2", "HTTP/2 200\r\n\r\n", "invalid status line"],
    ["a four-digit status", "HTTP/1.1 2000 OK\r\n\r\n", "invalid status line"],
    ["status 600", "HTTP/1.1 600 Beyond\r\nContent-Length: 0\r\n\r\n", "invalid status 600"],
    ["status 099", "HTTP/1.1 099 Below\r\nContent-Length: 0\r\n\r\n", "invalid status 99"],
    ["binary junk", "\x00\x01\x02\xff\r\n\r\n", "invalid status line"],
    ["a header line without a colon", "HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", "header line without a name"],
    ["a space before the colon", "HTTP/1.1 200 OK\r\nName : value\r\nContent-Length: 0\r\n\r\n", "invalid header field"],
    ["a NUL in a value", "HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 0\r\n\r\n", "invalid header field"],
    ["a fold with nothing to fold into", "HTTP/1.1 200 OK\r\n folded\r\n\r\n", "folded line without a field"],
  ])("%s: rejected, the connection closed", async (_, raw, reason) => {
    const server = rawServer((_, conn) => void send(conn, raw));
    const error = await errorOf(client().send(`${server.url}/`, {}));
    expect(error).toMatchObject({ code: "ERR_HTTP_MALFORMED" });
    expect(error!.message).toContain(reason);
    await waitFor(() => server.connections[0]!.closed, 2000, "the connection to close");
  });

  test("a header section past 64 KiB, or one that never ends", async () => {
    const server = rawServer(async (req, conn) => {
      if (req.target === "/big") return void send(conn, `HTTP/1.1 200 OK\r\n${"X-Pad: 0123456789abcdef\r\n".repeat(3000)}\r\n`);
      await send(conn, "HTTP/1.1 200 OK\r\n");
      while (!conn.closed) await send(conn, "X-More: and more and more\r\n");
    });
    for (const path of ["/big", "/endless"]) {
      const error = await errorOf(client().send(`${server.url}${path}`, {}));
      expect(error).toMatchObject({ code: "ERR_HTTP_HEADERS_TOO_LARGE", message: "HTTP response header section larger than 65536 bytes" });
    }
    await waitFor(() => server.connections.every((c) => c.closed), 2000, "every connection closed");
  });

  test("endless interim responses", async () => {
    const server = rawServer((_, conn) => void send(conn, "HTTP/1.1 100 Continue\r\n\r\n".repeat(100)));
    expect(await errorOf(client().send(`${server.url}/`, {}))).toMatchObject({
      code: "ERR_HTTP_MALFORMED",
      message: "malformed HTTP response (too many interim responses)",
    });
  });

  test("endless trailers", async () => {
    const server = rawServer(async (_, conn) => {
      await send(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n");
      while (!conn.closed) await send(conn, "X-Trailer: more\r\n");
    });
    expect(await errorOf(client().send(`${server.url}/`, {}))).toMatchObject({ code: "ERR_HTTP_HEADERS_TOO_LARGE" });
  });

  test("500 random responses: each one rejected or answered, never a crash, every socket closed", async () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const pieces = [
      "HTTP/1.1 ",
      "HTTP/1.0 ",
      "200 OK",
      "204",
      "1",
      "\r\n",
      "\n",
      "\r",
      ":",
      " ",
      "Content-Length: ",
      "Transfer-Encoding: chunked",
      "Content-Encoding: gzip",
      "Connection: close",
      "-1",
      "ff",
      "0",
      "\x00",
      "\xff",
      "abc",
    ];
    const responses = Array.from({ length: 500 }, () =>
      Array.from({ length: 1 + Math.floor(random() * 14) }, () => pieces[Math.floor(random() * pieces.length)]).join(""),
    );
    let i = 0;
    const server = rawServer((_, conn) => {
      const raw = responses[i++]!;
      void send(conn, raw).then(() => setTimeout(() => conn.socket.end(), 5));
    });
    const http = client();
    let answered = 0;
    let rejected = 0;
    for (let n = 0; n < responses.length; n++) {
      const signal = AbortSignal.timeout(1000);
      try {
        const res = await http.send(`${server.url}/${n}`, { signal });
        await res.bytes().catch(() => {});
        answered++;
      } catch {
        rejected++;
      }
    }
    expect(answered + rejected).toBe(500);
    expect(rejected).toBeGreaterThan(0);
    await waitFor(() => server.connections.every((c) => c.closed), 5000, "every connection closed");
  }, 30_000);
});

test("failures read as the crawler reports them (describeFailure)", async () => {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const refusedPort = listener.port;
  listener.stop(true);
  const closing = rawServer((_, conn) => void conn.socket.end());
  const garbage = rawServer((_, conn) => void send(conn, "SMTP ready\r\n\r\n"));
  const http = client();
  const reasons = await Promise.all(
    [`http://127.0.0.1:${refusedPort}/`, `${closing.url}/`, `${garbage.url}/`].map((url) =>
      http.send(url, {}).then(() => "answered", describeFailure),
    ),
  );
  expect(reasons).toEqual(["connection refused", "connection reset", 'malformed HTTP response (invalid status line "SMTP ready")']);
});

describe("abort", () => {
  /** Accepts, reads the request, answers per `stage`, then stalls. */
  function stalling(stage: "nothing" | "headers" | "part of the body") {
    return rawServer((_, conn) => {
      if (stage === "headers") void send(conn, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n");
      if (stage === "part of the body")
        void send(conn, Buffer.concat([response("200 OK", [["Content-Length", 1024 * 1024]]), pseudoText(300 * 1024)]));
    });
  }

  test("an aborted signal rejects at once with its reason, without connecting", async () => {
    const server = okServer();
    const reason = new Error("already stopped");
    const error = await errorOf(client().send(`${server.url}/`, { signal: AbortSignal.abort(reason) }));
    expect(error).toBe(reason);
    expect(await connectionsBeforeProbe(server)).toBe(0);
  });

  test.each(["nothing", "headers"] as const)("after %s: the signal's reason, promptly, and the connection closed", async (stage) => {
    const server = stalling(stage);
    const controller = new AbortController();
    const pending = client().send(`${server.url}/`, { signal: controller.signal });
    await waitFor(() => server.requests().length === 1, 2000, "the request at the server");
    const reason = new Error("deadline");
    const start = performance.now();
    controller.abort(reason);
    expect(await errorOf(pending)).toBe(reason);
    expect(performance.now() - start).toBeLessThan(50);
    await waitFor(() => server.connections[0]!.closed, 1000, "the connection to close");
  });

  test("during a streamed body: the body read fails with the signal's reason", async () => {
    const server = stalling("part of the body");
    const controller = new AbortController();
    const res = await client().send(`${server.url}/`, { signal: controller.signal });
    const reading = res.bytes();
    await Bun.sleep(20);
    const reason = new Error("deadline");
    controller.abort(reason);
    expect(await errorOf(reading)).toBe(reason);
    await waitFor(() => server.connections[0]!.closed, 1000, "the connection to close");
  });

  test("a signal aborted after the response ended changes nothing", async () => {
    const server = okServer("done");
    const controller = new AbortController();
    const http = client();
    const res = await http.send(`${server.url}/`, { signal: controller.signal });
    controller.abort(new Error("late"));
    expect(await res.text()).toBe("done");
    expect(http.stats().idle).toBe(1);
  });
});

describe("TLS", () => {
  let tls: HttpsServer;
  let url = "";
  const seen: { servername: unknown; host: string | undefined; path: string | undefined }[] = [];
  let secureConnections = 0;

  beforeAll(async () => {
    tls = createHttpsServer({ cert: CERT, key: KEY }, (req, res) => {
      seen.push({ servername: (req.socket as unknown as { servername?: unknown }).servername, host: req.headers.host, path: req.url });
      if (req.url === "/gzip") res.setHeader("Content-Encoding", "gzip");
      res.end(req.url === "/gzip" ? zlib.gzipSync("secure, compressed") : "secure");
    });
    tls.on("secureConnection", () => secureConnections++);
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
  });
  afterAll(() => tls?.close());

  test("verifies the certificate against serverName, sends it as SNI, reuses the connection", async () => {
    const http = client();
    const init = { headers: { Host: "rebind.test" }, tls: { serverName: "rebind.test", ca: CERT } };
    const before = secureConnections;
    expect(await (await http.send(`${url}/one`, init)).text()).toBe("secure");
    expect(await (await http.send(`${url}/two`, init)).text()).toBe("secure");
    expect(secureConnections - before).toBe(1);
    expect(seen.slice(-2)).toEqual([
      { servername: "rebind.test", host: "rebind.test", path: "/one" },
      { servername: "rebind.test", host: "rebind.test", path: "/two" },
    ]);
  });

  test("a certificate that does not name the server is refused, even with a pooled connection to the same address", async () => {
    const http = client();
    await (await http.send(`${url}/`, { tls: { serverName: "rebind.test", ca: CERT } })).text();
    const error = await errorOf(http.send(`${url}/`, { tls: { serverName: "other.test", ca: CERT } }));
    expect(error!.code).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
  });

  test("without a server name the certificate must name the IP", async () => {
    const error = await errorOf(client().send(`${url}/`, { tls: { ca: CERT } }));
    expect(error!.code).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
  });

  test("the default trust store refuses a self-signed certificate; rejectUnauthorized: false accepts it", async () => {
    const error = await errorOf(client().send(`${url}/`, { tls: { serverName: "rebind.test" } }));
    expect(error!.code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
    expect(await (await client().send(`${url}/`, { tls: { serverName: "rebind.test", rejectUnauthorized: false } })).text()).toBe("secure");
  });

  test("checkServerIdentity runs and may refuse", async () => {
    const names: string[] = [];
    const checkServerIdentity = (name: string) => {
      names.push(name);
      return new Error("not this one");
    };
    const error = await errorOf(client().send(`${url}/`, { tls: { serverName: "rebind.test", ca: CERT, checkServerIdentity } }));
    expect(error!.message).toBe("not this one");
    expect(names).toEqual(["rebind.test"]);
  });

  test("a compressed body over TLS", async () => {
    const res = await client().send(`${url}/gzip`, { tls: { serverName: "rebind.test", ca: CERT } });
    expect(await res.text()).toBe("secure, compressed");
  });
});
