import { expect, test } from "bun:test";
import { batchedWriter } from "../../src/http/log-writer.ts";

test("lines written in one turn reach the output together, in order, in one write", async () => {
  const writes: string[] = [];
  const log = batchedWriter((chunk) => writes.push(chunk));
  log.write("a\n");
  log.write("b\n");
  expect(writes).toEqual([]);
  await new Promise((resolve) => setImmediate(resolve));
  expect(writes).toEqual(["a\nb\n"]);
  log.write("c\n");
  log.flush();
  expect(writes).toEqual(["a\nb\n", "c\n"]);
  await new Promise((resolve) => setImmediate(resolve));
  expect(writes).toHaveLength(2);
});
