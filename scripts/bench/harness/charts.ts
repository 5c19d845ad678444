// SVG charts of BENCHMARKS.md, drawn from the same results as its tables: plain SVG text (no chart
// library, no browser), so `npm run bench` writes them beside the report and any Markdown viewer
// shows them. Bars: crawl pages/s and CPU per page against the peers, per site size. Lines: peak
// RSS and pages/s against the size of the crawl, and (from the jobs section) against pages crawled.
import type { BenchResults, SectionResult, Series, Summary } from "./results.ts";

export interface Chart {
  /** The section the chart belongs under. */
  section: SectionResult["id"];
  /** File name under the charts directory. */
  file: string;
  title: string;
  svg: string;
}

const PALETTE = ["#1f6feb", "#d1242f", "#8250df", "#bf8700", "#1a7f37", "#57606a"];
const WIDTH = 640;
const HEIGHT = 320;
const MARGIN = { top: 36, right: 24, bottom: 70, left: 64 };
// Row labels of the crawl tables (sections/crawl.ts); "wget2" is the label of reports before wget2 ran in two modes.
const PEERS = [
  "genapi",
  "genapi crawl",
  "wget2, one GET a page",
  "wget2 --spider (HEAD + GET)",
  "wget2",
  "linkchecker",
  "sitemap-generator-cli",
];

export function charts(results: BenchResults): Chart[] {
  const out: Chart[] = [];
  const crawl = results.sections.find((s) => s.id === "crawl" && !s.error);
  if (crawl) out.push(...crawlCharts(crawl));
  const jobs = results.sections.find((s) => s.id === "jobs" && !s.error);
  if (jobs?.series?.some((s) => s.points.length > 0)) out.push(...jobCharts(jobs));
  return out;
}

function crawlCharts(section: SectionResult): Chart[] {
  // One table per site size; its rows are the crawlers.
  const sites = section.tables.flatMap((table) => {
    const pages = /([\d,]+)-page site/.exec(table.title)?.[1];
    return pages === undefined ? [] : [{ pages: Number(pages.replaceAll(",", "")), rows: table.rows }];
  });
  if (sites.length === 0) return [];
  const median = (rows: (typeof sites)[number]["rows"], label: string, column: string) => {
    const cell = rows.find((r) => r.label === label && r.status === "ok")?.cells[column];
    return typeof cell === "object" ? (cell as Summary).median : undefined;
  };
  const crawlers = PEERS.filter((name) => sites.some((site) => median(site.rows, name, "pages/s") !== undefined));
  const groups = sites.map((site) => `${site.pages.toLocaleString("en-US")} pages`);
  const bars = (column: string) => crawlers.map((name) => ({ label: name, values: sites.map((site) => median(site.rows, name, column)) }));
  const result: Chart[] = [
    {
      section: "crawl",
      file: "crawl-pages-per-second.svg",
      title: "Crawl pages/s against the peers (higher is better)",
      svg: barChart("Crawl rate: pages/s (higher is better)", groups, bars("pages/s"), "pages/s"),
    },
    {
      section: "crawl",
      file: "crawl-cpu-per-page.svg",
      title: "CPU ms per page against the peers (lower is better)",
      svg: barChart("CPU ms per page (lower is better)", groups, bars("CPU ms per page"), "CPU ms per page"),
    },
  ];
  if (sites.length > 1) {
    // Only the crawlers that crawl the whole site every run: the others' figures are of a time-boxed part.
    const lines = (column: string) =>
      crawlers
        .filter((name) => sites.every((site) => !/time box/.test(site.rows.find((r) => r.label === name)?.note ?? "")))
        .map((name) => ({
          label: name,
          points: sites.flatMap((site) => {
            const y = median(site.rows, name, column);
            return y === undefined ? [] : [{ x: site.pages, y }];
          }),
        }))
        .filter((line) => line.points.length > 0);
    result.push(
      {
        section: "crawl",
        file: "crawl-rss-by-size.svg",
        title: "Peak RSS against crawl size",
        svg: lineChart("Peak RSS (MB) against crawl size (pages)", "pages in the site", "peak RSS MB", lines("peak RSS MB")),
      },
      {
        section: "crawl",
        file: "crawl-rate-by-size.svg",
        title: "Pages/s against crawl size",
        svg: lineChart("Pages/s against crawl size (pages)", "pages in the site", "pages/s", lines("pages/s")),
      },
    );
  }
  return result;
}

/** Most points a job's line keeps: one a second over a long job is noise at chart width. */
const JOB_POINTS = 60;

