// The benchmark harness in smoke mode (tiny site, one run, nothing installed), so it cannot rot
// unnoticed. No figure is checked here: only that every part runs and reports, and that genapi's
// crawl of the tiny site listed exactly its pages.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchResults } from "../../scripts/bench/harness/results.ts";
import { SECTIONS } from "../../scripts/bench/sections.ts";
import { generateSite } from "../../scripts/bench/fixtures/site.ts";
import { ensureBinary } from "../support/binary.ts";
import { needs } from "../support/requires.ts";

const root = join(import.meta.dir, "../..");

describe("synthetic site", () => {
  test("every link leads to one of its pages, and every page is reachable from the home page", () => {
    const dir = mkdtempSync(join(tmpdir(), "genapi-bench-site-"));
    const { paths } = generateSite(dir, 60);
    expect(paths).toHaveLength(60);
    expect(new Set(paths).size).toBe(60);
    const origin = "http://site.test";
    const file = (path: string) => join(dir, path.endsWith("/") ? `${path}index.html` : path);
    const linksOf = (path: string) =>
      // The generator writes every link as <a href="...">, without entities.
      [...readFileSync(file(path), "utf8").matchAll(/<a href="([^"]+)"/g)]
        .map((m) => new URL(m[1]!, origin + path))
        .map((url) => url.pathname);
    const reached = new Set(["/"]);
    const queue = ["/"];
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      const size = readFileSync(file(path)).byteLength;
      expect(size).toBeGreaterThanOrEqual(15_000);
      expect(size).toBeLessThan(31_000);
      const links = linksOf(path);
      if (path.endsWith(".html")) expect(links.length).toBeGreaterThanOrEqual(20);
      for (const link of links) {
        expect(paths).toContain(link);
        if (reached.has(link)) continue;
        reached.add(link);
        queue.push(link);
      }
    }
    expect([...reached].sort()).toEqual([...paths].sort());
  });
});

