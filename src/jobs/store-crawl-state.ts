// A CrawlState whose frontier, seen set and listed entries live in the store, so a job survives
// its process and memory stays flat however large the site is. Records are applied in memory at
// once and written in batches (one transaction per flushPages pages or flushMs), each under the
// job's lease and while the crawl goes on (checkpointBehind); a bounded cache of recent URLs answers
// most seen checks without the store.
import {
  type CrawlState,
  type ExclusionReport,
  emptyExclusionReport,
  type FrontierItem,
  NO_LINK_FACTS,
  type PageKept,
  type PageRecord,
  type RecordResult,
  type ResumePoint,
  recordExclusion,
  type SitemapEntry,
} from "../crawler/index.ts";
import type { CrawlFacts, FrontierUrl, JobCrawlState, JobQueue, StoredEntry } from "./job-store.ts";
import type { JobProgress } from "./model.ts";
import { BloomFilter } from "../crawler/index.ts";
import { storedEntries } from "./publish.ts";
import { forgetOldest } from "./forget-oldest.ts";
import { StoreLinkLedger } from "./store-link-ledger.ts";

export interface StoreStateOptions {
  /** Pages per checkpoint at most. */
  flushPages: number;
  /** Time between checkpoints at most (ms). */
  flushMs: number;
  /** URLs the seen cache holds; older ones are asked of the store. */
  cacheSize: number;
  /** Frontier items held in memory; the rest wait in the store. */
  windowSize: number;
  /** URLs the Bloom filter is sized for (the seen set's expected size). */
  expectedUrls: number;
  /** The job runs with link_report: its rows go to job_links with each checkpoint (store-link-ledger.ts). */
  linkReport?: boolean;
}

/**
 * A window of 10,000 frontier items: one that runs dry writes what is pending, then reads the next
 * from the store, which on PostgreSQL a site's run 2 waited for 4.8 s of 27 with a window of 2,000
 * (notes/sites.md; the larger window is not measured there). A site's 100,000-page run 1 and its
 * unchanged run 2 on SQLite (scripts/bench/probes/ab-site-run.ts --first, 5 rounds, same-round
 * ratios of CPU a page to a window of 2,000): run 1 0.926x (5 of 5 below 1), run 2 0.959x (4 of 5,
 * one at 1.083: suggestive on that machine), so run 2 ÷ run 1 rose, 1.045x (4 of 5 above 1).
 * Memory holds 10,000 items: about 1.5 MB at the bench site's 33-character URLs, 21 MB at the
 * 2,048-character limit. A checkpoint every 2,000 pages with this window (against 500 and 2,000)
 * was measured and not taken: run 2 0.956x, but run 1 1.045x (notes/bench-profile.md, section 22).
 */
export const defaultStoreStateOptions: StoreStateOptions = {
  flushPages: 500,
  flushMs: 1000,
  cacheSize: 100_000,
  windowSize: 10_000,
  expectedUrls: 200_000,
};

export interface Lease {
  /** Writes a checkpoint under the lease; false when it is lost (or the job cancelled); throws when the store failed. */
  checkpoint: (batch: Parameters<JobCrawlState["checkpoint"]>[4] & { pages: PageKept[] }) => Promise<boolean>;
  /** Called once when a checkpoint finds the lease lost, or is given up: the runner stops the crawl. */
  lost: () => void;
  /**
   * A checkpoint failed (`tries` so far): how long to wait before writing it again, or null to
   * give it up. A checkpoint is idempotent, so one that failed at its deadline but went through
   * anyway is written again harmlessly. Without it a failed checkpoint is given up at once.
   */
  retry?: (error: unknown, tries: number) => number | null;
  /** Elapsed crawl time over all attempts, for progress. */
  elapsedMs: () => number;
  progress: (progress: JobProgress) => void;
}

const EMPTY: ReadonlySet<string> = new Set();
/** A link at recordNow's first look: known here; maybe seen (the filter has it: the store is asked); certainly new. */
const KNOWN = 0;
const ASK = 1;
const NEW = 2;

