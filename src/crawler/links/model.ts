// The link report's vocabulary (the README's link report): what the engine tells a crawl
// state about links and answers, what a state keeps per URL, and the report's entries.
//
// Why it is kept this way: a link's referrer is known when its page is read, its fate (broken,
// redirect) only once its target is requested, often much later. Keeping every edge of a
// 1,000,000-page crawl is out of the question (about 20 links a page: 20,000,000 edges), so a state
// keeps per URL only what a report entry needs (the referrer count and the 5 smallest referrers), and
// only for URLs that may still need it: those not requested yet, those that answered badly, and the
// site's own sitemap URLs (whose `not_linked` needs to know whether any followed link reaches them).
// Once a URL answers fine, what it held is dropped and later links to it cost nothing.

/** Referrers kept per URL: the smallest in code-unit order, so every caller reports the same ones. */
export const MAX_REFERRERS = 5;
/** Entries per list in `data.links` (POST /api/generate, `genapi crawl --json`). */
export const MAX_LIST_ENTRIES = 1_000;

/**
 * What one request of the crawl answered, as far as links to its URL are concerned. Redirects
 * name their next hop only: a chain is followed when the report is built, so that a URL whose
 * target was requested earlier (and not again) still reports its final answer.
 */
export type LinkFate =
  | { kind: "ok" }
  | { kind: "broken"; status: number | null; error: string }
  | { kind: "redirect"; status: number; next: string };

export interface FateRecord {
  url: string;
  fate: LinkFate;
}

/**
 * What the link report needs of a page beyond its record: the page, and its nofollow links. Its
 * followed links are the record's `links` that are neither excluded nor its canonical
 * (isReferrerLink): each state counts the page as their referrer from there.
 */
export interface PageLinks {
  /** The page: the URL it was read at. */
  from: string;
  /** `rel="nofollow"` links, or every link of a nofollow page, that the crawl may request: referrers all the same. */
  nofollow: readonly string[];
}

/** Whether a link of a page's record counts the page as its referrer: followed, not left out, not the canonical. */
export function isReferrerLink(link: { excluded?: string; canonical?: true }): boolean {
  return link.excluded === undefined && link.canonical === undefined;
}

/** A page URL of the site's own sitemaps (sitemaps_from_robots), with the file that lists it. */
export interface SitemapSeed {
  url: string;
  sitemap: string;
  /** Already known when it is queued: robots or filtered, or the start page's own outcome. */
  outcome?: string;
  /** Reached without the sitemap (the start page). */
  linked?: true;
}

/** Outcome of a sitemap URL that the generated sitemap lists. */
export const LISTED = "listed";
/** A listed sitemap URL that no followed link reaches. */
export const NOT_LINKED = "not_linked";

/** What one record adds to the link report: see PageRecord.links (state.ts). */
export interface LinkFacts {
  /** Every URL this record's requests reached: its redirect hops, its final answer. */
  fates: readonly FateRecord[];
  /** The page read, if one was. */
  page?: PageLinks;
  /** Sitemap URLs queued by this record. */
  sitemap?: readonly SitemapSeed[];
}

/** What a state keeps of one URL. */
export interface LinkRow {
  url: string;
  referrerCount: number;
  /** At most MAX_REFERRERS, sorted. */
  referrers: string[];
  /** Some followed link points at it. */
  followed: boolean;
  /** Its answer when that was not fine; null while fine or unknown. */
  fate: Exclude<LinkFate, { kind: "ok" }> | null;
  /** The sitemap file listing it (sitemaps_from_robots), else null. */
  sitemap: string | null;
  /** For a sitemap URL: LISTED, or the exclusion reason it ended under; null until known. */
  outcome: string | null;
}

/**
 * A memory crawl state's seen set, as the link report counts referrers in it: a plain set of URLs
 * without link_report, the LinkLedger (ledger.ts) with it, where a page's link costs one look-up for
 * both. `referrer` is the page a link counts for (null: not one of a page's followed links).
 */
