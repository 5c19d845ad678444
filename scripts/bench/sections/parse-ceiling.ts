// The parser limit of the crawl: how many of the site's pages per second genapi's own page code
// (decodeHtml + extractPage, as the crawler calls them) handles on one core with no network.
// Usage: bun parse-ceiling.ts DIR PATHS_FILE SECONDS; prints {"pagesPerSecond": N, "cpuMicrosPerPage": M}.
// The CPU time per page is the figure to compare on a shared machine: the rate counts the time the
// process waited for the core, the CPU time does not.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defaultCrawlLimits } from "../../../src/crawler/index.ts";
import { decodeHtml, extractPage } from "../../../src/crawler/html/links.ts";

const [dir, pathsFile, seconds] = Bun.argv.slice(2);
if (seconds === undefined) throw new Error("usage: parse-ceiling.ts DIR PATHS_FILE SECONDS");
const paths = readFileSync(pathsFile!, "utf8").trim().split("\n").slice(0, 1000);
const pages = paths.map((path) => ({
  url: `http://127.0.0.1:8080${path}`,
  bytes: readFileSync(join(dir!, path.endsWith("/") ? `${path}index.html` : path)),
}));

const parse = (page: (typeof pages)[number]) =>
  extractPage(decodeHtml(page.bytes, "utf-8"), page.url, "genapi", defaultCrawlLimits.maxLinksPerPage);
for (const page of pages) parse(page); // warm-up
let parsed = 0;
const cpuBefore = process.cpuUsage();
const started = performance.now();
while (performance.now() - started < Number(seconds) * 1000) {
  for (const page of pages) parse(page);
  parsed += pages.length;
}
const elapsed = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
console.log(JSON.stringify({ pagesPerSecond: parsed / (elapsed / 1000), cpuMicrosPerPage: (cpu.user + cpu.system) / parsed }));
