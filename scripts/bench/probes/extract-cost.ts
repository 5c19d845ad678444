// A/B of reading a page (decodeHtml + extractPage: the tags, the links resolved) between another
// checkout's sources and these, over the crawl section's generated site (fixtures/site.ts) as it is
// and with its links written as real sites often write them: absolute on the page's origin (as
// WordPress writes them), absolute on another origin (`external`: the same hrefs on many pages, as
// a site's header and footer link to its other hosts), or each with a two-parameter query
// (`?ref=nav&amp;p=2`). Both checkouts' modules are loaded in this one process and timed in
// alternating rounds; the figure is the median of the same-round ratios (CPU µs a page of each,
// `seconds` of parsing the pages over and over as a plain crawl reads them, no extras), with the
// interquartile range, so that the shared machine's load falls on both alike. Each page's facts are
// compared first with every extra asked for (nofollow links, alternates, images, resources, the
// fingerprint): a change that reads any page differently fails here.
//
//   bun scripts/bench/probes/extract-cost.ts --base /tmp/other-checkout [--links as-is|absolute|external|query] [--pages 300] [--rounds 30] [--seconds 0.2]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { defaultCrawlLimits } from "../../../src/crawler/index.ts";
import * as here from "../../../src/crawler/html/links.ts";
import type { ExtractExtras } from "../../../src/crawler/html/links.ts";
import { generateSite } from "../fixtures/site.ts";

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    links: { type: "string", default: "as-is" },
    pages: { type: "string", default: "300" },
    rounds: { type: "string", default: "30" },
    seconds: { type: "string", default: "0.2" },
  },
});
if (values.base === undefined) throw new Error("extract-cost.ts: --base DIR (another checkout) is required");
const ORIGIN = "https://www.example.com";
const rewrite: Record<string, (html: string) => string> = {
  "as-is": (html) => html,
  absolute: (html) => html.replaceAll('href="/', `href="${ORIGIN}/`),
  query: (html) => html.replace(/href="([^"#]*)"/g, 'href="$1?ref=nav&amp;p=2"'),
  external: (html) => html.replaceAll('href="/', 'href="https://other.example.net/'),
};
const links = rewrite[values.links];
if (links === undefined) throw new Error(`extract-cost.ts: --links is one of ${Object.keys(rewrite).join(", ")}`);

const dir = mkdtempSync(join(tmpdir(), "extract-cost-"));
const { paths } = generateSite(dir, Number(values.pages));
const pages = paths.map((path) => ({
  url: `${ORIGIN}${path}`,
  bytes: new TextEncoder().encode(links(readFileSync(join(dir, path.endsWith("/") ? `${path}index.html` : path), "utf8"))),
}));
rmSync(dir, { recursive: true });

type Links = typeof here;
const base = (await import(resolve(values.base, "src/crawler/html/links.ts"))) as Links;
const read = (module: Links, page: (typeof pages)[number], extras: ExtractExtras = {}) =>
  module.extractPage(module.decodeHtml(page.bytes, "utf-8"), page.url, "genapi", defaultCrawlLimits.maxLinksPerPage, extras);
const EVERY_EXTRA: ExtractExtras = { nofollow: true, alternates: true, images: true, resources: true, fingerprint: true };
for (const page of pages) {
  if (JSON.stringify(read(base, page, EVERY_EXTRA)) !== JSON.stringify(read(here, page, EVERY_EXTRA)))
    throw new Error(`extract-cost.ts: ${page.url} reads differently`);
}

/** CPU µs a page of `seconds` of reading the pages over and over. */
function measure(module: Links, seconds: number): number {
  let parsed = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    for (const page of pages) read(module, page);
    parsed += pages.length;
  }
  const cpu = process.cpuUsage(cpuBefore);
  return (cpu.user + cpu.system) / parsed;
}

const seconds = Number(values.seconds);
measure(base, 0.5); // warm-up
measure(here, 0.5);
const figures = { base: [] as number[], here: [] as number[] };
for (let round = 0; round < Number(values.rounds); round++) {
  for (const which of round % 2 === 0 ? (["base", "here"] as const) : (["here", "base"] as const)) {
    figures[which].push(measure(which === "base" ? base : here, seconds));
  }
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const quantile = (xs: number[], q: number) => sorted(xs)[Math.floor(q * (xs.length - 1))]!;
const ratios = figures.here.map((x, i) => x / figures.base[i]!);
console.log(
  `links ${values.links}, ${pages.length} pages: base ${quantile(figures.base, 0.5).toFixed(1)} µs a page, these sources ${quantile(figures.here, 0.5).toFixed(1)}; ` +
    `same-round ratio median ${quantile(ratios, 0.5).toFixed(3)} (interquartile ${quantile(ratios, 0.25).toFixed(3)}-${quantile(ratios, 0.75).toFixed(3)}, ${ratios.length} rounds)`,
);
