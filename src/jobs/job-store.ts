// What jobs need from the store, the contract both backends (SQLite, PostgreSQL) implement, one
// interface per concern: the queue (the job row: its lifecycle and lease), the crawl state (URLs
// seen and queued, entries listed, link rows: in their own tables, so a job survives its process
// and any instance can continue or serve it), the stored files, callbacks, retention. JobStore is
// all of them.
import type { CrawlOptions, LinkFate, LinkRow, PolitenessReport } from "../crawler/index.ts";
import type { JobError, JobProgress, JobResult, JobStatus } from "./model.ts";

/** A job as stored: the public fields plus what only the server sees. */
export interface StoredJob {
  id: string;
  /** Listing order and cursor: increases with every job created. */
  seq: number;
  keyId: number;
  status: JobStatus;
  url: string;
  options: CrawlOptions;
  callbackUrl: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  progress: JobProgress;
  result: JobResult | null;
  error: JobError | null;
  /** Claims so far (1 on the first run). */
  attempts: number;
  /** The process that holds the job's lease (its runner's owner name), if any. */
  leaseOwner: string | null;
  /** What the crawl needs to continue (start URL after redirects, report so far); null before its start page. */
  crawl: CrawlFacts | null;
  /** The site this job is a run of (src/sites/), or null. */
  siteId: string | null;
}

/** Facts of a crawl in progress, kept with the job so another process can continue it. */
export interface CrawlFacts {
  /** The start URL after redirects, normalised; its origin is the crawl's scope. */
  url: string;
  truncated: boolean;
  pagesCrawled: number;
  urlsListed: number;
  /** Frontier items not yet finished, taken ones included. */
  queued: number;
  excluded: Record<string, number>;
  excludedExamples: Record<string, string[]>;
  /**
   * What politeness did to the attempts so far, up to this checkpoint: added to the next attempt's
   * own, so that a resumed job reports every throttled answer, retry and pause. Absent from checkpoints written before jobs counted politeness.
   */
  politeness?: PolitenessCounts;
}

/** The counting part of a crawl's politeness report. */
export type PolitenessCounts = Pick<PolitenessReport, "throttled" | "retries" | "paused_ms">;

export interface NewJob {
  id: string;
  keyId: number;
  url: string;
  options: CrawlOptions;
  callbackUrl: string | null;
  /** Kept only until the callback has been sent, then erased. */
  callbackSecret: string | null;
  createdAt: string;
  /** The credentials of option `auth`, sealed (job-credentials.ts); erased when the job ends. `options` holds them redacted. */
  credentials?: string | null;
  /** The site this job is a run of (src/sites/), if any. */
  siteId?: string | null;
}

/** One queued URL; seq orders the frontier (breadth first). */
export interface FrontierUrl {
  url: string;
  depth: number;
  seq: number;
}

/** One listed URL, as the sitemap renders it. */
export interface StoredEntry {
  loc: string;
  lastmod: string | null;
  /** JSON of alternates/images, when the options gather them. */
  extra: string | null;
}

/**
 * Everything a stretch of crawling changed, written in one transaction, and only while the writer
 * still holds the job's lease: a process that lost its claim cannot overwrite another's progress.
 */
export interface Checkpoint {
  /** URLs fetched (with what they listed and linked below): no longer in the frontier. */
  done: string[];
  /** New frontier items (unseen links), in order. */
  discovered: FrontierUrl[];
  /** URLs seen without being queued (redirect hops followed in place, excluded links). */
  seen: string[];
  entries: StoredEntry[];
  progress: JobProgress;
  crawl: CrawlFacts;
  /** With link_report: what the stretch adds to job_links (store-link-ledger.ts), in the same transaction. */
  links?: LinkCheckpoint;
}

/**
 * The link report's rows of one checkpoint, applied in this order: referrers (counts added, the 5
 * smallest referrers kept), sitemap URLs, bad fates, fine URLs (their row goes unless it is a
 * sitemap URL's), then the outcomes of sitemap URLs.
 */
export interface LinkCheckpoint {
  referrers: { url: string; count: number; referrers: string[]; followed: boolean }[];
  sitemap: { url: string; sitemap: string; outcome: string | null; followed: boolean }[];
  fates: { url: string; fate: Exclude<LinkFate, { kind: "ok" }> }[];
  fine: string[];
  outcomes: { url: string; outcome: string }[];
}

/** job_parts' number of links.json (gzip-compressed JSON): 0 is sitemap.xml, 1.. the sitemap parts. */
export const LINKS_PART = -1;
/**
 * The link report's external and resource checks of a running job (CheckLedger.snapshot, gzip JSON),
 * written when an attempt ends, read back by the next: a job handed to another process carries them on.
 */
export const CHECKS_PART = -2;

/** The callback of a finished job, while it is still to be sent. */
export interface PendingCallback {
  url: string;
  secret: string;
}

/** A job claimed to run: with its sealed credentials, which only a claim reads. */
export type ClaimedJob = StoredJob & { leaseOwner: string; credentials?: string | null };

/**
 * The queue: jobs' rows, their lifecycle and leases. Every write of a running job is conditional on
 * its lease, so processes sharing the store never run one job twice.
 */
