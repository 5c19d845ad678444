import { expect, test } from "bun:test";
import { BODY_IN_MEMORY, discardBody, readCapped } from "../../../src/crawler/net/body.ts";
import { chunkStream } from "../../support/streams.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** A body of `chunks`, recording whether the reader cancelled it. */
function chunked(chunks: string[]) {
  const { stream, state } = chunkStream(chunks);
  return { res: new Response(stream), state };
}

const never = new AbortController().signal;

test("reads a body within the cap whole", async () => {
  const { res } = chunked(["ab", "cd", "e"]);
  const body = await readCapped(res, 5, never);
  expect(text(body.bytes)).toBe("abcde");
  expect(body.overflow).toBe(false);
});

test("stops at the cap, keeps the first bytes and cancels the rest", async () => {
  const { res, state } = chunked(["abc", "def", "ghi", "jkl"]);
  const body = await readCapped(res, 5, never);
  expect(text(body.bytes)).toBe("abcde");
  expect(body.overflow).toBe(true);
  expect(state.cancelled).toBe(true);
  expect(state.pulled).toBeLessThan(4);
});

test("an empty body is empty", async () => {
  expect(await readCapped(new Response(null), 10, never)).toEqual({ bytes: new Uint8Array(0), overflow: false });
});

test("rejects with the signal's reason even when the body ignores it", async () => {
  const stalled = new Response(new ReadableStream({ pull: () => new Promise(() => {}) }));
  const ctrl = new AbortController();
  const reading = readCapped(stalled, 10, ctrl.signal);
  ctrl.abort(new Error("stop now"));
  await expect(reading).rejects.toThrow("stop now");
});

test("discardBody cancels an unread body", async () => {
  const { res, state } = chunked(["a"]);
  discardBody(res);
  await Bun.sleep(0);
  expect(state.cancelled).toBe(true);
});

test("discardBody leaves a body already read alone, without asking for its stream", async () => {
  const res = new Response("read");
  await res.text();
  let asked = false;
  Object.defineProperty(res, "body", {
    get() {
      asked = true;
      return null;
    },
  });
  discardBody(res);
  expect(asked).toBe(false);
});

test("a body trickled a byte a piece is read whole and in order as the buffer grows, with or without a declared length", async () => {
  const size = 300_000; // past the first buffer (64 KiB): it has to grow several times
  const expected = Uint8Array.from({ length: size }, (_, i) => (i * 7) & 0xff);
  for (const headers of [{}, { "content-length": String(size) }]) {
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        for (let k = 0; k < 1000 && sent < size; k++, sent++) controller.enqueue(expected.subarray(sent, sent + 1));
        if (sent === size) controller.close();
      },
    });
    const body = await readCapped(new Response(stream, { headers }), 1_000_000, never);
    expect(body.overflow).toBe(false);
    expect(body.bytes.byteLength).toBe(size);
    expect(Buffer.compare(body.bytes, expected)).toBe(0);
  }
});

test("a body already in memory is handed over as it is, and cut at the cap", async () => {
  const bytes = new TextEncoder().encode("abcdefgh");
  const inMemory = (body: Uint8Array) => Object.assign(new Response(body), { [BODY_IN_MEMORY]: true, bytes: async () => body });
  const whole = await readCapped(inMemory(bytes), 8, never);
  expect(whole.bytes).toBe(bytes);
  expect(whole.overflow).toBe(false);
  const cut = await readCapped(inMemory(bytes), 5, never);
  expect(text(cut.bytes)).toBe("abcde");
  expect(cut.overflow).toBe(true);
});
