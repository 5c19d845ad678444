import { expect, test } from "bun:test";
import { readCapped } from "../../src/crawler/net/body.ts";
import { LargePageGate } from "../../src/crawler/page-budget.ts";

test("the gate grants its permits, queues the rest in order, and hands a released permit on", async () => {
  const gate = new LargePageGate(10, 2, Infinity);
  const signal = new AbortController().signal;
  const a = await gate.acquire(signal);
  const b = await gate.acquire(signal);
  const order: string[] = [];
  const c = gate.acquire(signal).then((release) => {
    order.push("c");
    return release;
  });
  const d = gate.acquire(signal).then((release) => {
    order.push("d");
    return release;
  });
  await Bun.sleep(1);
  expect(order).toEqual([]);
  a(100);
  a(100); // a second release is ignored
  (await c)(1);
  b(1);
  (await d)(1);
  expect(order).toEqual(["c", "d"]);
  // All four released: two permits free again.
  await gate.acquire(signal);
  await gate.acquire(signal);
});

test("a wait for a permit ends with the signal's reason on abort", async () => {
  const gate = new LargePageGate(10, 1, Infinity);
  const ctrl = new AbortController();
  const held = await gate.acquire(ctrl.signal);
  const waiting = gate.acquire(ctrl.signal);
  ctrl.abort(new Error("stopped"));
  expect(waiting).rejects.toThrow("stopped");
  held(0);
  // The aborted waiter took nothing: the permit is free.
  await gate.acquire(new AbortController().signal);
});

test("readCapped enters the large-body hook once, from Content-Length or when the bytes cross the threshold", async () => {
  const signal = new AbortController().signal;
  const entered: string[] = [];
  const hook = (name: string) => ({ threshold: 1000, enter: async () => void entered.push(name) });
  const stream = (chunks: number[]) =>
    new ReadableStream({
      start(controller) {
        for (const size of chunks) controller.enqueue(new Uint8Array(size));
        controller.close();
      },
    });
  await readCapped(new Response(new Uint8Array(2000)), 10_000, signal, hook("declared"));
  await readCapped(new Response(stream([600, 600, 600])), 10_000, signal, hook("crossed"));
  await readCapped(new Response(stream([500, 500])), 10_000, signal, hook("small"));
  expect(entered).toEqual(["declared", "crossed"]);
});
