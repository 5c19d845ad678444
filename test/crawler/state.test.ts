import { MemoryCrawlState } from "../../src/crawler/state.ts";
import { describeCrawlState } from "../support/crawl-state-conformance.ts";

describeCrawlState("MemoryCrawlState", async (options) => {
  const state = new MemoryCrawlState(options);
  return { state, reopen: async () => state, links: async () => state.linkSource()! };
});
