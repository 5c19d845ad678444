// The link report of a job (link_report): the store-backed state's counterpart of the crawler's
// in-memory LinkLedger (src/crawler/links/ledger.ts), with the same rule (a URL's referrers are
// counted only while it may still be reported) and its rows in the store's job_links, so that a
// job continued by another process reports the same lists as one never interrupted.
//
// Nothing is written per link. What a stretch of records adds (referrer counts and the 5 smallest
// referrers per URL, fates, sitemap URLs and their outcomes) is gathered here and written with the
// state's checkpoint, in its transaction: a record and its link rows are durable together or not at
// all. Whether a link's target still needs counting is answered, in this order, by a bounded cache
// of recent URLs' status, by the state's knowledge that the URL was never seen (new: counted), and
// only then by the store (requested, and holding no row: fine). An answer that cannot be had in
// memory errs towards counting: a needless row is never reported (it has no fate), a missed
// referrer would be.
import { BloomFilter } from "../crawler/index.ts";
import type { JobCrawlState, LinkCheckpoint } from "./job-store.ts";
import { forgetOldest } from "./forget-oldest.ts";
import { addReferrer, isReferrerLink, type LinkFacts, type LinkVerdict, LISTED } from "../crawler/index.ts";

/** A URL's status in the cache: its links are counted (pending, bad, a sitemap URL) or not (fine). */
const COUNTED = 1;
const FINE = 0;

export interface LinkLedgerOptions {
  /** URLs whose status is remembered; older ones are asked of the store. */
  cacheSize: number;
  /** URLs the sitemap filter is sized for. */
  expectedUrls: number;
}

export class StoreLinkLedger {
  private readonly status = new Map<string, typeof COUNTED | typeof FINE>();
  /** The job's sitemap URLs, as a filter: their rows are kept and their links always counted. */
  private readonly sitemap: BloomFilter;
  private batch = emptyBatch();
  /** Sitemap URLs added (or read back): none, and no outcome is ever asked of the filter. */
  private sitemapUrls = 0;

  constructor(
    private readonly store: JobCrawlState,
    private readonly jobId: string,
    private readonly options: LinkLedgerOptions,
  ) {
    this.sitemap = new BloomFilter(options.expectedUrls);
  }

  /** A new process: the sitemap filter is read back from the store. */
  async resume(): Promise<void> {
    for (let after: string | null = null; ; ) {
      const rows = await this.store.linkRows(this.jobId, "sitemap", after, 10_000);
      for (const row of rows) this.sitemap.add(row.url);
      this.sitemapUrls += rows.length;
      if (rows.length < 10_000) break;
      after = rows[rows.length - 1]!.url;
    }
  }

  /** A URL queued or claimed: it will be requested, so links to it count. */
  pending(url: string): void {
    this.remember(url, COUNTED);
  }

  /** A link left out (robots.txt, filter): never requested, never reported. */
  skipped(url: string): void {
    this.remember(url, FINE);
  }

