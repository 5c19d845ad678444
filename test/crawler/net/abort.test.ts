import { describe, expect, test } from "bun:test";
import { settlesOnAbort, untilAborted } from "../../../src/crawler/net/abort.ts";

describe("untilAborted", () => {
  test("a work that ignores its signal is rejected with the signal's reason as it aborts, and its late value discarded", async () => {
    const ctrl = new AbortController();
    let answer!: (value: string) => void;
    const work = new Promise<string>((resolve) => {
      answer = resolve;
    });
    const discarded: string[] = [];
    const raced = untilAborted(work, ctrl.signal, (late) => discarded.push(late));
    ctrl.abort(new Error("stopped"));
    await expect(raced).rejects.toThrow("stopped");
    answer("late");
    await work;
    await Promise.resolve();
    expect(discarded).toEqual(["late"]);
  });

  test("a work marked as settling on the signal: a value that comes after the abort is discarded and the reason thrown", async () => {
    const ctrl = new AbortController();
    let answer!: (value: string) => void;
    const work = settlesOnAbort(
      new Promise<string>((resolve) => {
        answer = resolve;
      }),
      ctrl.signal,
    );
    const discarded: string[] = [];
    const raced = untilAborted(work, ctrl.signal, (late) => discarded.push(late));
    ctrl.abort(new Error("stopped"));
    answer("late");
    await expect(raced).rejects.toThrow("stopped");
    expect(discarded).toEqual(["late"]);
  });

  test("a marked work's own error before the abort is its answer; after the abort, the signal's reason is", async () => {
    const before = new AbortController();
    await expect(untilAborted(settlesOnAbort(Promise.reject(new Error("refused")), before.signal), before.signal)).rejects.toThrow(
      "refused",
    );
    const after = new AbortController();
    let fail!: (err: Error) => void;
    const work = settlesOnAbort(
      new Promise<string>((_, reject) => {
        fail = reject;
      }),
      after.signal,
    );
    const raced = untilAborted(work, after.signal);
    after.abort(new Error("stopped"));
    fail(new Error("reset"));
    await expect(raced).rejects.toThrow("stopped");
  });

  test("a work marked for another signal is raced as any other", async () => {
    const other = new AbortController();
    const ctrl = new AbortController();
    const work = settlesOnAbort(new Promise<string>(() => {}), other.signal);
    const raced = untilAborted(work, ctrl.signal);
    ctrl.abort(new Error("stopped"));
    await expect(raced).rejects.toThrow("stopped");
  });
});
