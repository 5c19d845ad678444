// The crawl report's `excluded` and `excluded_examples`: why each URL the crawl met is not listed.

/** In the contract's order. */
export const EXCLUSION_REASONS = [
  "robots",
  "noindex",
  "canonical",
  "redirect",
  "not_html",
  "http_error",
  "failed",
  "filtered",
  "invalid",
] as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

export const MAX_EXAMPLES_PER_REASON = 5;
/** An `invalid` example is cut to this many characters (the link itself may be megabytes long). */
export const INVALID_EXAMPLE_LENGTH = 200;

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
 * resumed job, or `genapi crawl` beside the API) must report the same examples. An `invalid` link
 * is shown cut to INVALID_EXAMPLE_LENGTH characters, and sorted so.
 */
export function recordExclusion(report: ExclusionReport, reason: ExclusionReason, url: string): void {
  report.excluded[reason]++;
  const examples = report.excluded_examples[reason];
  const example = reason === "invalid" ? cut(url) : url;
  if (examples.length === MAX_EXAMPLES_PER_REASON && example >= examples[examples.length - 1]!) return;
  if (examples.includes(example)) return;
  let at = examples.length;
  while (at > 0 && examples[at - 1]! > example) at--;
  examples.splice(at, 0, reason === "invalid" ? detached(example) : example);
  if (examples.length > MAX_EXAMPLES_PER_REASON) examples.pop();
}

/** The first INVALID_EXAMPLE_LENGTH characters of `text`, a surrogate pair never split. */
function cut(text: string): string {
  if (text.length <= INVALID_EXAMPLE_LENGTH) return text;
  const end = INVALID_EXAMPLE_LENGTH - (isHighSurrogate(text.charCodeAt(INVALID_EXAMPLE_LENGTH - 1)) ? 1 : 0);
  return text.slice(0, end);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * A copy of `text` that holds nothing else alive. A slice of a string keeps the whole of it (a
 * 2 MB link, or the page an href was read from) for as long as the slice lives: the examples live
 * as long as the crawl (measured: 2,000 kept 200-character slices of 100 KB strings held 316 MB
 * RSS; copies, 27 MB).
 */
function detached(text: string): string {
  return Buffer.from(text, "utf16le").toString("utf16le");
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
  invalid: "invalid",
};