export interface SeenUrls {
  has(url: string): boolean;
  /** A link met on a page: whether its URL is seen; if so, `referrer` is counted for it. */
  meet(url: string, referrer: string | null): boolean;
  /** Marks `url` seen: to be requested (`pending`: its answer is to come) or not, counting `referrer`. */
  add(url: string, pending?: boolean, referrer?: string | null): void;
  /** A link to `url` dropped unseen by a full frontier: `referrer` counts, a later page may queue it. */
  drop(url: string, referrer: string | null): void;
  /** Forgets that `url` was seen (a claim made void on resume); what the report holds of it stays. */
  delete(url: string): boolean;
}

/** What a broken entry is: an in-scope link (a page), a link to another origin, or a resource a page loads. */
export type BrokenKind = "page" | "external" | "resource";

export interface BrokenLink {
  url: string;
  kind: BrokenKind;
  /** The final HTTP status, or null when there was none (network failure, loop, ...). */
  status: number | null;
  error: string;
  referrers: string[];
  referrer_count: number;
}

export interface RedirectLink {
  url: string;
  /** The first hop's 3xx. */
  status: number;
  /** Where the chain ends (the last URL reached, requested or not). */
  target: string;
  hops: number;
  referrers: string[];
  referrer_count: number;
}

export interface SitemapError {
  url: string;
  sitemap: string;
  reason: string;
}

/** The full lists, sorted by url: links.json and `genapi crawl --link-report FILE` (with truncated false). */
export interface LinkLists {
  broken: BrokenLink[];
  redirects: RedirectLink[];
  sitemap_errors: SitemapError[];
}

/** Distinct URLs past the checks' cap (links/outside.ts), each present when its kind was checked. */
export interface UncheckedCounts {
  external_unchecked?: number;
  resources_unchecked?: number;
}

/** `data.links`: each list cut to MAX_LIST_ENTRIES, `truncated` when one was. */
export interface LinkReport extends LinkLists, UncheckedCounts {
  truncated: boolean;
}

/** A job's `result.links`: the lists are at GET /api/jobs/<id>/links.json. */
export interface LinkCounts extends UncheckedCounts {
  broken_count: number;
  redirect_count: number;
  sitemap_error_count: number;
}

/**
 * Adds `url` to the sorted `referrers` (at most MAX_REFERRERS, the smallest kept, each once); the
 * count is the caller's. It runs for most links of a crawl with link_report, so it allocates
 * nothing: an insertion shifts the larger ones up in place (a splice allocated the array of what it
 * removed, half the calls on the bench site, where pages come in breadth-first, not sorted, order).
 */
export function addReferrer(referrers: string[], url: string): void {
  let at = referrers.length;
  // After every one kept (pages met in order): appended if there is room, else not kept.
  if (at === 0 || url > referrers[at - 1]!) {
    if (at < MAX_REFERRERS) referrers.push(url);
    return;
  }
  while (at > 0 && referrers[at - 1]! > url) at--;
  if (at > 0 && referrers[at - 1] === url) return;
  // url goes at `at`: the last one moves out, or to a new slot while there is room.
  const last = referrers.length - 1;
  if (referrers.length < MAX_REFERRERS) referrers.push(referrers[last]!);
  for (let i = last; i > at; i--) referrers[i] = referrers[i - 1]!;
  referrers[at] = url;
}

/**
 * Adds `url` to a referrer buffer kept unsorted (the memory ledger's rows): pushed as it comes, put
 * in order only when the buffer reaches 2 x MAX_REFERRERS and when the report reads it
 * (keepSmallest). Most rows are thrown away once their URL answers fine, so most referrers are
 * never compared: on the bench site, pages come in breadth-first order and half of the in-order
 * insertions of addReferrer shifted the list.
 */
export function gatherReferrer(buffer: string[], url: string): void {
  if (buffer.push(url) === 2 * MAX_REFERRERS) keepSmallest(buffer);
}

/** Puts `referrers` in the form addReferrer keeps: sorted, each once, the smallest MAX_REFERRERS. */
export function keepSmallest(referrers: string[]): string[] {
  referrers.sort();
  let kept = 0;
  for (const url of referrers) {
    if (kept === MAX_REFERRERS) break;
    if (kept === 0 || referrers[kept - 1] !== url) referrers[kept++] = url;
  }
  referrers.length = kept;
  return referrers;
}

/** The smallest MAX_REFERRERS of two sorted lists, without duplicates. */
export function mergeReferrers(a: readonly string[], b: readonly string[]): string[] {
  const out = [...a];
  for (const url of b) addReferrer(out, url);
  return out;
}