export class StoreCrawlState implements CrawlState {
  private readonly cache = new Set<string>();
  /** Every URL seen, as a filter: a URL it has not got needs no store lookup. */
  private readonly bloom: BloomFilter;
  private window: FrontierUrl[] = [];
  /** Items newer than the window's end are in the store (or pending) only. */
  private windowAtTail = false;
  private lastSeq = 0;
  /** The seq of the last item taken: the store's frontier continues after it. */
  private takenSeq = 0;
  /** Items taken and not yet recorded done. */
  private inFlight = 0;
  private facts: CrawlFacts | null = null;
  private report_: ExclusionReport = emptyExclusionReport();
  private pending = emptyBatch();
  /** URLs of the checkpoint being written. */
  private writing: ReadonlySet<string> = EMPTY;
  private pendingPages = 0;
  private lastFlush = 0;
  private flushing: Promise<void> = Promise.resolve();
  /** The checkpoint a record started and the crawl did not wait for, until it is written (checkpointBehind). */
  private checkpointing: Promise<void> | null = null;
  private dead = false;
  /** URLs claimed by items not yet recorded: seen in this process only. */
  private readonly claims = new Set<string>();
  private turn: Promise<void> = Promise.resolve();
  private readonly links: StoreLinkLedger | null;
  /** recordNow's first look at each of a page's links (KNOWN, ASK, NEW), kept for the next page. */
  private marks = new Uint8Array(64);

  constructor(
    private readonly store: JobCrawlState & Pick<JobQueue, "get">,
    private readonly jobId: string,
    private readonly lease: Lease,
    private readonly options: StoreStateOptions = defaultStoreStateOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.bloom = new BloomFilter(options.expectedUrls);
    this.links = options.linkReport
      ? new StoreLinkLedger(store, jobId, { cacheSize: options.cacheSize, expectedUrls: options.expectedUrls })
      : null;
  }

  async resume(): Promise<ResumePoint | null> {
    const job = await this.store.get(this.jobId);
    this.lastSeq = await this.store.lastSeq(this.jobId);
    this.lastFlush = this.now();
    const facts = job?.crawl ?? null;
    // A fresh crawl's frontier is all in memory until the window fills.
    this.windowAtTail = facts === null;
    if (!facts) return null;
    await this.links?.resume();
    // The filter must hold every URL the store has seen: read them back, a page at a time.
    for (let after: string | null = null; ; ) {
      const page = await this.store.seenUrls(this.jobId, after, 10_000);
      for (const url of page) this.bloom.add(url);
      if (page.length < 10_000) break;
      after = page[page.length - 1]!;
    }
    this.facts = facts;
    this.report_ = {
      excluded: { ...this.report_.excluded, ...facts.excluded },
      excluded_examples: { ...this.report_.excluded_examples, ...facts.excludedExamples },
    };
    return {
      start: facts.url,
      queued: facts.queued,
      pagesCrawled: facts.pagesCrawled,
      urlsListed: facts.urlsListed,
      truncated: facts.truncated,
    };
  }

  /** The URLs of the next `max` frontier items in memory, which take() will give next. */
  upcoming(max: number): string[] {
    return this.window.slice(0, max).map((item) => item.url);
  }

  take(max: number): Promise<{ items: FrontierItem[]; queued: number }> {
    return this.exclusive(() => this.takeNow(max));
  }

  private async takeNow(max: number): Promise<{ items: FrontierItem[]; queued: number }> {
    if (this.window.length === 0 && !this.windowAtTail) {
      // The window ran dry: write what is pending so the store's frontier is complete, then read on.
      await this.flush();
      const after = this.takenSeq;
      this.window = await this.store.frontier(this.jobId, after, this.options.windowSize);
      this.windowAtTail = this.window.length < this.options.windowSize;
    }
    const taken = this.window.splice(0, max);
    if (taken.length) this.takenSeq = taken[taken.length - 1]!.seq;
    this.inFlight += taken.length;
    return { items: taken.map(({ url, depth }) => ({ url, depth })), queued: this.waiting };
  }

