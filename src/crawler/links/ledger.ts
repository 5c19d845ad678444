// The link report's rows in memory, for the memory crawl state (POST /api/generate, `genapi
// crawl`). A row exists only while a URL may still be reported (model.ts): from when it is queued or
// claimed until it answers fine, for good when it answers badly, and for every sitemap URL. A URL
// queued with no referrer yet costs a map entry and no row object (PENDING). A row's referrers are
// gathered unsorted and put in the report's form (the 5 smallest, sorted) when the report reads
// them (model.ts, gatherReferrer): most rows are thrown away unread.
//
// The ledger is also the state's seen set (SeenUrls): one map entry a URL, so that the look-up that
// dedupes a page's link finds its row too. Kept apart, the two sets cost two look-ups a link; on
// the 10,000-page bench site (20 links a page) the second one was the largest part of the report's
// cost in a profile of genapi crawl.
//
// Its cost, measured on the 10,000-page bench site beside the same crawl without the report (CPU per
// page and peak RSS): notes/link-report.md.
import { gatherReferrer, keepSmallest, LISTED, type LinkFacts, type LinkRow, type SeenUrls } from "./model.ts";
import type { LinkSource } from "./report.ts";

/** Seen, nothing to report: answered fine, left out, or never to be requested. */
const SEEN = 0;
/** Seen and to be requested (queued or claimed), not answered yet, no referrer so far. */
const PENDING = 1;
/** Not seen (a full frontier dropped it; a later page may still queue it), no referrer so far. */
const DROPPED = 2;

/** A URL that may still be reported, and whether the crawl has seen it. */
interface Row extends LinkRow {
  seen: boolean;
}

type Slot = typeof SEEN | typeof PENDING | typeof DROPPED | Row;

function isSeen(slot: Slot | undefined): boolean {
  return slot === SEEN || slot === PENDING || (typeof slot === "object" && slot.seen);
}

/**
 * The memory state's seen set and its link report in one map, so a page's link costs one look-up
 * for both: the state asks `meet` for each link it dedupes, and that counts the page as a referrer.
 */
export class LinkLedger implements LinkSource, SeenUrls {
  private readonly slots = new Map<string, Slot>();
  private sorted: { linked: Row[]; sitemap: Row[] } | null = null;
  /** Rows of sitemap URLs: without any, no outcome is looked up. */
  private sitemapUrls = 0;

  has(url: string): boolean {
    return isSeen(this.slots.get(url));
  }

  meet(url: string, referrer: string | null): boolean {
    const slot = this.slots.get(url);
    if (!isSeen(slot)) return false;
    if (referrer !== null && slot !== SEEN) this.refer(url, slot!, referrer, true);
    return true;
  }

  add(url: string, pending = true, referrer: string | null = null): void {
    const slot = this.slots.get(url);
    if (typeof slot === "object") {
      if (slot.seen) return;
      slot.seen = true;
      if (referrer !== null) this.refer(url, slot, referrer, true);
    } else if (slot === undefined || slot === DROPPED) {
      this.slots.set(url, !pending ? SEEN : referrer === null ? PENDING : newRow(url, true, referrer, true));
    }
  }

  drop(url: string, referrer: string | null): void {
    const slot = this.slots.get(url);
    if (slot === undefined) this.slots.set(url, referrer === null ? DROPPED : newRow(url, false, referrer, true));
    else if (referrer !== null && slot !== SEEN) this.refer(url, slot, referrer, true);
  }

  delete(url: string): boolean {
    const slot = this.slots.get(url);
    if (!isSeen(slot)) return false;
    if (slot === SEEN) this.slots.delete(url);
    else if (slot === PENDING) this.slots.set(url, DROPPED);
    else if (typeof slot === "object") slot.seen = false;
    return true;
  }

