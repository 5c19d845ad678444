// The crawl report, built in one place: the /api/generate success `data` (without `sitemap`), a
// job's `result` (plus its sitemap's address) and `genapi crawl --json` are this object.
import type { ExclusionReport } from "./exclusions.ts";
import type { RenderReport } from "./engine.ts";
import type { PolitenessReport } from "./net/politeness.ts";
import type { LinkCounts, LinkReport } from "./links/model.ts";

export interface CrawlReport extends ExclusionReport {
  /** The start URL after redirects. */
  url: string;
  url_count: number;
  pages_crawled: number;
  truncated: boolean;
  duration_ms: number;
  generated_at: string;
  politeness: PolitenessReport;
  render: RenderReport;
  /** With link_report: the lists (cut to 1,000 each), or a job's counts (its lists are links.json). */
  links?: LinkReport | LinkCounts;
}

/** What a finished crawl knows of itself, whichever state (memory or the store) held it. */
export interface CrawlOutcome {
  url: string;
  urlCount: number;
  pagesCrawled: number;
  truncated: boolean;
  durationMs: number;
  exclusions: ExclusionReport;
  politeness: PolitenessReport;
  render: RenderReport;
  /** Only for a crawl run with link_report. */
  links?: LinkReport | LinkCounts;
}

export function crawlReport(outcome: CrawlOutcome, generatedAt: Date): CrawlReport {
  const report: CrawlReport = {
    url: outcome.url,
    url_count: outcome.urlCount,
    pages_crawled: outcome.pagesCrawled,
    truncated: outcome.truncated,
    duration_ms: Math.round(outcome.durationMs),
    generated_at: generatedAt.toISOString(),
    excluded: outcome.exclusions.excluded,
    excluded_examples: outcome.exclusions.excluded_examples,
    politeness: outcome.politeness,
    render: outcome.render,
  };
  if (outcome.links) report.links = outcome.links;
  return report;
}
