// The link report beyond the crawl's own links (`link_report: {"external", "resources"}`): each
// distinct link from a crawled page to another origin, and each distinct resource a page loads
// (images and their srcset, stylesheets, scripts, media sources and posters), is requested once:
// HEAD, then GET when HEAD answers 405 or 501. Nothing is followed: a 3xx answer is no fault of the
// page (a redirect of an external link is not reported), a 4xx/5xx or a failure is `broken`.
//
// Why it is kept this way. A crawl may meet far more distinct external URLs than it may check (a
// 1,000,000-page site linking out from every page): checks are capped (MAX_CHECKED_URLS a kind),
// and what a check needs is kept only for the URLs it checks, one row each, so memory is bounded
// by the cap whatever the crawl's size (rows of fine URLs shrink to a marker that still dedupes).
// Counting the distinct URLs met past the cap exactly would need a set of them all, which is the
// unbounded memory the cap is for: they are counted through a Bloom filter of fixed size (10 bits a
// URL for MAX_COUNTED_UNCHECKED URLs, 1.25 MB, made on the first URL past the cap), which never
// counts a URL twice and misses a new one only on a false positive: none of 100,000, 0.14 % of
// 1,000,000, 2.9 % of 2,000,000 in a simulation (notes/link-report.md).
import { BloomFilter } from "./bloom.ts";
import { type BrokenLink, gatherReferrer, keepSmallest } from "./model.ts";

/** What is checked: a link to another origin, or a resource a page loads. */
export type CheckKind = "external" | "resource";

/** URLs checked per kind and crawl; the rest are counted in `external_unchecked` / `resources_unchecked`. */
export const MAX_CHECKED_URLS = 10_000;
/** Distinct unchecked URLs the counting filter is sized for (false positives under 1 % up to there). */
export const MAX_COUNTED_UNCHECKED = 1_000_000;

/** A checked URL's answer: fine (any 1xx-3xx), or broken with the final status (null: no answer) and why. */
export type CheckFate = { kind: "ok" } | { kind: "broken"; status: number | null; error: string };

/** What a kind's checks found: the broken ones (sorted by url) and the distinct URLs left unchecked. */
export interface CheckReport {
  /** Entries with `kind` "external" or "resource", sorted by url (then kind). */
  broken: BrokenLink[];
  /** Present when external links were checked. */
  external_unchecked?: number;
  /** Present when resources were checked. */
  resources_unchecked?: number;
}

interface Row {
  referrerCount: number;
  /** Gathered unsorted (model.ts gatherReferrer), put in order when the report reads them. */
  referrers: string[];
  fate: CheckFate | null;
}

/** A URL that answered fine: nothing more to keep than that it was met (later links to it are no news). */
const FINE = 0;

type Slot = Row | typeof FINE;

/**
 * A ledger as it can be stored and read back (a job handed to another process carries its checks
 * on: src/jobs/job-crawl.ts): per kind, each slot (0 fine, or [count, referrers, status,
 * error] for a broken URL, [count, referrers] for one not checked yet), the unchecked count and the
 * counting filter's bits (base64), if it was made.
 */
export interface CheckSnapshot {
  v: 1;
  kinds: Record<CheckKind, { slots: [string, StoredSlot][]; unchecked: number; filter: string | null }>;
}
type StoredSlot = typeof FINE | [number, string[]] | [number, string[], number | null, string];

/** One kind's rows: at most `cap` URLs checked, the rest counted. */
class KindLedger {
  readonly slots = new Map<string, Slot>();
  unchecked = 0;
  private filter: BloomFilter | null = null;

  constructor(private readonly cap: number) {}

  snapshot(): CheckSnapshot["kinds"][CheckKind] {
    const slots: [string, StoredSlot][] = [];
    for (const [url, slot] of this.slots) {
      if (typeof slot !== "object") slots.push([url, slot]);
      else {
        const referrers = keepSmallest(slot.referrers);
        slots.push([
          url,
          slot.fate?.kind === "broken"
            ? [slot.referrerCount, referrers, slot.fate.status, slot.fate.error]
            : [slot.referrerCount, referrers],
        ]);
      }
    }
    return { slots, unchecked: this.unchecked, filter: this.filter ? Buffer.from(this.filter.bytes()).toString("base64") : null };
  }

