import { MemoryCrawlState } from "../../src/crawler/state.ts";
import { describeCrawlState } from "../support/crawl-state-conformance.ts";

describeCrawlState("MemoryCrawlState", async () => {
  const state = new MemoryCrawlState();
  return { state, reopen: async () => state };
});