  /**
   * One record's facts, after its links were queued (the page counts as the referrer of those
   * isReferrerLink accepts), with the URLs it finished (`excluded` with their reason, `listed`): the
   * outcomes of the sitemap URLs among them. `neverSeen(url)`: the state knows the URL was never
   * met (its Bloom filter says so), so it is new and counted without asking the store.
   */
  async apply(
    facts: LinkFacts,
    links: readonly LinkVerdict[],
    excluded: readonly { reason: string; url: string }[],
    listed: string | undefined,
    neverSeen: (url: string) => boolean,
  ): Promise<void> {
    const batch = this.batch;
    for (const seed of facts.sitemap ?? []) {
      this.sitemap.add(seed.url);
      this.sitemapUrls++;
      this.remember(seed.url, COUNTED);
      const known = batch.sitemap.get(seed.url);
      if (known === undefined)
        batch.sitemap.set(seed.url, { url: seed.url, sitemap: seed.sitemap, outcome: seed.outcome ?? null, followed: !!seed.linked });
    }
    for (const { url, fate } of facts.fates) {
      if (fate.kind === "ok") {
        batch.fine.add(url);
        if (!this.maySitemap(url)) {
          batch.referrers.delete(url);
          this.remember(url, FINE);
        }
      } else {
        batch.fates.set(url, { url, fate });
        this.remember(url, COUNTED);
      }
    }
    if (this.sitemapUrls > 0) {
      for (const { reason, url } of excluded) if (this.maySitemap(url)) batch.outcomes.set(url, { url, outcome: reason });
      if (listed !== undefined && this.maySitemap(listed)) batch.outcomes.set(listed, { url: listed, outcome: LISTED });
    }
    const page = facts.page;
    if (!page) return;
    // Most links are decided here without allocating anything: counted at once, or known fine.
    let ask: string[] | undefined;
    for (const link of links) if (isReferrerLink(link) && !this.decided(link.url, page.from, true, neverSeen)) ask = push(ask, link.url);
    // The first `followed` URLs asked are followed links, the rest nofollow ones.
    const followed = ask?.length ?? 0;
    for (const url of page.nofollow) if (!this.decided(url, page.from, false, neverSeen)) ask = push(ask, url);
    if (ask === undefined) return;
    const settled = await this.store.linksSettled(this.jobId, ask);
    ask.forEach((url, i) => {
      this.remember(url, settled.has(url) ? FINE : COUNTED);
      if (!settled.has(url)) this.count(url, page.from, i < followed);
    });
  }

  /**
   * A link to `url` from `from`, counted when its target may still be reported (pending, bad, a
   * sitemap URL, or never seen); false when only the store can tell.
   */
  private decided(url: string, from: string, followed: boolean, neverSeen: (url: string) => boolean): boolean {
    const status = this.status.get(url);
    if (status === FINE) return true;
    if (status === undefined && !this.maySitemap(url) && !neverSeen(url)) return false;
    this.count(url, from, followed);
    return true;
  }

  private count(url: string, from: string, followed: boolean): void {
    let row = this.batch.referrers.get(url);
    if (row === undefined) {
      row = { url, count: 0, referrers: [], followed: false };
      this.batch.referrers.set(url, row);
    }
    row.count++;
    addReferrer(row.referrers, from);
    if (followed) row.followed = true;
  }

  /** What the records since the last call add, for the checkpoint that makes them durable. */
  take(): LinkCheckpoint {
    const batch = this.batch;
    this.batch = emptyBatch();
    return {
      referrers: [...batch.referrers.values()],
      sitemap: [...batch.sitemap.values()],
      fates: [...batch.fates.values()],
      fine: [...batch.fine],
      outcomes: [...batch.outcomes.values()],
    };
  }

  /** A sitemap URL, perhaps (a Bloom filter); never asked when the job has none. */
  private maySitemap(url: string): boolean {
    return this.sitemapUrls > 0 && this.sitemap.mayHave(url);
  }

  /**
   * Past the cache size the oldest go (forget-oldest.ts). (An LRU that moved every hit to the end, a
   * delete and a set on a 100,000-entry Map, took 35 % of a 60,000-page job's CPU and raised its
   * peak RSS from 150 to 191 MB.)
   */
  private remember(url: string, status: typeof COUNTED | typeof FINE): void {
    this.status.set(url, status);
    forgetOldest(this.status, this.options.cacheSize);
  }
}

/** Appends to a list made on first need. */
function push(list: string[] | undefined, url: string): string[] {
  if (list === undefined) return [url];
  list.push(url);
  return list;
}

interface Batch {
  referrers: Map<string, LinkCheckpoint["referrers"][number]>;
  sitemap: Map<string, LinkCheckpoint["sitemap"][number]>;
  fates: Map<string, LinkCheckpoint["fates"][number]>;
  fine: Set<string>;
  outcomes: Map<string, LinkCheckpoint["outcomes"][number]>;
}

function emptyBatch(): Batch {
  return { referrers: new Map(), sitemap: new Map(), fates: new Map(), fine: new Set(), outcomes: new Map() };
}
