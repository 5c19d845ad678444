// What every benchmark section gets: where to work, what to run, how long and how often.
import type { Binaries } from "./servers.ts";
import type { Tools } from "./tools.ts";

export interface Plan {
  /** Repetitions of every measurement (the report gives median, min and max over them). */
  runs: number;
  /** Seconds of each wrk measurement. */
  wrkSeconds: number;
  /** Seconds of wrk load on each server before its measured runs (0: none, for the smoke run). */
  warmupSeconds: number;
  /** Site sizes (pages) of the crawl benchmark. */
  sitePages: number[];
  /** Crawls of the time-boxed tools are stopped after this many seconds and measured up to there. */
  crawlTimeBoxSeconds: number;
  /** Longest a full crawl may take before it counts as failed. */
  crawlLimitSeconds: number;
  /** Tools fast enough to crawl the whole site every run; the others are time-boxed. */
  fullCrawlTools: string[];
  /** Start-ups measured per variant. */
  startupRuns: number;
  /** Pages of the big site of the jobs section (default 1,000,000; the smoke plan 2,000): `--job-pages`. */
  jobPages?: number;
  /** Pages of the sites section's site (default 100,000; the smoke plan 300): `--site-pages`. */
  sitesPages?: number;
  /** Pages of the sites section's big site, run twice on each store (default 1,000,000; the smoke plan 2,000): `--site-big-pages`. */
  sitesBigPages?: number;
  /** The stores the big site runs on (default both): `--site-big-stores sqlite,postgresql`. */
  sitesBigStores?: ("sqlite" | "postgresql")[];
  /** An empty PostgreSQL database for the jobs section's PostgreSQL job, instead of a throwaway cluster: `--job-pg`. */
  jobPostgresUrl?: string;
  /** Pages of the politeness section's rate-limited site (20 requests/s: about pages / 20 seconds a crawl). */
  politenessPages: number;
  /** Pages of the render section's single-page application, crawled at 1, 2 and 4 tabs (`--render-pages`). */
  renderPages: number;
  /** Pages of the render section's in-process run that times each phase of a rendered page. */
  renderPhasePages: number;
  /** Whether sections may install the peers they need (the smoke run installs nothing). */
  installPeers: boolean;
}

export const FULL_PLAN: Plan = {
  runs: 5,
  wrkSeconds: 4,
  warmupSeconds: 1,
  sitePages: [10_000, 50_000],
  crawlTimeBoxSeconds: 10,
  crawlLimitSeconds: 600,
  fullCrawlTools: ["genapi", "wget2"],
  startupRuns: 20,
  politenessPages: 2_000,
  renderPages: 2_000,
  renderPhasePages: 100,
  installPeers: true,
};

export const SMOKE_PLAN: Plan = {
  runs: 1,
  wrkSeconds: 1,
  warmupSeconds: 0,
  sitePages: [60],
  crawlTimeBoxSeconds: 20,
  crawlLimitSeconds: 30,
  fullCrawlTools: ["genapi", "wget2", "linkchecker", "sitemap-generator-cli"],
  startupRuns: 3,
  politenessPages: 20,
  renderPages: 8,
  renderPhasePages: 4,
  installPeers: false,
};

export interface Context {
  plan: Plan;
  workDir: string;
  binaries: Binaries;
  tools: Tools;
  log: (line: string) => void;
}
