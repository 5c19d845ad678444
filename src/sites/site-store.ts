// What sites need from the store, one interface for SQLite and PostgreSQL (src/db/sqlite/sites.ts,
// src/db/postgres/sites.ts). A site's row holds its settings, schedule and the
// ids of its latest and latest successful runs; its runs are jobs (with their site_id) and the
// history of its pages is the latest successful run's page rows (job_pages), so nothing of a site
// grows in memory, however many URLs it has.
import type { CrawlOptions, PageMemory, StoredPage } from "../crawler/index.ts";
import type { JobError } from "../jobs/model.ts";
import type { NewJob, StoredJob } from "../jobs/job-store.ts";
import type { ChangeCounts, ChangeKind, IndexNowSettings } from "./site.ts";

export interface StoredSite {
  id: string;
  /** Listing order and cursor. */
  seq: number;
  keyId: number;
  url: string;
  /** As accepted, `auth` redacted (the credentials are sealed apart). */
  options: CrawlOptions;
  everyHours: number | null;
  /** Unix ms of the next scheduled run; null: runs on request only. */
  nextRunAt: number | null;
  callbackUrl: string | null;
  /** The public sitemap URL's token; null: not published. */
  publishToken: string | null;
  indexnow: IndexNowSettings | null;
  createdAt: string;
  /** The job of the latest run, and of the latest successful one. */
  lastRun: string | null;
  lastSuccess: string | null;
}

export interface NewSite {
  id: string;
  keyId: number;
  url: string;
  options: CrawlOptions;
  /** Option `auth`, sealed (as a job's): kept for as long as the site exists. */
  credentials: string | null;
  everyHours: number | null;
  nextRunAt: number | null;
  callbackUrl: string | null;
  /** Signs every run's callback; shown once, when the site is created. */
  callbackSecret: string | null;
  publishToken: string | null;
  indexnow: IndexNowSettings | null;
  createdAt: string;
}

/** What PATCH changes; credentials undefined: kept. */
export interface SiteChange {
  options: CrawlOptions;
  credentials?: string | null;
  everyHours: number | null;
  nextRunAt: number | null;
  callbackUrl: string | null;
  publishToken: string | null;
  indexnow: IndexNowSettings | null;
}

/** What a run of a site is made of, beyond its job: the site's sealed credentials and callback secret. */
export interface SiteSecrets {
  credentials: string | null;
  callbackSecret: string | null;
}

/**
 * Starting a run: `job` becomes the site's latest run, unless its latest run is still queued or
 * running ("busy"). `due` (the scheduler) also needs the site's next run to be due at `due.nowMs`
 * and moves it to `due.nextRunAt`, in the same transaction, so that of several instances exactly
 * one starts it. `failed` records the run as a failed job at once (over the key's daily limit).
 */
export interface RunStart {
  job: NewJob;
  maxQueued: number;
  due?: { nowMs: number; nextRunAt: number };
  failed?: { error: JobError; finishedAt: string };
}

export type RunStarted = "started" | "busy" | "not due" | "queue full" | "gone";

export interface SiteStore {
  create(site: NewSite): Promise<void>;
  get(id: string): Promise<StoredSite | null>;
  /** The key's sites, newest first, older than `beforeSeq` when given. */
  list(keyId: number, limit: number, beforeSeq: number | null): Promise<StoredSite[]>;
  /** The site whose public sitemap has this token. */
  byToken(token: string): Promise<StoredSite | null>;
  update(id: string, change: SiteChange): Promise<StoredSite | null>;
  /** Deletes the site and its credentials; its runs are deleted as jobs are (their state and files swept later). */
  remove(id: string): Promise<void>;
  secrets(id: string): Promise<SiteSecrets | null>;
  startRun(siteId: string, start: RunStart): Promise<RunStarted>;
  /** Sites whose next run is due at `nowMs`, soonest first; a revoked key's sites are not due. */
  due(nowMs: number, limit: number): Promise<StoredSite[]>;
  /**
   * A run succeeded: its change set against the site's previous successful run is written
   * (site_changes) and it becomes the latest successful run; the previous one's page history is
   * dropped (its job and files stay, as any job's). Returns the counts; null when the site or the
   * run is gone, or the run is its latest success already.
   */
  recordSuccess(siteId: string, jobId: string): Promise<ChangeCounts | null>;
  /** The site's runs (jobs), newest first, older than `beforeSeq` when given. */
  runs(siteId: string, limit: number, beforeSeq: number | null): Promise<StoredJob[]>;
  /** URLs of one kind of a run's change set, sorted, after `afterUrl`. */
  changes(jobId: string, kind: ChangeKind, afterUrl: string | null, limit: number): Promise<string[]>;

  /** A run's memory of these pages (job_pages), those it has, in any order: the next run's history of them. */
  previousPages(jobId: string, urls: readonly string[]): Promise<StoredPage[]>;
  /** Writes (or rewrites, when a continued run reads a page again) a run's page rows. */
  putPages(jobId: string, pages: PageMemory[]): Promise<void>;
  /** Copies the rows of `urls` that run `fromJobId` has to run `jobId` (pages read unchanged), as putPages writes them. */
  carryPages(jobId: string, fromJobId: string, urls: readonly string[]): Promise<void>;
}
