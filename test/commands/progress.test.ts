// The progress line of `genapi crawl`: redrawn in place, at most ~10 times a second, never wider than
// the terminal, erased only when drawn.
import { describe, expect, test } from "bun:test";
import { createProgressLine, formatElapsed, progressText } from "../../src/commands/progress.ts";

const progress = { pagesCrawled: 12_345, pagesQueued: 678, urlsListed: 12_000, elapsedMs: 61_500 };

describe("progress line", () => {
  test("says pages crawled, pages/s, queued, listed and elapsed", () => {
    expect(progressText(progress)).toBe("12,345 pages crawled | 200.7 pages/s | 678 queued | 12,000 listed | 1:01");
    expect(formatElapsed(3_725_000)).toBe("1:02:05");
  });

  test("redraws in place, skips redraws closer than ~100 ms, erases once at the end", () => {
    let now = 0;
    const written: string[] = [];
    const line = createProgressLine((text) => written.push(text), { columns: () => 120, now: () => now });
    line.update(progress);
    now = 50;
    line.update(progress);
    now = 100;
    line.update({ ...progress, pagesCrawled: 12_346 });
    expect(written).toEqual([`\r\x1b[2K${progressText(progress)}`, `\r\x1b[2K${progressText({ ...progress, pagesCrawled: 12_346 })}`]);
    line.clear();
    line.clear();
    expect(written.slice(2)).toEqual(["\r\x1b[2K"]);
  });

  test("cut to the terminal's width less one, so it never wraps; a sizeless terminal is 80 wide", () => {
    const written: string[] = [];
    createProgressLine((text) => written.push(text), { columns: () => 30 }).update(progress);
    createProgressLine((text) => written.push(text), { columns: () => 0 }).update(progress);
    expect(written[0]).toBe(`\r\x1b[2K${progressText(progress).slice(0, 29)}`);
    expect(written[1]).toBe(`\r\x1b[2K${progressText(progress)}`);
  });

  test("nothing to erase when nothing was drawn", () => {
    const written: string[] = [];
    createProgressLine((text) => written.push(text), { columns: () => 80 }).clear();
    expect(written).toEqual([]);
  });
});