function jobCharts(section: SectionResult): Chart[] {
  // The largest job only: on one linear axis up to its size, a small job's line is a dot at 0
  // (its figures are in the table). A job shorter than the sampling interval has one sample: a
  // marker without a line.
  const job = (section.series ?? []).filter((s) => s.points.length > 0).sort((a, b) => maxPages(b) - maxPages(a))[0]!;
  // Consecutive samples merged into at most JOB_POINTS: RSS keeps each window's highest (memory
  // is judged by its peak), pages/s the window's mean.
  const size = Math.ceil(job.points.length / JOB_POINTS);
  const windows = Array.from({ length: Math.ceil(job.points.length / size) }, (_, i) => job.points.slice(i * size, (i + 1) * size));
  const line = (y: (points: Series["points"]) => number) => [
    { label: job.label, points: windows.map((w) => ({ x: w.at(-1)!.pages, y: y(w) })) },
  ];
  const points = job.points;
  const interval = points.length > 1 ? (points.at(-1)!.seconds - points[0]!.seconds) / (points.length - 1) : 0;
  const merged = size > 1 ? ` of each ${Math.round(size * interval)} s` : "";
  return [
    {
      section: "jobs",
      file: "jobs-rss-by-pages.svg",
      title: "Crawl job: RSS against pages crawled",
      svg: lineChart(
        `Crawl job: RSS (MB) against pages crawled (peak${merged})`,
        "pages crawled",
        "RSS MB",
        line((w) => Math.max(...w.map((p) => p.rssMB))),
      ),
    },
    {
      section: "jobs",
      file: "jobs-rate-by-pages.svg",
      title: "Crawl job: pages/s against pages crawled",
      svg: lineChart(
        `Crawl job: pages/s against pages crawled (mean${merged})`,
        "pages crawled",
        "pages/s",
        line((w) => w.reduce((sum, p) => sum + p.pagesPerSecond, 0) / w.length),
      ),
    },
  ];
}

const maxPages = (series: Series) => Math.max(...series.points.map((p) => p.pages));

// ---------------------------------------------------------------------------------------------
// Drawing

interface Bars {
  label: string;
  values: (number | undefined)[];
}

interface Line {
  label: string;
  points: { x: number; y: number }[];
}

/** Grouped bars: one group per category, one bar (and legend entry) per series. */
export function barChart(title: string, groups: string[], series: Bars[], unit: string): string {
  const plot = plotArea();
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values.filter((v): v is number => v !== undefined))));
  const y = (value: number) => plot.bottom - (value / max) * plot.height;
  const groupWidth = plot.width / Math.max(1, groups.length);
  const barWidth = Math.min(48, (groupWidth * 0.8) / Math.max(1, series.length));
  const parts = [axes(plot, max, y, unit)];
  groups.forEach((group, g) => {
    const left = plot.left + g * groupWidth + (groupWidth - barWidth * series.length) / 2;
    series.forEach((s, i) => {
      const value = s.values[g];
      if (value === undefined) return;
      const x = left + i * barWidth;
      parts.push(
        `<rect x="${f(x + 1)}" y="${f(y(value))}" width="${f(barWidth - 2)}" height="${f(plot.bottom - y(value))}" fill="${PALETTE[i % PALETTE.length]}"><title>${esc(`${s.label}, ${group}: ${format(value)}`)}</title></rect>`,
        `<text x="${f(x + barWidth / 2)}" y="${f(y(value) - 4)}" font-size="10" text-anchor="middle">${esc(format(value))}</text>`,
      );
    });
    parts.push(
      `<text x="${f(plot.left + (g + 0.5) * groupWidth)}" y="${f(plot.bottom + 16)}" font-size="12" text-anchor="middle">${esc(group)}</text>`,
    );
  });
  return svg(
    title,
    parts,
    legend(
      series.map((s) => s.label),
      "rect",
    ),
  );
}

