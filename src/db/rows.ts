// The row mapping both backends share: the column lists their statements select (keys, jobs, link
// rows, sites, a run's pages), the lease condition, and how a row becomes a record. The SQL itself is
// each backend's (src/db/sqlite/, src/db/postgres/).
import { type LinkRow, originOf, packLinks, type PageMemory, type StoredPage } from "../crawler/index.ts";
import type { StoredSite } from "../sites/site-store.ts";
import type { StoredJob } from "../jobs/job-store.ts";
import type { JobStatus } from "../jobs/model.ts";

/** The columns of a KeyRecord (src/keys/key-store.ts), selected and returned by every key statement. */
export const RECORD_COLUMNS = "id, name, prefix, daily_limit, created_at, last_used_at, revoked_at";

/** The columns of a JobRow, selected and returned by every job statement of both backends. */
export const JOB_COLUMNS =
  "seq, id, key_id, status, url, options, callback_url, created_at, started_at, finished_at, progress, result, error, crawl, attempts, lease_owner, site_id";

/** The lease holds while the job runs, and after a cancel until its owner has published what it found. */
export const LEASE_HELD = `(status = 'running' OR (status = 'cancelled' AND result IS NULL AND error IS NULL))`;

/** A new job's progress, as both backends store it. */
export const NEW_JOB_PROGRESS = JSON.stringify({ pages_crawled: 0, pages_queued: 0, urls_listed: 0, elapsed_ms: 0 });

/** A row of `jobs` as both backends' job statements select it (JOB_COLUMNS). */
export interface JobRow {
  seq: number;
  id: string;
  key_id: number;
  status: JobStatus;
  url: string;
  options: string;
  callback_url: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress: string;
  result: string | null;
  error: string | null;
  crawl: string | null;
  attempts: number;
  lease_owner: string | null;
  site_id: string | null;
}

const parseJson = (text: string | null) => (text === null ? null : JSON.parse(text));

export function jobFromRow(row: JobRow): StoredJob {
  return {
    id: row.id,
    seq: Number(row.seq),
    keyId: Number(row.key_id),
    status: row.status,
    url: row.url,
    // Jobs stored before an option existed show its default, as the job object always lists every option.
    options: { link_report: false, ...JSON.parse(row.options) },
    callbackUrl: row.callback_url,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    progress: JSON.parse(row.progress),
    result: parseJson(row.result),
    error: parseJson(row.error),
    crawl: parseJson(row.crawl),
    attempts: Number(row.attempts),
    leaseOwner: row.lease_owner,
    siteId: row.site_id,
  };
}

/** The columns of a LinkRowColumns, as both backends select them from `job_links`. */
export const LINK_ROW_COLUMNS = "url, referrer_count, referrers, followed, fate, sitemap, outcome";

/** A row of `job_links` as both backends select it (LINK_ROW_COLUMNS). */
export interface LinkRowColumns {
  url: string;
  referrer_count: number | string;
  referrers: string;
  followed: number | boolean;
  fate: string | null;
  sitemap: string | null;
  outcome: string | null;
}

export function linkRowFromColumns(row: LinkRowColumns): LinkRow {
  return {
    url: row.url,
    referrerCount: Number(row.referrer_count),
    referrers: JSON.parse(row.referrers),
    followed: row.followed === true || row.followed === 1,
    fate: parseJson(row.fate),
    sitemap: row.sitemap,
    outcome: row.outcome,
  };
}

/** The columns of a StoredSite, selected and returned by every site statement (sqlite/sites.ts, postgres/sites.ts). */
export const SITE_COLUMNS =
  "seq, id, key_id, url, options, every_hours, next_run_at, callback_url, publish_token, indexnow, created_at, last_run, last_success";

export interface SiteRow {
  seq: number | string;
  id: string;
  key_id: number | string;
  url: string;
  options: string;
  every_hours: number | null;
  next_run_at: number | string | null;
  callback_url: string | null;
  publish_token: string | null;
  indexnow: string | null;
  created_at: string;
  last_run: string | null;
  last_success: string | null;
}

export function siteFromRow(row: SiteRow): StoredSite {
  return {
    id: row.id,
    seq: Number(row.seq),
    keyId: Number(row.key_id),
    url: row.url,
    options: JSON.parse(row.options),
    everyHours: row.every_hours === null ? null : Number(row.every_hours),
    nextRunAt: row.next_run_at === null ? null : Number(row.next_run_at),
    callbackUrl: row.callback_url,
    publishToken: row.publish_token,
    indexnow: parseJson(row.indexnow),
    createdAt: row.created_at,
    lastRun: row.last_run,
    lastSuccess: row.last_success,
  };
}

/** The columns of a PageMemory (job_pages), in pageParams' order after the run's key. */
export const PAGE_COLUMNS = "url, etag, last_modified, fingerprint, lastmod, exclusion, canonical, links, extra";

/** An upsert's SET of a page row (a continued run reads a page again): every column but the key from `excluded`. */
export const PAGE_UPDATE = PAGE_COLUMNS.split(", ")
  .slice(1)
  .map((column) => `${column} = excluded.${column}`)
  .join(", ");

export interface PageRow {
  url: string;
  etag: string | null;
  last_modified: string | null;
  fingerprint: string | null;
  lastmod: string | null;
  exclusion: string | null;
  canonical: string | null;
  links: Uint8Array;
  extra: string | null;
}

export function pageFromRow(row: PageRow): StoredPage {
  return {
    url: row.url,
    etag: row.etag,
    lastModified: row.last_modified,
    fingerprint: row.fingerprint,
    lastmod: row.lastmod,
    exclusion: row.exclusion as PageMemory["exclusion"],
    canonical: row.canonical,
    packedLinks: row.links,
    extra: parseJson(row.extra),
  };
}

/** A page row's values, the run's key first (its id on PostgreSQL, its seq on SQLite), then PAGE_COLUMNS' order. */
export function pageParams(job: string | number, page: PageMemory) {
  return [
    job,
    page.url,
    page.etag,
    page.lastModified,
    page.fingerprint,
    page.lastmod,
    page.exclusion,
    page.canonical,
    packLinks(originOf(page.url), page.links),
    page.extra && JSON.stringify(page.extra),
  ] as const;
}
