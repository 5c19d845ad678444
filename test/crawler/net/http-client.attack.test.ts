// The crawler's HTTP/1.1 client (src/crawler/net/http-client.ts) against hostile servers: each test is
// an attack a site the crawler is pointed at could make, on a raw TCP server on a 127.0.0.1
// ephemeral port that writes byte for byte what the attack needs. Connections the client ends are
// seen as closed on the server's side.
import { afterEach, expect, test } from "bun:test";
import { readCapped } from "../../../src/crawler/net/body.ts";
import { createHttpClient, type HttpClient } from "../../../src/crawler/net/http-client.ts";
import { rawServer, send, stopRawServers } from "../../support/raw-http-server.ts";
import { waitFor } from "../../support/wait.ts";

const clients: HttpClient[] = [];

afterEach(() => {
  for (const made of clients.splice(0)) made.close();
  stopRawServers();
});

function client(): HttpClient {
  const made = createHttpClient();
  clients.push(made);
  return made;
}

const never = new AbortController().signal;
const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => err as Error & { code?: string },
  );

// ---------------------------------------------------------------------------------------------

test.each([
  [
    "Transfer-Encoding: chunked",
    (block: Uint8Array) => Buffer.concat([Buffer.from(`${block.byteLength.toString(16)}\r\n`), block, Buffer.from("\r\n")]),
  ],
  ["Transfer-Encoding: identity", (block: Uint8Array) => block],
])("Content-Length: 10 beside %s: the body is not taken to be 10 bytes, readCapped's cap holds", async (transfer, frame) => {
  // Transfer-Encoding overrides Content-Length (RFC 9112 6.3): a Content-Length left in the headers
  // let readCapped read "10 bytes" with res.bytes(), uncapped, while the framing ran on for 64 MiB.
  const block = frame(new Uint8Array(64 * 1024).fill(97));
  let sent = 0;
  const server = rawServer(async (_, conn) => {
    await send(conn, `HTTP/1.1 200 OK\r\nContent-Length: 10\r\n${transfer}\r\n\r\n`);
    while (!conn.closed && sent < 64 * 1024 * 1024) {
      await send(conn, block);
      sent += 64 * 1024;
    }
    conn.socket.end();
  });
  const res = await client().send(`${server.url}/`, {});
  expect(res.headers.get("content-length")).toBeNull();
  const { bytes, overflow } = await readCapped(res, 1024 * 1024, never);
  expect([bytes.byteLength, overflow]).toEqual([1024 * 1024, true]);
  await waitFor(() => server.connections[0]!.closed, 2000, "the connection to close");
  expect(sent).toBeLessThan(32 * 1024 * 1024);
});

test("205 with a body that never ends: the body is not read, the connection is closed at once", async () => {
  // The body was read and dropped for as long as the server sent it, after the Response was handed
  // over: a socket per such page, held open until the server stopped.
  const server = rawServer(async ({ target }, conn) => {
    if (target === "/empty") return void send(conn, "HTTP/1.1 205 Reset Content\r\nContent-Length: 0\r\n\r\n");
    await send(conn, "HTTP/1.1 205 Reset Content\r\n\r\n");
    while (!conn.closed) {
      await send(conn, "x".repeat(1000));
      await Bun.sleep(5);
    }
  });
  const http = client();
  const res = await http.send(`${server.url}/endless`, {});
  expect([res.status, res.body]).toEqual([205, null]);
  await waitFor(() => server.connections[0]!.closed, 1000, "the connection to close");
  // That server sent bytes nobody asked for: it gets a connection per request from now on.
  expect((await http.send(`${server.url}/empty`, {})).status).toBe(205);
  expect((await http.send(`${server.url}/empty`, {})).status).toBe(205);
  expect(server.connections.map((c) => c.requests.map((r) => r.target))).toEqual([["/endless"], ["/empty"], ["/empty"]]);
  // An empty 205 leaves the connection to serve on.
  const polite = rawServer((_, conn) => void send(conn, "HTTP/1.1 205 Reset Content\r\nContent-Length: 0\r\n\r\n"));
  expect((await http.send(`${polite.url}/empty`, {})).status).toBe(205);
  expect((await http.send(`${polite.url}/empty`, {})).status).toBe(205);
  expect(polite.connections.map((c) => c.requests.map((r) => r.target))).toEqual([["/empty", "/empty"]]);
});

test("a body in 1-byte chunks costs a piece per socket read, not a piece per byte", async () => {
  // 6 bytes on the wire per byte of body: every chunk was its own Uint8Array in the buffered body,
  // the stream and readCapped's list, about 100 bytes of memory and a stream read per byte.
  const size = 1024 * 1024;
  const server = rawServer(async (_, conn) => {
    await send(conn, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    const block = Buffer.from("1\r\nz\r\n".repeat(16 * 1024));
    for (let sent = 0; sent < size; sent += 16 * 1024) await send(conn, block);
    await send(conn, "0\r\n\r\n");
  });
  const res = await client().send(`${server.url}/`, {});
  const reader = res.body!.getReader();
  let bytes = 0;
  let reads = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    expect(read.value.every((b: number) => b === 122)).toBe(true);
    bytes += read.value.byteLength;
    reads++;
  }
  expect(bytes).toBe(size);
  // 6 MiB arrive in socket reads of up to 64 KiB or so.
  expect(reads).toBeLessThan(1000);
});

