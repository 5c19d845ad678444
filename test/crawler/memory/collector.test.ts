import { describe, expect, test } from "bun:test";
import { GrowthCollector } from "../../../src/crawler/memory/collector.ts";

const MB = 1024 * 1024;

/** A collector over a resident size the test sets, and the collections it asked for. */
function watched(growth: number, checkEvery: number, start: number) {
  const process = { resident: start, collections: 0, afterCollection: start };
  const collector = new GrowthCollector(
    growth,
    checkEvery,
    () => process.resident,
    () => {
      process.collections++;
      process.resident = process.afterCollection;
    },
  );
  return { process, collector };
}

describe("GrowthCollector", () => {
  test("collects once the process has grown by the threshold, not before", () => {
    const { process, collector } = watched(32 * MB, 1, 100 * MB);
    process.resident = 131 * MB;
    expect(collector.check()).toBe(false);
    process.resident = 132 * MB;
    process.afterCollection = 110 * MB;
    expect(collector.check()).toBe(true);
    expect(process.collections).toBe(1);
    // Measured from the size after the collection: 110 + 32.
    process.resident = 141 * MB;
    expect(collector.check()).toBe(false);
    process.resident = 142 * MB;
    expect(collector.check()).toBe(true);
    expect(process.collections).toBe(2);
  });

  test("measures growth from the lowest size read since the last collection", () => {
    const { process, collector } = watched(32 * MB, 1, 100 * MB);
    process.resident = 80 * MB;
    expect(collector.check()).toBe(false);
    process.resident = 112 * MB;
    expect(collector.check()).toBe(true);
  });

  test("tick reads the size every checkEvery ticks only", () => {
    const { process, collector } = watched(32 * MB, 1_000, 100 * MB);
    process.resident = 200 * MB;
    for (let i = 0; i < 999; i++) collector.tick();
    expect(process.collections).toBe(0);
    collector.tick();
    expect(process.collections).toBe(1);
    process.resident = 200 * MB;
    for (let i = 0; i < 1_999; i++) collector.tick();
    expect(process.collections).toBe(2);
  });
});
