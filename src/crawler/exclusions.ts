// The crawl report's `excluded` and `excluded_examples`: why each URL the crawl met is not listed.

/** In the contract's order. */
export const EXCLUSION_REASONS = ["robots", "noindex", "canonical", "redirect", "not_html", "http_error", "failed", "filtered"] as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

export const MAX_EXAMPLES_PER_REASON = 5;

export interface ExclusionReport {
  excluded: Record<ExclusionReason, number>;
  excluded_examples: Record<ExclusionReason, string[]>;
}

export function emptyExclusionReport(): ExclusionReport {
  const excluded = {} as Record<ExclusionReason, number>;
  const excluded_examples = {} as Record<ExclusionReason, string[]>;
  for (const reason of EXCLUSION_REASONS) {
    excluded[reason] = 0;
    excluded_examples[reason] = [];
  }
  return { excluded, excluded_examples };
}

/**
 * Counts `url` under `reason`. The examples are the first URLs of the reason in sorted order, not
 * the first met: pages finish in whatever order the network gives, and the same crawl (or a
 * resumed job, or `genapi crawl` beside the API) must report the same examples.
 */
export function recordExclusion(report: ExclusionReport, reason: ExclusionReason, url: string): void {
  report.excluded[reason]++;
  const examples = report.excluded_examples[reason];
  if (examples.length === MAX_EXAMPLES_PER_REASON && url >= examples[examples.length - 1]!) return;
  if (examples.includes(url)) return;
  let at = examples.length;
  while (at > 0 && examples[at - 1]! > url) at--;
  examples.splice(at, 0, url);
  if (examples.length > MAX_EXAMPLES_PER_REASON) examples.pop();
}

/**
 * Why a crawl listed nothing, for the 422 `... no indexable page found (<reason>)`: what became of
 * the start page, or, when the start page was only left out by `include`, what became of the rest.
 */
export function nothingListedReason(startPage: ExclusionReason, report: ExclusionReport): string {
  switch (startPage) {
    case "noindex":
      return "the start page is noindex";
    case "canonical":
      return "the start page's canonical URL points elsewhere, and no page was listed";
    case "filtered": {
      const others = EXCLUSION_REASONS.filter((reason) => reason !== "filtered" && report.excluded[reason] > 0);
      const rest =
        others.length === 0 ? "" : `; others: ${others.map((reason) => `${report.excluded[reason]} ${REASON_WORDS[reason]}`).join(", ")}`;
      return `no URL matches include${rest}`;
    }
    default:
      return `the start page is ${REASON_WORDS[startPage]}`;
  }
}

const REASON_WORDS: Record<ExclusionReason, string> = {
  robots: "disallowed by robots.txt",
  noindex: "noindex",
  canonical: "canonical elsewhere",
  redirect: "a redirect",
  not_html: "not HTML",
  http_error: "an HTTP error",
  failed: "failed",
  filtered: "filtered",
};
