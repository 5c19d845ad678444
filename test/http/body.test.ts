// The body read's deadline, against a real server and a client that stops sending.
import { afterAll, expect, test } from "bun:test";
import { BodyTimeoutError, IncompleteBodyError, readBodyBytes } from "../../src/http/body.ts";

const DEADLINE_MS = 300;
let outcome: Promise<unknown> = Promise.resolve();
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  idleTimeout: 30,
  fetch(request) {
    const started = performance.now();
    outcome = readBodyBytes(request, 1024, DEADLINE_MS).then(
      (bytes) => ({ bytes: bytes.byteLength, ms: performance.now() - started }),
      (error) => ({ error, ms: performance.now() - started }),
    );
    return outcome.then(() => new Response(null, { status: 204 }));
  },
});
afterAll(() => server.stop(true));

/** Sends the head and `parts` of a body `gapMs` apart, then closes (or keeps the socket open). */
async function send(parts: string[], gapMs: number, close: boolean) {
  const socket = await Bun.connect({ hostname: "127.0.0.1", port: server.port!, socket: { data: () => {} } });
  socket.write(`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n`);
  for (const part of parts) {
    socket.write(part);
    await Bun.sleep(gapMs);
  }
  if (close) socket.end();
  const result = (await outcome) as { bytes?: number; error?: Error; ms: number };
  socket.end();
  return result;
}

test("a whole body within the deadline is read", async () => {
  const result = await send(["01234", "56789"], 50, false);
  expect(result.bytes).toBe(10);
});

test("a body that stalls fails with BodyTimeoutError at the deadline, not at the idle timeout", async () => {
  const result = await send(["012"], 0, false);
  expect(result.error).toBeInstanceOf(BodyTimeoutError);
  expect((result.error as BodyTimeoutError).status).toBe(408);
  expect(result.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
  expect(result.ms).toBeLessThan(DEADLINE_MS + 2000);
});

test("a trickle that keeps the connection alive meets the same deadline", async () => {
  const result = await send(["0", "1", "2", "3", "4", "5", "6", "7"], 100, false);
  expect(result.error).toBeInstanceOf(BodyTimeoutError);
});

test("a client that closes mid-body: IncompleteBodyError, not an empty AbortError", async () => {
  const result = await send(["012"], 50, true);
  expect(result.error).toBeInstanceOf(IncompleteBodyError);
});
