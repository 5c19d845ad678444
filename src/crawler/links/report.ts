// Builds the link report from what a crawl state kept (model.ts): the memory state's rows for
// POST /api/generate and `genapi crawl`, the store's for jobs. Rows are read a page at a time in
// url order, so the lists come out sorted and a job's report never needs its rows in memory at once.
//
// A redirecting URL keeps only its next hop: its chain is followed here, through the fates of the
// URLs it passes, because a chain often ends on a URL the crawl had requested before (and did not
// request again). That is where a redirect's final target, its hop count, a loop, a chain longer
// than the crawl follows, or a redirect to a broken page are found.
import {
  type BrokenLink,
  LISTED,
  type LinkCounts,
  type LinkLists,
  type LinkReport,
  type LinkRow,
  MAX_LIST_ENTRIES,
  NOT_LINKED,
  type RedirectLink,
  type SitemapError,
} from "./model.ts";
import type { CheckReport } from "./outside.ts";

type BadFate = NonNullable<LinkRow["fate"]>;

/** What the report reads of a state's rows. */
export interface LinkSource {
  /** Rows with a fate (broken or redirect) and at least one referrer, sorted by url, after `after` (null: from the first). */
  linked(after: string | null, limit: number): Promise<LinkRow[]>;
  /** The fates of those of `urls` that have one. */
  fates(urls: readonly string[]): Promise<Map<string, BadFate>>;
  /** Rows of the site's own sitemap URLs, sorted by url, after `after`. */
  sitemapRows(after: string | null, limit: number): Promise<LinkRow[]>;
}

/** Redirects a chain may have before it counts as broken: the crawl's own limit (limits.ts). */
export interface ReportLimits {
  maxRedirects: number;
}

const PAGE = 1_000;
/** Fates remembered across pages while chains are followed (many old URLs lead to one new one). */
const FATE_CACHE = 10_000;
const NONE = null;

/** One linked URL's entries: in `broken`, in `redirects`, or in both (a redirect to a broken page). */
export interface LinkEntries {
  broken?: BrokenLink;
  redirect?: RedirectLink;
}

/** Every linked URL's entries, sorted by url. */
export async function* linkEntries(source: LinkSource, limits: ReportLimits): AsyncGenerator<LinkEntries> {
  const cache = new Map<string, BadFate | typeof NONE>();
  for (let after: string | null = null; ; ) {
    const rows = await source.linked(after, PAGE);
    if (rows.length === 0) return;
    for (const row of rows) cache.set(row.url, row.fate);
    yield* await resolvePage(rows, source, limits, cache);
    if (cache.size > FATE_CACHE) cache.clear();
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.url;
  }
}

interface Walk {
  row: LinkRow;
  status: number;
  hops: number;
  at: string;
  chain: Set<string>;
  end?: { broken?: { status: number | null; error: string } };
}

/** Follows every redirect row's chain, all rows at once: one lookup of unknown fates per hop. */
async function resolvePage(rows: LinkRow[], source: LinkSource, limits: ReportLimits, cache: Map<string, BadFate | null>) {
  const walks: Walk[] = [];
  for (const row of rows) {
    if (row.fate?.kind === "redirect") {
      walks.push({ row, status: row.fate.status, hops: 1, at: row.fate.next, chain: new Set([row.url]) });
    }
  }
  for (let open = walks; open.length > 0; ) {
    const unknown = [...new Set(open.map((w) => w.at).filter((url) => !cache.has(url)))];
    if (unknown.length > 0) {
      const found = await source.fates(unknown);
      for (const url of unknown) cache.set(url, found.get(url) ?? NONE);
    }
    for (const walk of open) step(walk, cache.get(walk.at) ?? NONE, limits);
    open = open.filter((walk) => walk.end === undefined);
  }
  const byUrl = new Map(walks.map((w) => [w.row.url, w]));
  return rows.map((row): LinkEntries => {
    const referrers = { referrers: row.referrers, referrer_count: row.referrerCount };
    if (row.fate?.kind === "broken")
      return { broken: { url: row.url, kind: "page", status: row.fate.status, error: row.fate.error, ...referrers } };
    const walk = byUrl.get(row.url)!;
    const entries: LinkEntries = { redirect: { url: row.url, status: walk.status, target: walk.at, hops: walk.hops, ...referrers } };
    if (walk.end?.broken) entries.broken = { url: row.url, kind: "page", ...walk.end.broken, ...referrers };
    return entries;
  });
}

/** One hop of a chain: `fate` is that of `walk.at`, the URL the chain has reached. */
function step(walk: Walk, fate: BadFate | null, limits: ReportLimits): void {
  if (walk.chain.has(walk.at)) {
    walk.end = { broken: { status: null, error: "redirect loop" } };
    return;
  }
  walk.chain.add(walk.at);
  if (fate === null) walk.end = {};
  else if (fate.kind === "broken") walk.end = { broken: { status: fate.status, error: fate.error } };
  else if (walk.hops === limits.maxRedirects) {
    walk.hops++;
    walk.at = fate.next;
    walk.end = { broken: { status: null, error: "too many redirects" } };
  } else {
    walk.hops++;
    walk.at = fate.next;
  }
}