  /**
   * Seen checks ask the store and then mark: two pages doing that at once could both find a URL
   * new. One at a time, they cannot (fetches still run in parallel; only this bookkeeping waits).
   */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.turn.then(work);
    this.turn = next.then(
      () => {},
      () => {},
    );
    return next;
  }

  claim(url: string, by: FrontierItem): Promise<boolean> {
    return this.exclusive(() => this.claimNow(url, by));
  }

  record(page: PageRecord): Promise<RecordResult> {
    return this.exclusive(() => this.recordNow(page));
  }

  private async claimNow(url: string, _by: FrontierItem): Promise<boolean> {
    // Held in the cache only: a claim becomes durable with its item's record, and a new process (an empty cache) drops it.
    if (this.known(url)) return false;
    if (this.bloom.mayHave(url) && (await this.store.seen(this.jobId, [url])).size > 0) {
      this.remember(url);
      this.forget();
      return false;
    }
    this.claims.add(url);
    this.links?.pending(url);
    return true;
  }

  private async recordNow(page: PageRecord): Promise<RecordResult> {
    if (this.dead) return { dropped: 0, queued: 0 };
    this.facts ??= {
      url: page.start ?? "",
      truncated: false,
      pagesCrawled: 0,
      urlsListed: 0,
      queued: 0,
      excluded: {},
      excludedExamples: {},
    };
    const facts = this.facts;
    if (page.start !== undefined) facts.url = page.start;
    facts.pagesCrawled += page.pages;
    if (page.done) {
      this.pending.done.push(page.done.url);
      facts.queued--;
      this.inFlight--;
    }
    for (const url of page.seen) {
      this.claims.delete(url);
      this.remember(url);
      this.pending.seen.push(url);
      this.pending.urls.add(url);
    }
    // Links not known here, and that the filter may have seen, are asked of the store, all at once.
    // (What is known now is decided now: a checkpoint written meanwhile may move it to the store.)
    // Most pages have none to ask (every link known, or new to the filter): then nothing is awaited
    // and nothing forgotten until the links are judged, and the first look at each link stands: one
    // known then is known still, and one certainly new then can be known by now only as a repeat
    // within these links, remembered (in the cache) when the first was excluded or queued; a dropped
    // one is remembered nowhere, then as now. So the second look is one lookup or none, where known()
    // is up to four (3 % of an unchanged re-crawl's profile, whose links are all new to the run), and
    // no Set of the known links is made for every page.
    const { links } = page;
    if (links.length > this.marks.length) this.marks = new Uint8Array(2 * links.length);
    const marks = this.marks;
    const unknown: string[] = [];
    for (let i = 0; i < links.length; i++) {
      const { url } = links[i]!;
      if (this.known(url)) marks[i] = KNOWN;
      else if (this.bloom.mayHave(url)) {
        marks[i] = ASK;
        unknown.push(url);
      } else marks[i] = NEW;
    }
    let seen: Set<string> | null = null;
    if (unknown.length > 0) {
      seen = new Set<string>();
      for (const { url } of links) if (this.known(url)) seen.add(url);
      for (const url of await this.store.seen(this.jobId, [...new Set(unknown)])) seen.add(url);
    }
    let dropped = 0;
    for (let i = 0; i < links.length; i++) {
      const link = links[i]!;
      if (seen !== null ? seen.has(link.url) || this.known(link.url) : marks[i] === KNOWN || this.cache.has(link.url)) continue;
      if (link.excluded !== undefined) {
        this.remember(link.url);
        this.pending.seen.push(link.url);
        this.pending.urls.add(link.url);
        recordExclusion(this.report_, link.excluded, link.example ?? link.url);
        this.links?.skipped(link.url);
      } else if (this.waiting >= page.maxFrontier) {
        // Like the engine's budget: items taken (started or buffered) are not the frontier's to count.
        dropped++;
      } else {
        this.remember(link.url);
        const item = { url: link.url, depth: link.depth, seq: ++this.lastSeq };
        this.pending.discovered.push(item);
        this.pending.urls.add(link.url);
        facts.queued++;
        this.links?.pending(link.url);
        // While the window holds the frontier's end, new items join it; otherwise the store keeps them.
        if (this.windowAtTail && this.window.length < this.options.windowSize) this.window.push(item);
        else this.windowAtTail = false;
      }
    }
    this.forget();
    if (page.memory) this.pending.pages.push(page.memory);
    if (page.entry) {
      const { loc, lastmod, ...extra } = page.entry;
      this.pending.entries.push({ loc, lastmod: lastmod ?? null, extra: Object.keys(extra).length ? JSON.stringify(extra) : null });
      facts.urlsListed++;
    }
    for (const { reason, url } of page.excluded) recordExclusion(this.report_, reason, url);
    if (page.truncated || dropped > 0) facts.truncated = true;
    if (this.links) await this.links.apply(page.linkFacts ?? NO_LINK_FACTS, page.links, page.excluded, page.entry?.loc, this.neverSeen);
    this.pendingPages++;
    this.lease.progress(this.progress());
    if (this.pendingPages >= this.options.flushPages || this.now() - this.lastFlush >= this.options.flushMs) await this.checkpointBehind();
    return { dropped, queued: this.waiting };
  }

  /**
   * Starts a checkpoint of what is pending and goes on without waiting for it to be written. Every
   * claim, take and record queues behind the record that checkpoints, and on PostgreSQL a checkpoint
   * (with a site's page rows) took 47 ms in a site's run 1 and 87 ms in its unchanged run 2 (100,000
   * pages, 225 checkpoints a run), for which the whole crawl stood still: 9 s of run 1's 39, 16 s of
   * run 2's 36. One checkpoint is written at a time: a record that finds the last one still being
   * written waits for it, so the store is at most one batch behind what the crawl knows. A
   * checkpoint refused (the lease lost) or given up stops the crawl through `lost()` as before; the
   * records made meanwhile, one batch at most, are never written. An error thrown in a checkpoint is
   * met by the next record that waits for it, or by the crawl's last flush.
   */
  private async checkpointBehind(): Promise<void> {
    if (this.checkpointing !== null) await this.checkpointing;
    // Not due again before the checkpoint has taken its batch.
    this.pendingPages = 0;
    this.lastFlush = this.now();
    const written = this.flush();
    this.checkpointing = written;
    written.then(
      () => {
        if (this.checkpointing === written) this.checkpointing = null;
      },
      () => {},
    );
  }

  /**
   * Resolves once no checkpoint is being written; what is pending stays pending. A crawl's run may
   * end with one in flight (checkpointBehind): a process that ends meanwhile has it written or not,
   * never after another process resumed the job, and the tests' stand-in for a crash waits for it.
   */
  settled(): Promise<void> {
    return this.flushing;
  }

  /** Writes what is pending as one checkpoint (after any checkpoint already being written). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.dead || !this.facts) return;
      const batch = this.pending;
      this.pending = emptyBatch();
      const links = this.links?.take();
      this.writing = batch.urls;
      this.pendingPages = 0;
      this.lastFlush = this.now();
      this.facts.excluded = this.report_.excluded;
      this.facts.excludedExamples = this.report_.excluded_examples;
      const { urls: _, ...rows } = batch;
      // The report as it stands with this batch: records go on while the checkpoint is written (checkpointBehind).
      const crawl = { ...this.facts, excluded: { ...this.facts.excluded }, excludedExamples: copyExamples(this.facts.excludedExamples) };
      const checkpoint = { ...rows, ...(links ? { links } : {}), progress: this.progress(), crawl };
      // A checkpoint that fails is written again (the crawl waits for it) for as long as the lease
      // says; one given up must not leave a hole that later ones write around: this process
      // stops, and the job continues from the last one written, here or elsewhere.
      let held = false;
      for (let tries = 1; ; tries++) {
        try {
          held = await this.lease.checkpoint(checkpoint);
          break;
        } catch (error) {
          const wait = this.lease.retry?.(error, tries) ?? null;
          if (wait === null) break;
          await Bun.sleep(wait);
        }
      }
      this.writing = EMPTY;
      if (!held) {
        this.dead = true;
        this.lease.lost();
      }
    });
    return this.flushing;
  }

  async *entries(): AsyncIterable<SitemapEntry> {
    await this.flush();
    yield* storedEntries(this.store, this.jobId);
  }

  async report(): Promise<ExclusionReport> {
    return this.report_;
  }

  progress(): JobProgress {
    return {
      pages_crawled: this.facts?.pagesCrawled ?? 0,
      pages_queued: Math.max(0, this.facts?.queued ?? 0),
      urls_listed: this.facts?.urlsListed ?? 0,
      elapsed_ms: Math.round(this.lease.elapsedMs()),
    };
  }

  /** Frontier items not taken yet. */
  private get waiting(): number {
    return Math.max(0, (this.facts?.queued ?? 0) - this.inFlight);
  }

  /** Never met, as this process knows for sure (the filter has not got it): the link report counts its links. */
  private readonly neverSeen = (url: string): boolean => !this.known(url) && !this.bloom.mayHave(url);

  /** Seen, as far as this process knows without the store: cached, or in a batch not yet stored. */
  private known(url: string): boolean {
    return this.cache.has(url) || this.claims.has(url) || this.pending.urls.has(url) || this.writing.has(url);
  }

  /** Remembers a URL as seen (the cache may grow past its size until forget() runs). */
  private remember(url: string): void {
    this.bloom.add(url);
    this.cache.add(url);
  }

  /**
   * The oldest URLs are forgotten past the cache size (the store has them by then): after a record's
   * links are judged, or a claim, so that a URL known when they were judged stays known while they are.
   */
  private forget(): void {
    forgetOldest(this.cache, this.options.cacheSize);
  }
}

function copyExamples(examples: ExclusionReport["excluded_examples"]): ExclusionReport["excluded_examples"] {
  const copy = {} as ExclusionReport["excluded_examples"];
  for (const reason of Object.keys(examples) as (keyof typeof examples)[]) copy[reason] = [...examples[reason]];
  return copy;
}

interface Batch {
  done: string[];
  discovered: FrontierUrl[];
  seen: string[];
  entries: StoredEntry[];
  /** A site's run: the pages it read, for the next run's history (written beside the checkpoint). */
  pages: PageKept[];
  /** Every URL this batch makes seen: known here until its checkpoint is in the store. */
  urls: Set<string>;
}

function emptyBatch(): Batch {
  return { done: [], discovered: [], seen: [], entries: [], pages: [], urls: new Set() };
}
