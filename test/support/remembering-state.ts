// A memory crawl state that also keeps what a site's run hands it of each page (PageRecord.memory),
// as the store keeps it for the next run: for tests of what a run remembers, without a store.
import { MemoryCrawlState, type PageMemory, type PageRecord, type RecordResult } from "../../src/crawler/index.ts";

export class RememberingState extends MemoryCrawlState {
  /** The last memory of each page, by URL. */
  readonly memories = new Map<string, PageMemory>();

  override record(page: PageRecord): Promise<RecordResult> {
    // A page read unchanged keeps the previous run's memory, as the store keeps its row.
    if (page.memory && !("unchanged" in page.memory)) this.memories.set(page.memory.url, page.memory);
    return super.record(page);
  }
}