describe("bench harness, smoke mode", () => {
  test("runs every benchmark and reports it; genapi lists exactly the site's pages", async () => {
    const out = mkdtempSync(join(tmpdir(), "genapi-bench-smoke-"));
    const proc = Bun.spawn(
      [process.execPath, "scripts/bench/run.ts", "--smoke", "--out", join(out, "BENCHMARKS.md"), "--json", join(out, "results.json")],
      { cwd: root, stdout: "pipe", stderr: "pipe" },
    );
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });

    const results = JSON.parse(readFileSync(join(out, "results.json"), "utf8")) as BenchResults;
    expect(results.mode).toBe("smoke");
    // Every registered section runs, in the table's order (scripts/bench/sections.ts).
    expect(results.sections.map((s) => s.id)).toEqual(Object.keys(SECTIONS) as (keyof typeof SECTIONS)[]);
    for (const section of results.sections) expect({ id: section.id, error: section.error }).toEqual({ id: section.id, error: undefined });
    // Missing tools are reported, never fatal; a tool that is there must have worked.
    for (const tool of results.tools) expect(["ok", "not installed"]).toContain(tool.status);
    const rows = results.sections.flatMap((s) => s.tables.flatMap((t) => t.rows));
    for (const r of rows) {
      expect({ label: r.label, status: r.status }).toEqual({
        label: r.label,
        status: r.status === "not installed" ? "not installed" : "ok",
      });
    }

    const crawl = results.sections.find((s) => s.id === "crawl")!;
    const genapi = crawl.tables[0]!.rows.find((r) => r.label === "genapi")!;
    expect(genapi.status).toBe("ok");
    expect(genapi.cells["pages/s"]).toMatchObject({ runs: 1 });
    const exact = crawl.checks.find((c) => c.label === "genapi listed exactly the 60 pages of the site")!;
    expect(exact).toEqual({ label: exact.label, passed: true, detail: "per run: exact" });
    // Start-up always runs (no outside tool): genapi's row has its figures.
    const startup = results.sections.find((s) => s.id === "startup")!.tables[0]!.rows.find((r) => r.label === "genapi")!;
    expect(startup.cells["ms to first 200"]).toMatchObject({ runs: 3 });

    // Jobs (scripts/bench/sections/jobs.ts): the big site's job listed every page, on SQLite (with and
    // without link_report) and on PostgreSQL in one attempt, with RSS samples for the chart.
    // Without PostgreSQL (a machine with only Node.js and npm) the section reports its job "not installed".
    const jobs = results.sections.find((s) => s.id === "jobs")!;
    const postgres = needs(import.meta.path, "postgresql");
    expect(jobs.checks.map((c) => [c.label, c.passed])).toEqual([
      ["the 2,000-page job listed every page", true],
      ["the 2,000-page job with link_report listed every page", true],
      ...(postgres ? [["the 2,000-page job on PostgreSQL listed every page in one attempt", true]] : []),
    ]);
    const pgJob = jobs.tables[0]!.rows.find((r) => r.label === "genapi job on PostgreSQL, 2,000 pages")!;
    if (postgres) {
      expect(pgJob.cells.attempts).toMatchObject({ median: 1 });
      expect(pgJob.cells["database MB"]).toMatchObject({ runs: 1 });
    } else expect(pgJob.status).toBe("not installed");
    expect(jobs.series?.[0]?.points.length).toBeGreaterThan(0);

    // Sites (scripts/bench/sections/sites.ts): a plain job and a site's two runs listed every page, and
    // the big site's two runs on SQLite and on PostgreSQL ("not installed" without it); every page of
    // run 2 answered 304.
    const sites = results.sections.find((s) => s.id === "sites")!;
    expect(sites.checks.map((c) => [c.label, c.passed])).toEqual([["every run listed every page", true]]);
    const second = sites.tables[0]!.rows.find((r) => r.label === "site run 2 (unchanged)")!;
    expect(second.cells["304 answers"]).toMatchObject({ median: 100 });
    const big = sites.tables[1]!.rows;
    expect(big.map((r) => r.label)).toEqual([
      "SQLite: run 1",
      "SQLite: run 2 (unchanged)",
      ...(postgres ? ["PostgreSQL: run 1", "PostgreSQL: run 2 (unchanged)"] : ["PostgreSQL: runs 1 and 2"]),
    ]);
    for (const row of big.filter((r) => r.label.endsWith("run 2 (unchanged)")))
      expect(row.cells["304 answers"]).toMatchObject({ median: 1_000 });
    // The fingerprint's cost: one crawl each way (smoke), both timed.
    expect(sites.tables[2]!.rows.map((r) => [r.label, (r.cells["CPU µs/page"] as { runs: number }).runs])).toEqual([
      ["crawl without fingerprints", 1],
      ["crawl with fingerprints (a site's run 1, no store)", 1],
    ]);

    // Link report beyond the origin (scripts/bench/sections/link-report.ts): link_report: true sent the
    // other host nothing; with external checks each of its 200 URLs was asked once and its 10 broken
    // ones were listed; the host saw its requests in flight measured.
    const linkReport = results.sections.find((s) => s.id === "link-report")!;
    expect(linkReport.checks.map((c) => [c.label, c.passed])).toEqual([
      ["link_report: true sends nothing to the other host", true],
      ["with external checks, each of the 200 external URLs is requested exactly once (HEAD)", true],
      ['the 10 external URLs that answer 404 are the broken external links listed, with kind "external"', true],
    ]);
    const checked = linkReport.tables[0]!.rows.find((r) => r.label.startsWith('link_report: {"external"'))!;
    expect(checked.cells["requests to the other host"]).toMatchObject({ median: 200 });
    expect(checked.cells["most in flight there"]).toMatchObject({ runs: 1 });

    const report = readFileSync(join(out, "BENCHMARKS.md"), "utf8");
    for (const heading of ["## Targets", "## Machine and tools"]) expect(report).toContain(heading);
    // Every section under its own numbered heading (numbers shift as sections are registered).
    for (const section of results.sections)
      expect(report).toMatch(new RegExp(`^## \\d+\\. ${section.title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
    expect(report).toContain(`| ${results.machine.nproc} | ${results.machine.cpuModel} |`);
    // The charts are SVG files beside the report, embedded in it (scripts/bench/harness/charts.ts): the
    // crawl's bars and the job's RSS and pages/s against pages crawled.
    for (const [title, file] of [
      ["Crawl pages/s against the peers (higher is better)", "crawl-pages-per-second.svg"],
      ["Crawl job: RSS against pages crawled", "jobs-rss-by-pages.svg"],
    ] as const) {
      expect(report).toContain(`![${title}](docs/bench/${file})`);
      expect(readFileSync(join(out, "docs/bench", file), "utf8")).toStartWith("<svg xmlns=");
    }
  }, 300_000); // About 35-40 s on a quiet 2-core machine before the politeness section (~25 s of Crawlee's and genapi's crawls of a throttling site) and the link-report section (~6 s), 100 s at a load average of 14, 208 s at 25; the margin is for other test files running beside it.
});

describe("the link report's cost alone (scripts/bench/probes/link-report-cost.ts)", () => {
  test("crawls the site with and without --link-report and prints each run and the ratios", async () => {
    const binary = await ensureBinary();
    const proc = Bun.spawn(
      [process.execPath, "scripts/bench/probes/link-report-cost.ts", "--binary", binary, "--pages", "60", "--runs", "2"],
      {
        cwd: root,
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^60 pages served by (nginx|bun); load /);
    expect(lines.slice(1, 3).map((line) => line.replace(/[\d.]+/g, "N"))).toEqual([
      "run N: CPU ms a page N without, N with (Nx); peak RSS MB N and N",
      "run N: CPU ms a page N without, N with (Nx); peak RSS MB N and N",
    ]);
    expect(lines[3]).toMatch(/^with ÷ without, median of the runs: CPU a page [\d.]+x .* peak RSS [\d.]+x; goal 1\.1x;/);
  }, 60_000);
});
