import { expect, test } from "bun:test";
import { discardBody, readCapped } from "../../src/sitemap/body.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** A body of `chunks`, recording whether the reader cancelled it. */
function chunked(chunks: string[]) {
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[state.pulled++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(new TextEncoder().encode(chunk));
    },
    cancel() {
      state.cancelled = true;
    },
  });
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
