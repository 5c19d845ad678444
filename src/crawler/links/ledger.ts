// The link report's rows in memory, for the memory crawl state (POST /api/generate, `genapi
// crawl`). A row exists only while a URL may still be reported (model.ts): from when it is queued or
// claimed until it answers fine, for good when it answers badly, and for every sitemap URL. A URL
// queued with no referrer yet costs a map entry and no row object (PENDING). A row's referrers are
// gathered unsorted and put in the report's form (the 5 smallest, sorted) when the report reads
// them (model.ts, gatherReferrer): most rows are thrown away unread.
//
// Its cost, measured on the 10,000-page bench site beside the same crawl without the report (CPU per
// page and peak RSS): notes/link-report.md.
import { gatherReferrer, keepSmallest, LISTED, type LinkFacts, type LinkRow } from "./model.ts";
import type { LinkSource } from "./report.ts";

/** Queued or claimed, not answered yet, no referrer so far. */
const PENDING = 0;

export class LinkLedger implements LinkSource {
  private readonly rows = new Map<string, LinkRow | typeof PENDING>();
  private sorted: { linked: LinkRow[]; sitemap: LinkRow[] } | null = null;
  /** Rows of sitemap URLs: without any, no outcome is looked up. */
  private sitemapUrls = 0;

  /** `seen(url)`: the crawl has met the URL (queued, requested, or judged and left out). */
  constructor(private readonly seen: (url: string) => boolean) {}

  /** A URL the crawl will request: links to it count from now on. */
  pending(url: string): void {
    if (!this.rows.has(url)) this.rows.set(url, PENDING);
  }

  /**
   * One record's facts, after its links were queued (pending): sitemap seeds, the answers of its
   * requests, the outcomes of the sitemap URLs among them (the URLs `excluded` with their reason,
   * `listed` as LISTED), then the page's links.
   */
  apply(facts: LinkFacts, excluded: readonly { reason: string; url: string }[], listed: string | undefined): void {
    this.sorted = null;
    for (const seed of facts.sitemap ?? []) {
      const row = this.row(seed.url);
      if (row.sitemap === null) this.sitemapUrls++;
      row.sitemap ??= seed.sitemap;
      if (seed.outcome !== undefined) row.outcome ??= seed.outcome;
      if (seed.linked) row.followed = true;
    }
    for (const { url, fate } of facts.fates) {
      if (fate.kind !== "ok") this.row(url).fate = fate;
      else {
        const row = this.rows.get(url);
        if (row === undefined) continue;
        if (row !== PENDING && row.sitemap !== null) row.fate = null;
        else this.rows.delete(url);
      }
    }
    if (this.sitemapUrls > 0) {
      for (const { reason, url } of excluded) this.outcome(url, reason);
      if (listed !== undefined) this.outcome(listed, LISTED);
    }
    const page = facts.page;
    if (page) {
      for (const url of page.followed) this.refer(url, page.from, true);
      for (const url of page.nofollow) this.refer(url, page.from, false);
    }
  }

  /** Rows kept now (for tests of the memory bound). */
  get size(): number {
    return this.rows.size;
  }

  private outcome(url: string, outcome: string): void {
    const row = this.rows.get(url);
    if (row !== undefined && row !== PENDING && row.sitemap !== null) row.outcome = outcome;
  }

  private refer(url: string, from: string, followed: boolean): void {
    const known = this.rows.get(url);
    // No row for a followed link: it answered fine or is never requested (the state has marked every
    // followed link seen, or pending when the full frontier dropped it), so no second look-up. A
    // nofollow link never met may still be queued by a later followed link: it gets a row.
    if (known === undefined && (followed || this.seen(url))) return;
    if (known === undefined || known === PENDING) {
      // Its first referrer (for most URLs the page that queued it): a row with it, no second look-up.
      this.rows.set(url, newRow(url, from, followed));
      return;
    }
    known.referrerCount++;
    gatherReferrer(known.referrers, from);
    if (followed) known.followed = true;
  }

  private row(url: string): LinkRow {
    const known = this.rows.get(url);
    if (known !== undefined && known !== PENDING) return known;
    const row = newRow(url, null, false);
    this.rows.set(url, row);
    return row;
  }

  private lists() {
    if (this.sorted === null) {
      const linked: LinkRow[] = [];
      const sitemap: LinkRow[] = [];
      for (const row of this.rows.values()) {
        if (row === PENDING) continue;
        keepSmallest(row.referrers);
        if (row.fate !== null && row.referrerCount > 0) linked.push(row);
        if (row.sitemap !== null) sitemap.push(row);
      }
      const byUrl = (a: LinkRow, b: LinkRow) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
      this.sorted = { linked: linked.sort(byUrl), sitemap: sitemap.sort(byUrl) };
    }
    return this.sorted;
  }

  async linked(after: string | null, limit: number): Promise<LinkRow[]> {
    return page(this.lists().linked, after, limit);
  }

  async fates(urls: readonly string[]): Promise<Map<string, NonNullable<LinkRow["fate"]>>> {
    const found = new Map<string, NonNullable<LinkRow["fate"]>>();
    for (const url of urls) {
      const row = this.rows.get(url);
      if (row !== undefined && row !== PENDING && row.fate !== null) found.set(url, row.fate);
    }
    return found;
  }

  async sitemapRows(after: string | null, limit: number): Promise<LinkRow[]> {
    return page(this.lists().sitemap, after, limit);
  }
}

/** A row of `url`, with its first referrer if there is one. */
function newRow(url: string, referrer: string | null, followed: boolean): LinkRow {
  const referrers = referrer === null ? [] : [referrer];
  return { url, referrerCount: referrers.length, referrers, followed, fate: null, sitemap: null, outcome: null };
}

/** The rows after `after` (binary search: the list is sorted by url), at most `limit`. */
function page(rows: LinkRow[], after: string | null, limit: number): LinkRow[] {
  let lo = 0;
  if (after !== null) {
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (rows[mid]!.url <= after) lo = mid + 1;
      else hi = mid;
    }
  }
  return rows.slice(lo, lo + limit);
}