  /**
   * One record's facts, after the state met its links (`meet`, `add`, `drop`): sitemap seeds, the
   * answers of its requests, the outcomes of the sitemap URLs among them (the URLs `excluded` with
   * their reason, `listed` as LISTED), then the page's nofollow links. Its followed links were
   * counted as the state met them.
   */
  apply(facts: LinkFacts, excluded: readonly { reason: string; url: string }[], listed: string | undefined): void {
    this.sorted = null;
    if (facts.sitemap !== undefined) {
      for (const seed of facts.sitemap) {
        const row = this.row(seed.url);
        if (row.sitemap === null) this.sitemapUrls++;
        row.sitemap ??= seed.sitemap;
        if (seed.outcome !== undefined) row.outcome ??= seed.outcome;
        if (seed.linked) row.followed = true;
      }
    }
    for (const { url, fate } of facts.fates) {
      if (fate.kind !== "ok") this.row(url).fate = fate;
      else {
        // Requested, so seen: a row stays only for a sitemap URL.
        const slot = this.slots.get(url);
        if (typeof slot === "object" && slot.sitemap !== null) slot.fate = null;
        else if (slot !== undefined) this.slots.set(url, SEEN);
      }
    }
    if (this.sitemapUrls > 0) {
      for (const { reason, url } of excluded) this.outcome(url, reason);
      if (listed !== undefined) this.outcome(listed, LISTED);
    }
    const page = facts.page;
    if (page !== undefined) {
      for (const url of page.nofollow) {
        // A nofollow link counts unless its URL is known fine or left out; one never met may still
        // be queued by a later followed link.
        const slot = this.slots.get(url);
        if (slot === undefined) this.slots.set(url, newRow(url, false, page.from, false));
        else if (slot !== SEEN) this.refer(url, slot, page.from, false);
      }
    }
  }

  /** URLs that may still be reported, rows or not (for tests of the memory bound). */
  get size(): number {
    let kept = 0;
    for (const slot of this.slots.values()) if (slot !== SEEN) kept++;
    return kept;
  }

  private outcome(url: string, outcome: string): void {
    const slot = this.slots.get(url);
    if (typeof slot === "object" && slot.sitemap !== null) slot.outcome = outcome;
  }

  /** Counts `from` for the URL of `slot` (not SEEN): its first referrer makes its row. */
  private refer(url: string, slot: Slot, from: string, followed: boolean): void {
    if (typeof slot !== "object") {
      this.slots.set(url, newRow(url, slot === PENDING, from, followed));
      return;
    }
    slot.referrerCount++;
    gatherReferrer(slot.referrers, from);
    if (followed) slot.followed = true;
  }

  /** The row of `url`, made if it has none (seen as far as the crawl has seen it). */
  private row(url: string): Row {
    const slot = this.slots.get(url);
    if (typeof slot === "object") return slot;
    const row = newRow(url, isSeen(slot), null, false);
    this.slots.set(url, row);
    return row;
  }

  private lists(): { linked: Row[]; sitemap: Row[] } {
    if (this.sorted === null) {
      const linked: Row[] = [];
      const sitemap: Row[] = [];
      for (const row of this.slots.values()) {
        if (typeof row !== "object") continue;
        keepSmallest(row.referrers);
        if (row.fate !== null && row.referrerCount > 0) linked.push(row);
        if (row.sitemap !== null) sitemap.push(row);
      }
      const byUrl = (a: Row, b: Row) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
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
      const row = this.slots.get(url);
      if (typeof row === "object" && row.fate !== null) found.set(url, row.fate);
    }
    return found;
  }

  async sitemapRows(after: string | null, limit: number): Promise<LinkRow[]> {
    return page(this.lists().sitemap, after, limit);
  }
}

/** A row of `url`, with its first referrer if there is one. */
function newRow(url: string, seen: boolean, referrer: string | null, followed: boolean): Row {
  const referrers = referrer === null ? [] : [referrer];
  return { url, seen, referrerCount: referrers.length, referrers, followed, fate: null, sitemap: null, outcome: null };
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
