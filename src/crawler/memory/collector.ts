// Full collections when the process has grown, not every so many pages.
//
// A crawl's JS heap stays small (20-40 MB: its state is in the store), but every page leaves
// buffers and strings whose memory lives outside the collector's heap accounting, and the
// collector's own schedule lets the process grow long before it returns them: a 50,000-page crawl
// peaked at 166-171 MB RSS without forced collections, 119-121 MB with one every 5,000 pages; a
// 50,000-URL sitemap with images 133-134 MB, 118-122 MB with one every 5,000 entries. A full
// collection costs 20-50 ms (it marks the whole live heap), so at a fixed count it was 10-12 % of
// an unchanged re-crawl's CPU (304s leave little behind) and most of the sitemap writer's, where
// the process hardly grows. So the resident size is read every CHECK_EVERY pages or entries (10 µs
// a read) and a collection runs only when the process has grown by GROWTH_BYTES since the lowest
// size read after the last one: 100,000 pages, 13-17 collections instead of 44 a run, 0.56-0.99 s
// instead of 1.45-1.64 s, peak RSS within 0-7 MB of before. The price shows at 1,000,000 pages: an
// unchanged site's run 2 peaked at 193 MB against 160, a run 1 at 184 against 170, a job with the
// link report at 204 against 203 (notes/bench-profile.md, section 17).

/** How often tick() reads the resident size. */
const CHECK_EVERY = 1_000;
/** Growth that triggers a full collection. */
const GROWTH_BYTES = 32 * 1024 * 1024;

export class GrowthCollector {
  private ticks = 0;
  private base: number;

  constructor(
    private readonly growthBytes: number,
    private readonly checkEvery: number,
    private readonly residentBytes: () => number = () => process.memoryUsage.rss(),
    private readonly collect: () => void = () => Bun.gc(true),
  ) {
    this.base = residentBytes();
  }

  /** One page or entry done: every checkEvery of them, check(). */
  tick(): void {
    if (++this.ticks === this.checkEvery) {
      this.ticks = 0;
      this.check();
    }
  }

  /** Collects if the process has grown by growthBytes since the lowest size seen after the last collection; says whether it did. */
  check(): boolean {
    const now = this.residentBytes();
    if (now < this.base) this.base = now;
    if (now - this.base < this.growthBytes) return false;
    this.collect();
    this.base = this.residentBytes();
    return true;
  }
}

/** The process's one: every crawl, writer and publisher in it grows the same process. */
export const collector = new GrowthCollector(GROWTH_BYTES, CHECK_EVERY);