export interface JobQueue {
  /** Adds a queued job unless `maxQueued` jobs already wait; false: the queue is full. */
  create(job: NewJob, maxQueued: number): Promise<boolean>;
  get(id: string): Promise<StoredJob | null>;
  /** The key's jobs, newest first, older than `beforeSeq` when given. */
  list(keyId: number, limit: number, beforeSeq: number | null): Promise<StoredJob[]>;
  /**
   * Takes the oldest job that is queued, or running or cancelled-unfinished under an expired
   * lease, for `owner` until `nowMs + leaseMs`; counts an attempt. Safe under concurrency: two
   * processes never hold one job. `withCredentials` false: jobs with sealed credentials are left
   * to processes that can open them.
   */
  claim(owner: string, nowMs: number, leaseMs: number, nowIso: string, withCredentials?: boolean): Promise<ClaimedJob | null>;
  /**
   * Extends the lease and records progress; false when the lease is lost (another owner, or the
   * job finished). A job cancelled while it runs stays its owner's until the owner has published
   * what it found: heartbeats and checkpoints of a cancelled job without an outcome still hold.
   */
  heartbeat(id: string, owner: string, nowMs: number, leaseMs: number, progress: JobProgress): Promise<boolean>;
  /** Gives a running job back to the queue with its progress (SIGTERM). */
  handBack(id: string, owner: string, progress: JobProgress): Promise<void>;
  /** Records the outcome (the owner must still hold the job) and erases its credentials; the crawl state is dropped later, in batches. */
  finish(
    id: string,
    owner: string,
    outcome: { status: JobStatus; result: JobResult | null; error: JobError | null; progress: JobProgress; finishedAt: string },
  ): Promise<boolean>;
  /**
   * Cancels a queued job (finished at once with `queuedError`: it listed nothing) or a running one
   * (its runner publishes what it found), erasing its credentials either way (a running crawl keeps
   * its own copy in memory); returns the status before, or null when the job is gone.
   */
  cancel(id: string, nowIso: string, queuedError: JobError): Promise<JobStatus | null>;
  /** Deletes a job at once (404 from then on); its state and parts are deleted later, in batches (JobRetention.sweep). */
  remove(id: string): Promise<void>;
  /** Jobs waiting and running now, for metrics and the queue limit. */
  counts(): Promise<Record<JobStatus, number>>;
}

/** The crawl's growing state (URLs seen and queued, entries listed, the link report's rows), written under the job's lease. */
export interface JobCrawlState {
  /** Writes a checkpoint under the lease (a cancelled job's too, see JobQueue.heartbeat); false when the lease is lost. */
  checkpoint(id: string, owner: string, nowMs: number, leaseMs: number, batch: Checkpoint): Promise<boolean>;
  /** The frontier after `afterSeq` (not yet fetched), in order. */
  frontier(id: string, afterSeq: number, limit: number): Promise<FrontierUrl[]>;
  /** Which of `urls` the job has seen (queued or fetched). */
  seen(id: string, urls: string[]): Promise<Set<string>>;
  /** Every URL the job has seen, in pages ordered by URL, after `afterUrl` (to rebuild a filter on resume). */
  seenUrls(id: string, afterUrl: string | null, limit: number): Promise<string[]>;
  /** The highest frontier seq so far (0 when none). */
  lastSeq(id: string): Promise<number>;
  /** Of `urls`, those the job has requested (or left out) and that hold no job_links row: fine ones, whose links need no counting. */
  linksSettled(id: string, urls: string[]): Promise<Set<string>>;
  /** The job_links rows with a fate and a referrer ("linked"), or of sitemap URLs ("sitemap"), sorted by url, after `afterUrl`. */
  linkRows(id: string, which: "linked" | "sitemap", afterUrl: string | null, limit: number): Promise<LinkRow[]>;
  /** The fates of those of `urls` that have one. */
  linkFates(id: string, urls: string[]): Promise<Map<string, Exclude<LinkFate, { kind: "ok" }>>>;
  /** Listed entries sorted by loc, after `afterLoc`. */
  entries(id: string, afterLoc: string | null, limit: number): Promise<StoredEntry[]>;
  countEntries(id: string): Promise<number>;
}

/** A finished job's files, stored gzip-compressed: n = 0 is sitemap.xml, n >= 1 the parts, LINKS_PART links.json. */
export interface JobFiles {
  putPart(id: string, n: number, gzipped: Uint8Array): Promise<void>;
  getPart(id: string, n: number): Promise<Uint8Array | null>;
}

/** A finished job's callback, kept until it has been sent. */
export interface JobCallbacks {
  /** The callback to send for a finished job, if any; `callbackSent` erases its secret. */
  pendingCallback(id: string): Promise<PendingCallback | null>;
  callbackSent(id: string): Promise<void>;
}

/** Retention: old jobs go, then what they left behind, in batches. */
export interface JobRetention {
  /** Deletes up to `limit` finished jobs older than `beforeIso`; returns how many. */
  expire(beforeIso: string, limit: number): Promise<number>;
  /** Deletes up to `limit` rows of crawl state and parts no longer needed; returns how many. */
  sweep(limit: number): Promise<number>;
}

/**
 * Everything jobs need from the store, one object per backend (src/db/sqlite/jobs.ts,
 * src/db/postgres/jobs.ts), composed of one part per concern above. Code that needs one concern
 * takes that interface alone.
 */
export interface JobStore extends JobQueue, JobCrawlState, JobFiles, JobCallbacks, JobRetention {}

/** >= 128 random bits, URL-safe: 16 bytes in base64url (22 characters). */
export function newJobId(random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): string {
  return Buffer.from(random(new Uint8Array(16))).toString("base64url");
}

export function newCallbackSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}
