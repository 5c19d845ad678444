// The row mapping both backends share: the columns a key record is read from, and how a job row
// becomes a StoredJob. The SQL itself is each backend's (src/db/sqlite/, src/db/postgres/).
import type { LinkRow } from "../crawler/index.ts";
import type { StoredJob } from "../jobs/job-store.ts";
import type { JobStatus } from "../jobs/model.ts";

/** The columns of a KeyRecord (src/keys/key-store.ts), selected and returned by every key statement. */
export const RECORD_COLUMNS = "id, name, prefix, daily_limit, created_at, last_used_at, revoked_at";

/** A row of `jobs` as both backends' job statements select it (jobs.ts of each). */
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
  };
}

/** A row of `job_links` as both backends select it (url, referrer_count, referrers, followed, fate, sitemap, outcome). */
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
