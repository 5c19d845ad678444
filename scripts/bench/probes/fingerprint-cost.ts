// The fingerprint's cost alone, at the parser (no network): CPU µs a page of decodeHtml + extractPage
// over the crawl section's generated site (fixtures/site.ts), without and with `fingerprint`, in alternating
// rounds so that the shared machine's load falls on both alike. `--base DIR` adds the default path of
// another checkout's sources (its src/crawler/html/links.ts), to compare the default path before and
// after a change. `--crawl` measures whole crawls instead: the site served by fixtures/static-server.ts in a
// child process, crawled in this one through the service's network (createCrawlNetwork: address
// guard, politeness, the HTTP client) into a MemoryCrawlState, CPU µs a page of this process;
// `--url URL` crawls a site already served there instead, and `--json` prints the figures as one
// JSON line (the bench's sites section runs it so, pinned, over its nginx site).
//
//   bun scripts/bench/probes/fingerprint-cost.ts [--pages 2000] [--rounds 6] [--seconds 1] [--base /tmp/other]
//   bun scripts/bench/probes/fingerprint-cost.ts --crawl [--pages 2000 | --url URL] [--rounds 6] [--json]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createCrawlNetwork, defaultCrawlLimits, MemoryCrawlState, NO_HISTORY, runCrawl } from "../../../src/crawler/index.ts";
import { decodeHtml, extractPage } from "../../../src/crawler/html/links.ts";
import { generateSite } from "../fixtures/site.ts";

const { values } = parseArgs({
  options: {
    pages: { type: "string", default: "2000" },
    rounds: { type: "string", default: "6" },
    seconds: { type: "string", default: "1" },
    base: { type: "string" },
    crawl: { type: "boolean", default: false },
    url: { type: "string" },
    json: { type: "boolean", default: false },
  },
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
if (values.crawl) {
  const figures =
    values.url === undefined
      ? await crawlsOfGenerated(Number(values.pages), Number(values.rounds))
      : await crawls(values.url, Number(values.rounds));
  if (values.json) console.log(JSON.stringify(figures));
  else {
    for (const [name, xs] of Object.entries(figures)) {
      console.log(`crawl ${name}: median ${median(xs).toFixed(1)} µs a page (${xs.map((x: number) => x.toFixed(0)).join(", ")})`);
    }
    console.log(`crawl fingerprint ÷ default: ${(median(figures.fingerprint) / median(figures.default)).toFixed(3)}`);
  }
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), "fingerprint-cost-"));
const { paths } = generateSite(dir, Number(values.pages));
const pages = paths.slice(0, 1000).map((path) => ({
  url: `http://127.0.0.1:8080${path}`,
  bytes: readFileSync(join(dir, path.endsWith("/") ? `${path}index.html` : path)),
}));
rmSync(dir, { recursive: true });

type Extract = typeof extractPage;
const variants: [string, Extract, boolean][] = [
  ["default", extractPage, false],
  ["fingerprint", extractPage, true],
];
if (values.base !== undefined) {
  const base = (await import(join(values.base, "src/crawler/html/links.ts"))) as { extractPage: Extract };
  variants.unshift(["base default", base.extractPage, false]);
}

/** CPU µs a page of `seconds` of parsing the pages over and over. */
function measure(extract: Extract, fingerprint: boolean, seconds: number): number {
  const parse = (page: (typeof pages)[number]) =>
    extract(decodeHtml(page.bytes, "utf-8"), page.url, "genapi", defaultCrawlLimits.maxLinksPerPage, { fingerprint });
  let parsed = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    for (const page of pages) parse(page);
    parsed += pages.length;
  }
  const cpu = process.cpuUsage(cpuBefore);
  return (cpu.user + cpu.system) / parsed;
}

for (const [, extract, fingerprint] of variants) measure(extract, fingerprint, 0.5); // warm-up
const figures = new Map<string, number[]>(variants.map(([name]) => [name, []]));
for (let round = 0; round < Number(values.rounds); round++) {
  // Each round starts with another variant.
  for (let k = 0; k < variants.length; k++) {
    const [name, extract, fingerprint] = variants[(round + k) % variants.length]!;
    figures.get(name)!.push(measure(extract, fingerprint, Number(values.seconds)));
  }
}
for (const [name, xs] of figures) {
  console.log(`${name}: median ${median(xs).toFixed(2)} µs a page (${xs.map((x) => x.toFixed(1)).join(", ")})`);
}
console.log(`fingerprint ÷ default: ${(median(figures.get("fingerprint")!) / median(figures.get("default")!)).toFixed(3)}`);
if (values.base !== undefined)
  console.log(`default ÷ base default: ${(median(figures.get("default")!) / median(figures.get("base default")!)).toFixed(3)}`);

/** CPU µs a page of whole crawls with and without fingerprints, by round. */
export interface CrawlFigures {
  default: number[];
  fingerprint: number[];
}

/** Whole crawls of the generated site (fixtures/site.ts, served by fixtures/static-server.ts in a child process). */
async function crawlsOfGenerated(pageCount: number, rounds: number): Promise<CrawlFigures> {
  const siteDir = mkdtempSync(join(tmpdir(), "fingerprint-cost-"));
  generateSite(siteDir, pageCount);
  const server = Bun.spawn([process.execPath, join(import.meta.dir, "../fixtures/static-server.ts"), siteDir], {
    stdout: "pipe",
    stderr: "inherit",
  });
  try {
    const reader = server.stdout.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    const { address } = JSON.parse(first.split("\n")[0]!) as { address: string };
    return await crawls(`${address}/`, rounds);
  } finally {
    server.kill();
    rmSync(siteDir, { recursive: true });
  }
}

/** Whole crawls of the site at `url` with and without fingerprints, alternating which goes first. */
async function crawls(url: string, rounds: number): Promise<CrawlFigures> {
  const network = createCrawlNetwork({
    policy: { allowPrivate: true, allowTargets: [] },
    politeness: { hostConcurrency: 8, hostDelayMs: 0 },
  });
  const deps = { fetch: network, now: Date.now, userAgent: "genapi/bench" };
  const limits = { ...defaultCrawlLimits, maxPages: 1_000_000 };
  const one = async (fingerprint: boolean) => {
    const cpuBefore = process.cpuUsage();
    // A site's run (history given, none before) fingerprints and remembers each page; a plain crawl does neither.
    const run = await runCrawl(url, new MemoryCrawlState(), limits, deps, fingerprint ? { history: NO_HISTORY } : {});
    const cpu = process.cpuUsage(cpuBefore);
    Bun.gc(true);
    return (cpu.user + cpu.system) / run.pagesCrawled;
  };
  await one(false); // warm-up
  const figures: CrawlFigures = { default: [], fingerprint: [] };
  for (let round = 0; round < rounds; round++) {
    for (const fingerprint of round % 2 === 0 ? [false, true] : [true, false]) {
      figures[fingerprint ? "fingerprint" : "default"].push(await one(fingerprint));
    }
  }
  return figures;
}