test("a close-delimited body cut by a connection reset is an error, not a shorter page", async () => {
  // RFC 9112 8: a body delimited by the close is complete unless the connection reports an error.
  // Reset at once, no sleep first: TCP delivers the bytes sent before the reset, in order, before
  // it (a 50 ms sleep here only hoped the client had read them by then).
  const server = rawServer(async (_, conn) => {
    await send(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<a href=/one>");
    conn.socket.terminate();
  });
  const error = await errorOf(client().send(`${server.url}/`, {}));
  expect(error).toMatchObject({ code: "ECONNRESET" });
  expect(error!.message).toStartWith("connection closed before the end of the response: ");
});

test("a folded framing or coding field is read folded, as the Response's headers show it", async () => {
  // The fold was added to the headers but not to what framing and decoding read: "Transfer-Encoding:"
  // then " chunked" was read as no coding (a body until the close, chunk sizes and all).
  const gzipped = Bun.gzipSync("folded and gzipped");
  const heads: Record<string, string | Uint8Array> = {
    "/chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
    "/gzip": Buffer.concat([
      Buffer.from(`HTTP/1.1 200 OK\r\nContent-Encoding:\r\n\tgzip\r\nContent-Length: ${gzipped.byteLength}\r\n\r\n`),
      gzipped,
    ]),
    "/length": "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n 5\r\n\r\nok",
  };
  const server = rawServer(({ target }, conn) => void send(conn, heads[target]!));
  const http = client();
  const chunked = await http.send(`${server.url}/chunked`, {});
  expect(chunked.headers.get("transfer-encoding")).toBe("chunked");
  expect(await chunked.text()).toBe("ok");
  expect(await (await http.send(`${server.url}/gzip`, {})).text()).toBe("folded and gzipped");
  expect(server.connections).toHaveLength(1);
  expect(await errorOf(http.send(`${server.url}/length`, {}))).toMatchObject({
    code: "ERR_HTTP_MALFORMED",
    message: 'malformed HTTP response (invalid Content-Length "2 5")',
  });
});

test("a bare CR in the status line is refused, not read as a reason that swallows the fields", async () => {
  const server = rawServer((_, conn) => void send(conn, "HTTP/1.1 200 OK\rContent-Length: 2\r\r\n\r\nok"));
  const error = await errorOf(client().send(`${server.url}/`, {}));
  expect(error).toMatchObject({ code: "ERR_HTTP_MALFORMED" });
  expect(error!.message).toStartWith("malformed HTTP response (invalid status line");
});

test.each([
  [
    "a body longer than its Content-Length",
    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none",
    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray",
  ],
  ["a 204 followed by a body", "HTTP/1.1 204 No Content\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray"],
])("%s, arriving after the response was read and before the connection is reused: never the next answer", async (_, first, extra) => {
  // The extra bytes reach the client's socket after it has read the response and before it writes
  // the next request on the kept-alive connection, in the same turn of the event loop: their data
  // event had not run yet, so the next request was written and the bytes read as its answer.
  const server = rawServer(
    ({ target }, conn) => void send(conn, target === "/first" ? first : "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nreal"),
  );
  const http = client();
  const res = await http.send(`${server.url}/first`, {});
  await res.bytes();
  // Written by the server at once (loopback, a few bytes): they are on the client's socket before the reuse.
  server.connections[0]!.socket.write(extra);
  const next = await http.send(`${server.url}/next`, {});
  expect(await next.text()).toBe("real");
  expect(server.connections.map((c) => c.requests.map((r) => r.target))).toEqual([["/first"], ["/next"]]);
  await waitFor(() => server.connections[0]!.closed, 2000, "the connection to close");
});

test("a server seen sending stray bytes gets no kept-alive connection again: stray bytes that come late have no next request to answer", async () => {
  // HTTP/1.1 cannot tell bytes sent after the next request was written from its answer. Once a
  // server has sent bytes nobody asked for, each later request to it goes on a connection of its
  // own, closed after its response.
  const server = rawServer(
    ({ target }, conn) =>
      void send(
        conn,
        target === "/first" ? "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nonestray" : "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nreal",
      ),
  );
  const http = client();
  expect(await (await http.send(`${server.url}/first`, {})).text()).toBe("one");
  for (const path of ["/a", "/b", "/c"]) {
    expect(await (await http.send(`${server.url}${path}`, {})).text()).toBe("real");
    expect(http.stats().idle).toBe(0);
  }
  expect(server.connections.map((c) => c.requests.map((r) => r.target))).toEqual([["/first"], ["/a"], ["/b"], ["/c"]]);
  // Another server on the same client keeps its connection alive.
  const other = rawServer((_, conn) => void send(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
  for (let i = 0; i < 3; i++) expect(await (await http.send(`${other.url}/x`, {})).text()).toBe("ok");
  expect(other.connections).toHaveLength(1);
});