/** Lines with markers over a linear x axis from 0. */
export function lineChart(title: string, xLabel: string, yLabel: string, lines: Line[]): string {
  const plot = plotArea();
  const points = lines.flatMap((l) => l.points);
  const maxX = niceMax(Math.max(0, ...points.map((p) => p.x)));
  const maxY = niceMax(Math.max(0, ...points.map((p) => p.y)));
  const x = (value: number) => plot.left + (value / maxX) * plot.width;
  const y = (value: number) => plot.bottom - (value / maxY) * plot.height;
  const parts = [axes(plot, maxY, y, yLabel)];
  for (let i = 0; i <= 4; i++) {
    const value = (maxX / 4) * i;
    parts.push(`<text x="${f(x(value))}" y="${f(plot.bottom + 16)}" font-size="11" text-anchor="middle">${esc(format(value))}</text>`);
  }
  parts.push(
    `<text x="${f(plot.left + plot.width / 2)}" y="${f(plot.bottom + 32)}" font-size="12" text-anchor="middle">${esc(xLabel)}</text>`,
  );
  lines.forEach((line, i) => {
    const color = PALETTE[i % PALETTE.length];
    const sorted = [...line.points].sort((a, b) => a.x - b.x);
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${sorted.map((p) => `${f(x(p.x))},${f(y(p.y))}`).join(" ")}"/>`,
    );
    // Markers only where they stay readable (a few measured sizes, not hundreds of samples).
    if (sorted.length <= 12) {
      const labelled = sorted.length <= 6;
      for (const p of sorted) {
        parts.push(
          `<circle cx="${f(x(p.x))}" cy="${f(y(p.y))}" r="3.5" fill="${color}"><title>${esc(`${line.label}: ${format(p.y)} at ${format(p.x)}`)}</title></circle>`,
        );
        const nearRight = x(p.x) > plot.right - 40;
        if (labelled)
          parts.push(
            `<text x="${f(x(p.x) + (nearRight ? -6 : 6))}" y="${f(y(p.y) - 6)}" font-size="10" text-anchor="${nearRight ? "end" : "start"}">${esc(format(p.y))}</text>`,
          );
      }
    }
  });
  return svg(
    title,
    parts,
    legend(
      lines.map((l) => l.label),
      "line",
    ),
  );
}

interface Plot {
  left: number;
  right: number;
  top: number;
  bottom: number;
  width: number;
  height: number;
}

function plotArea(): Plot {
  const left = MARGIN.left;
  const top = MARGIN.top;
  const right = WIDTH - MARGIN.right;
  const bottom = HEIGHT - MARGIN.bottom;
  return { left, top, right, bottom, width: right - left, height: bottom - top };
}

/** The y axis with 4 grid lines and its label, and the x axis line. */
function axes(plot: Plot, max: number, y: (value: number) => number, label: string): string {
  const parts: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const value = (max / 4) * i;
    parts.push(
      `<line x1="${plot.left}" x2="${plot.right}" y1="${f(y(value))}" y2="${f(y(value))}" stroke="#d0d7de" stroke-width="1"/>`,
      `<text x="${plot.left - 6}" y="${f(y(value) + 4)}" font-size="11" text-anchor="end">${esc(format(value))}</text>`,
    );
  }
  parts.push(
    `<line x1="${plot.left}" x2="${plot.right}" y1="${plot.bottom}" y2="${plot.bottom}" stroke="#57606a"/>`,
    `<text transform="translate(14 ${f(plot.top + plot.height / 2)}) rotate(-90)" font-size="12" text-anchor="middle">${esc(label)}</text>`,
  );
  return parts.join("\n");
}

/** One entry per label, left to right, wrapped onto a line above when the width is used up. */
function legend(labels: string[], mark: "rect" | "line"): string {
  const width = (label: string) => 28 + label.length * 6.2;
  const rows: number[][] = [[]];
  let used = 0;
  labels.forEach((label, i) => {
    if (used > 0 && MARGIN.left + used + width(label) > WIDTH - MARGIN.right) {
      rows.push([]);
      used = 0;
    }
    rows.at(-1)!.push(i);
    used += width(label);
  });
  return rows
    .flatMap((entries, r) => {
      let x = MARGIN.left;
      const y = HEIGHT - 12 - (rows.length - 1 - r) * 15;
      return entries.map((i) => {
        const label = labels[i]!;
        const color = PALETTE[i % PALETTE.length];
        const symbol =
          mark === "rect"
            ? `<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${color}"/>`
            : `<line x1="${x}" x2="${x + 12}" y1="${y - 4}" y2="${y - 4}" stroke="${color}" stroke-width="2"/>`;
        const text = `<text x="${x + 16}" y="${y}" font-size="11">${esc(label)}</text>`;
        x += width(label);
        return symbol + text;
      });
    })
    .join("\n");
}

function svg(title: string, parts: string[], legendMarkup: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" role="img" aria-label="${esc(title)}">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="20" font-size="14" font-weight="600" text-anchor="middle">${esc(title)}</text>`,
    ...parts,
    legendMarkup,
    "</svg>",
    "",
  ].join("\n");
}

/** The smallest of 1, 2, 4, 6, 8 times a power of ten at or above `value` (an axis end). */
function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 4, 6, 8, 10].find((step) => step * power >= value) ?? 10) * power;
}

function format(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${(value / 1e6).toLocaleString("en-US", { maximumFractionDigits: 2 })}M`;
  if (abs >= 10_000) return `${(value / 1e3).toLocaleString("en-US", { maximumFractionDigits: 1 })}k`;
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return value.toLocaleString("en-US", { maximumFractionDigits: digits });
}

const f = (value: number) => (Math.round(value * 10) / 10).toString();

function esc(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}
