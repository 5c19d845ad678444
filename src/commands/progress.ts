// The live progress line of `genapi crawl` on a terminal: one line redrawn in place (carriage
// return + erase line), at most ~10 times a second, cut to the terminal's width so it never wraps
// (a wrapped line cannot be redrawn with \r), and erased before anything else is written.
import type { CrawlProgress } from "../crawler/index.ts";

const ERASE_LINE = "\r\x1b[2K";
/** At most ~10 redraws a second. */
export const REDRAW_EVERY_MS = 100;

export interface ProgressLine {
  update(progress: CrawlProgress): void;
  /** Erases the line (if one was drawn); the next update draws it again. */
  clear(): void;
}

const count = (n: number) => n.toLocaleString("en-US");

export function formatElapsed(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = String(seconds % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export function pagesPerSecond(pages: number, elapsedMs: number): number {
  return elapsedMs > 0 ? (pages * 1000) / elapsedMs : 0;
}

/** The line's text, e.g. `1,234 pages crawled | 105.2 pages/s | 567 queued | 1,200 listed | 0:12`. */
export function progressText(p: CrawlProgress): string {
  const rate = pagesPerSecond(p.pagesCrawled, p.elapsedMs).toFixed(1);
  return `${count(p.pagesCrawled)} pages crawled | ${rate} pages/s | ${count(p.pagesQueued)} queued | ${count(p.urlsListed)} listed | ${formatElapsed(p.elapsedMs)}`;
}

export function createProgressLine(
  write: (text: string) => void,
  options: { columns: () => number | undefined; now?: () => number },
): ProgressLine {
  const now = options.now ?? Date.now;
  let drawn = false;
  let last = -Infinity;
  return {
    update(progress) {
      const at = now();
      // A little under the interval: the engine's ticker fires every REDRAW_EVERY_MS with jitter.
      if (at - last < REDRAW_EVERY_MS * 0.9) return;
      last = at;
      // A pseudo-terminal without a size says 0 columns.
      const columns = options.columns() || 80;
      const width = Math.max(1, columns - 1);
      write(ERASE_LINE + [...progressText(progress)].slice(0, width).join(""));
      drawn = true;
    },
    clear() {
      if (drawn) write(ERASE_LINE);
      drawn = false;
      last = -Infinity;
    },
  };
}
