import { MemoryCrawlState } from "../../src/sitemap/crawl-state.ts";
import { describeCrawlState } from "../support/crawl-state-conformance.ts";

describeCrawlState("MemoryCrawlState", async () => {
  const state = new MemoryCrawlState();
  return { state, reopen: async () => state };
});