/**
 * The site's sitemap URLs the generated sitemap does not list (the reason they ended under), or
 * lists only thanks to the sitemap (`not_linked`), sorted by url. A URL the crawl never got to (its
 * budget ran out) says nothing either way and is left out.
 */
export async function* sitemapErrors(source: LinkSource): AsyncGenerator<SitemapError> {
  for (let after: string | null = null; ; ) {
    const rows = await source.sitemapRows(after, PAGE);
    for (const row of rows) {
      const reason = row.outcome === LISTED ? (row.followed ? null : NOT_LINKED) : row.outcome;
      if (reason !== null) yield { url: row.url, sitemap: row.sitemap!, reason };
    }
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.url;
  }
}

export const emptyLinkCounts = (): LinkCounts => ({ broken_count: 0, redirect_count: 0, sitemap_error_count: 0 });

/** The checks' unchecked counts, for the kinds that were checked. */
function uncheckedOf(checks: CheckReport | undefined) {
  if (checks === undefined) return {};
  const { broken: _broken, ...counts } = checks;
  return counts;
}

/**
 * The broken entries of the crawl's links (sorted, from the rows) and of its checks beyond them
 * (sorted, in memory: at most the checks' cap), merged by url; a page entry before a check's of the
 * same URL.
 */
async function* allBroken(source: LinkSource, limits: ReportLimits, checks: CheckReport | undefined): AsyncGenerator<LinkEntries> {
  const extra = checks?.broken ?? [];
  let next = 0;
  for await (const entries of linkEntries(source, limits)) {
    const url = (entries.broken ?? entries.redirect)!.url;
    while (next < extra.length && extra[next]!.url < url) yield { broken: extra[next++] };
    yield entries;
  }
  while (next < extra.length) yield { broken: extra[next++] };
}

/**
 * `data.links`: the lists cut to `maxEntries` each (MAX_LIST_ENTRIES), with what was counted. A
 * crawl held in memory has few bad rows; the cut bounds the answer, not the work.
 */
export async function cutLinkReport(
  source: LinkSource,
  limits: ReportLimits,
  maxEntries = MAX_LIST_ENTRIES,
  checks?: CheckReport,
): Promise<{ report: LinkReport; counts: LinkCounts }> {
  const report: LinkReport = { broken: [], redirects: [], sitemap_errors: [], truncated: false };
  const counts: LinkCounts = { ...emptyLinkCounts(), ...uncheckedOf(checks) };
  for await (const { broken, redirect } of allBroken(source, limits, checks)) {
    if (broken && counts.broken_count++ < maxEntries) report.broken.push(broken);
    if (redirect && counts.redirect_count++ < maxEntries) report.redirects.push(redirect);
  }
  for await (const error of sitemapErrors(source)) {
    if (counts.sitemap_error_count++ < maxEntries) report.sitemap_errors.push(error);
  }
  report.truncated = Math.max(counts.broken_count, counts.redirect_count, counts.sitemap_error_count) > maxEntries;
  return { report: { ...report, ...uncheckedOf(checks) }, counts };
}

/**
 * The full lists as JSON text, `{"broken": [...], "redirects": [...], "sitemap_errors": [...],
 * "truncated": false}` (with the checks' unchecked counts after them), handed to `write` a piece at
 * a time (links.json, `--link-report FILE`): a job's lists never sit in memory whole. Reads the
 * linked rows twice, once per list.
 */
export async function writeLinkLists(
  source: LinkSource,
  limits: ReportLimits,
  write: (text: string) => void | Promise<void>,
  checks?: CheckReport,
): Promise<LinkCounts> {
  const unchecked = uncheckedOf(checks);
  const counts: LinkCounts = { ...emptyLinkCounts(), ...unchecked };
  const list = async <T>(name: keyof LinkLists, items: AsyncIterable<T>, count: () => void, first: boolean) => {
    await write(`${first ? "{" : ","}${JSON.stringify(name)}:[`);
    let n = 0;
    for await (const item of items) {
      await write(`${n++ === 0 ? "" : ","}${JSON.stringify(item)}`);
      count();
    }
    await write("]");
  };
  const only = async function* <K extends keyof LinkEntries>(key: K) {
    for await (const entries of allBroken(source, limits, key === "broken" ? checks : undefined)) if (entries[key]) yield entries[key]!;
  };
  await list("broken", only("broken"), () => counts.broken_count++, true);
  await list("redirects", only("redirect"), () => counts.redirect_count++, false);
  await list("sitemap_errors", sitemapErrors(source), () => counts.sitemap_error_count++, false);
  await write(`,"truncated":false`);
  for (const [name, count] of Object.entries(unchecked)) await write(`,${JSON.stringify(name)}:${count}`);
  await write("}");
  return counts;
}

/** The whole uncut report in memory: for tests and small crawls. */
export async function fullLinkLists(source: LinkSource, limits: ReportLimits, checks?: CheckReport): Promise<LinkReport> {
  let text = "";
  await writeLinkLists(
    source,
    limits,
    (piece) => {
      text += piece;
    },
    checks,
  );
  return JSON.parse(text) as LinkReport;
}