  restore(stored: CheckSnapshot["kinds"][CheckKind]): void {
    for (const [url, slot] of stored.slots) {
      if (typeof slot === "number") this.slots.set(url, slot);
      else {
        const [referrerCount, referrers, status, error] = slot;
        // A check still under way when the ledger was stored is one the next attempt makes (pending()).
        const fate: CheckFate | null = error === undefined ? null : { kind: "broken", status: status ?? null, error };
        this.slots.set(url, { referrerCount, referrers, fate });
      }
    }
    this.unchecked = stored.unchecked;
    if (stored.filter !== null) this.filter = new BloomFilter(MAX_COUNTED_UNCHECKED, undefined, Buffer.from(stored.filter, "base64"));
  }

  /** URLs met and not checked yet (read back from a snapshot): to be checked now. */
  pending(): string[] {
    const urls: string[] = [];
    for (const [url, slot] of this.slots) if (typeof slot === "object" && slot.fate === null) urls.push(url);
    return urls;
  }

  /**
   * A link to `url` from the page `referrer`: counted for its row; true when the URL is new and
   * is to be checked now (the caller's to do, once).
   */
  meet(url: string, referrer: string): boolean {
    const slot = this.slots.get(url);
    if (slot !== undefined) {
      if (typeof slot === "object") {
        slot.referrerCount++;
        gatherReferrer(slot.referrers, referrer);
      }
      return false;
    }
    if (this.slots.size < this.cap) {
      this.slots.set(url, { referrerCount: 1, referrers: [referrer], fate: null });
      return true;
    }
    this.countUnchecked(url);
    return false;
  }

  settle(url: string, fate: CheckFate): void {
    const slot = this.slots.get(url);
    if (typeof slot !== "object") return;
    if (fate.kind === "ok") this.slots.set(url, FINE);
    else slot.fate = fate;
  }

  private countUnchecked(url: string): void {
    this.filter ??= new BloomFilter(MAX_COUNTED_UNCHECKED);
    if (this.filter.addIfNew(url)) this.unchecked++;
  }
}

/** The checks' rows of one crawl, both kinds; the requests are CheckRunner's (../checks.ts). */
export class CheckLedger {
  private readonly kinds: Record<CheckKind, KindLedger>;

  constructor(
    readonly checks: { external: boolean; resources: boolean },
    /** URLs checked per kind at most: MAX_CHECKED_URLS; a test may set a smaller one. */
    cap = MAX_CHECKED_URLS,
  ) {
    this.kinds = { external: new KindLedger(cap), resource: new KindLedger(cap) };
  }

  meet(kind: CheckKind, url: string, referrer: string): boolean {
    return this.kinds[kind].meet(url, referrer);
  }

  settle(kind: CheckKind, url: string, fate: CheckFate): void {
    this.kinds[kind].settle(url, fate);
  }

  /** What the ledger holds, to be stored (CheckSnapshot). */
  snapshot(): CheckSnapshot {
    return { v: 1, kinds: { external: this.kinds.external.snapshot(), resource: this.kinds.resource.snapshot() } };
  }

  /** A ledger carried on from a snapshot of the same crawl (its checks pending then are to be made). */
  static restore(checks: { external: boolean; resources: boolean }, cap: number, snapshot: CheckSnapshot): CheckLedger {
    const ledger = new CheckLedger(checks, cap);
    for (const kind of ["external", "resource"] as const) ledger.kinds[kind].restore(snapshot.kinds[kind]);
    return ledger;
  }

  /** The URLs met and not checked yet, by kind: those a snapshot was taken with, to be checked now. */
  pending(): { kind: CheckKind; url: string }[] {
    return (["external", "resource"] as const).flatMap((kind) => this.kinds[kind].pending().map((url) => ({ kind, url })));
  }

  /**
   * The broken URLs of both kinds, sorted by url (an external link before a resource of the same
   * URL). A URL whose check the crawl's stop cut short (or never started) counts as unchecked; its
   * row stays, so that a crawl carried on (restore) checks it then.
   */
  report(): CheckReport {
    const broken: BrokenLink[] = [];
    const pending = { external: 0, resource: 0 };
    for (const kind of ["external", "resource"] as const) {
      for (const [url, slot] of this.kinds[kind].slots) {
        if (typeof slot === "object" && slot.fate === null) pending[kind]++;
        if (typeof slot !== "object" || slot.fate?.kind !== "broken") continue;
        const { status, error } = slot.fate;
        broken.push({ url, kind, status, error, referrers: keepSmallest(slot.referrers), referrer_count: slot.referrerCount });
      }
    }
    broken.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
    const report: CheckReport = { broken };
    if (this.checks.external) report.external_unchecked = this.kinds.external.unchecked + pending.external;
    if (this.checks.resources) report.resources_unchecked = this.kinds.resource.unchecked + pending.resource;
    return report;
  }
}
