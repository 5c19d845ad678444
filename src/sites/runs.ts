// What sites do, as plain functions over the stores (routes.ts and service.ts call them; none sees a request):
// create a site and queue its first run, start a run (on request or when due), the scheduler that
// starts due runs, and what a successful run adds to its result (its change set, IndexNow).
import {
  type CrawlAuth,
  NO_HISTORY,
  type PageMemory,
  publicUrls,
  type StoredPage,
  unpackPage,
  type Resolver,
  type TargetPolicy,
} from "../crawler/index.ts";
import type { SiteRun } from "../jobs/job-crawl.ts";
import type { JobCredentials } from "../jobs/job-credentials.ts";
import { newCallbackSecret, newJobId, type NewJob } from "../jobs/job-store.ts";
import type { JobResult } from "../jobs/model.ts";
import type { KeyRecord } from "../keys/key-store.ts";
import { type QuotaStore, quotaForKey, rateLimitMessage } from "../quota/quota.ts";
import { submitIndexNow } from "./indexnow.ts";
import { newToken, type SiteSettings } from "./site.ts";
import type { RunStarted, SiteStore, StoredSite } from "./site-store.ts";

const HOUR_MS = 3_600_000;
/** How often an instance looks for due runs (each due run starts once, on one instance). */
export const SCHEDULER_POLL_MS = 1_000;
/** Due sites started per look. */
const DUE_BATCH = 50;
/** Frontier URLs whose history is read with a URL not read yet (one query). */
const READ_AHEAD = 500;
/** Rows held below which the next window is read (above the URLs a crawl takes at once). */
const LOW_WATER = 100;

export interface SiteRunDeps {
  sites: SiteStore;
  quota: QuotaStore;
  /** The key that owns a site, or null when it is gone or revoked (its runs do not start). */
  keyOf: (keyId: number) => Promise<KeyRecord | null>;
  credentials: JobCredentials;
  /** --job-queue: runs wait in the job queue like any job. */
  maxQueued: number;
  freeDailyLimit: number;
  /** Tells this process's job runner that a job is waiting. */
  wake: () => void;
  now: () => number;
}

/** A site's credentials are sealed under this name (the job id's place): a value copied from a job's row does not open. */
export const siteSealName = (siteId: string) => `site:${siteId}`;

/** The NewSite of settings accepted for a key: its id, its sealed credentials, its first time and token. */
export async function newSite(
  keyId: number,
  url: string,
  settings: SiteSettings,
  credentials: JobCredentials,
  nowMs: number,
): Promise<Parameters<SiteStore["create"]>[0] & { callbackSecret: string | null }> {
  const id = newToken();
  const { auth, ...options } = settings.options;
  return {
    id,
    keyId,
    url,
    options: auth ? { ...options, auth } : options,
    credentials: auth ? await credentials.seal(siteSealName(id), auth) : null,
    everyHours: settings.everyHours,
    // The first run is queued at once; the schedule counts from it.
    nextRunAt: settings.everyHours === null ? null : nowMs + settings.everyHours * HOUR_MS,
    callbackUrl: settings.callbackUrl,
    callbackSecret: settings.callbackUrl === null ? null : newCallbackSecret(),
    publishToken: settings.publish ? newToken() : null,
    indexnow: settings.indexnow,
    createdAt: new Date(nowMs).toISOString(),
  };
}

/**
 * Starts a run of `site` now: its job is queued, or, when the key's daily limit is used up, recorded
 * as failed with 429 (the run counts once against the limit when it starts). `due` is the
 * scheduler's: the run must still be due, and the site's next time moves a period on.
 */
export async function startRun(deps: SiteRunDeps, site: StoredSite, due = false): Promise<{ outcome: RunStarted; jobId: string }> {
  const nowMs = deps.now();
  const now = new Date(nowMs);
  const jobId = newJobId();
  // A key revoked meanwhile (due() leaves revoked keys' sites out): no run.
  const key = await deps.keyOf(site.keyId);
  if (key === null) return { outcome: "gone", jobId };
  const secrets = await deps.sites.secrets(site.id);
  if (secrets === null) return { outcome: "gone", jobId };
  let sealed: string | null = null;
  if (secrets.credentials !== null) {
    const auth: CrawlAuth | null = await deps.credentials.open(siteSealName(site.id), secrets.credentials);
    // A run whose credentials do not open here fails as a job does (credentialsUnreadable) where it runs.
    sealed = auth ? await deps.credentials.seal(jobId, auth) : secrets.credentials;
  }
  const { bucket, limit } = quotaForKey(key, "", deps.freeDailyLimit);
  const admission = await deps.quota.admit(bucket, limit, now);
  const outcome = await deps.sites.startRun(site.id, {
    job: runJob(site, jobId, sealed, secrets.callbackSecret, now),
    maxQueued: deps.maxQueued,
    due: due && site.everyHours !== null ? { nowMs, nextRunAt: nowMs + site.everyHours * HOUR_MS } : undefined,
    failed: admission.admitted ? undefined : { error: { status: 429, message: rateLimitMessage(limit) }, finishedAt: now.toISOString() },
  });
  // A run that did not start gives its admission back.
  if (outcome !== "started" && admission.admitted) await deps.quota.release(bucket, admission.day);
  if (outcome === "started" && admission.admitted) deps.wake();
  return { outcome, jobId };
}

function runJob(site: StoredSite, id: string, credentials: string | null, callbackSecret: string | null, now: Date): NewJob {
  return {
    id,
    keyId: site.keyId,
    url: site.url,
    options: site.options,
    callbackUrl: site.callbackUrl,
    callbackSecret: site.callbackUrl === null ? null : callbackSecret,
    createdAt: now.toISOString(),
    credentials,
    siteId: site.id,
  };
}

/** Starts the runs that fall due, on whichever instance sees them first; `--site-scheduler off`: never started. */
export function startScheduler(deps: SiteRunDeps & { log: (message: string) => void }, pollMs = SCHEDULER_POLL_MS) {
  let problem: string | null = null;
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      for (const site of await deps.sites.due(deps.now(), DUE_BATCH)) await startRun(deps, site, true);
      if (problem !== null) deps.log("site scheduler resumed");
      problem = null;
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      if (message !== problem) deps.log(`site scheduler: ${message}`);
      problem = message;
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(tick, pollMs);
  void tick();
  return {
    async stop() {
      clearInterval(timer);
      while (busy) await Bun.sleep(10);
    },
  };
}

/**
 * Run `jobId` of a site whose latest successful run is `lastSuccess` (null: none yet). Its history
 * is that run's page rows, read a window at a time: a URL not read yet is read with the next
 * READ_AHEAD URLs of the frontier (`upcoming`), in one query, and each read row is dropped once
 * asked for, so at most a few windows of rows are held, whatever the site's size. Pages read
 * unchanged are copied from that run's rows in the store; the others are written.
 */
export function siteRun(sites: SiteStore, jobId: string, lastSuccess: string | null, upcoming: (n: number) => string[]): SiteRun {
  const from = lastSuccess;
  /** Rows read ahead and not asked for yet (links packed); null: the previous run has no row of the URL. */
  const ahead = new Map<string, StoredPage | null>();
  let reading: Promise<void> = Promise.resolve();
  /** URLs the crawl asked for that are not held: read with the next read. */
  const wanted = new Set<string>();
  /** Reads the wanted URLs and the next READ_AHEAD URLs of the frontier that are not held yet, in one query. */
  const readAhead = (): Promise<void> => {
    // One read at a time, each choosing its URLs once the one before has landed (none read twice):
    // the crawl's requests that miss at once (its first pages) share one read.
    const read = reading.then(async () => {
      const urls = new Set([...wanted].filter((url) => !ahead.has(url)));
      wanted.clear();
      for (const next of upcoming(READ_AHEAD)) if (!ahead.has(next)) urls.add(next);
      if (urls.size === 0) return;
      const list = [...urls];
      const rows = await sites.previousPages(from!, list);
      // Rows read ahead that the crawl never asked for (URLs dropped, or taken by an earlier attempt): let go.
      if (ahead.size > 4 * READ_AHEAD) ahead.clear();
      for (const next of list) ahead.set(next, null);
      for (const page of rows) ahead.set(page.url, page);
    });
    reading = read.catch(() => {});
    return read;
  };
  let prefetching = false;
  const take = (url: string): PageMemory | null => {
    const page = ahead.get(url);
    ahead.delete(url);
    // The next window is read while this one still holds the URLs the crawl took and has not asked
    // for yet (taken from the frontier, they are no longer among the upcoming ones). A read that
    // fails here is tried again, and its error met, when the crawl asks for one of its URLs.
    if (ahead.size < LOW_WATER && !prefetching) {
      prefetching = true;
      void readAhead()
        .catch(() => {})
        .finally(() => (prefetching = false));
    }
    return page ? unpackPage(page) : null;
  };
  return {
    history:
      from === null
        ? NO_HISTORY
        : {
            // A row read ahead is handed over as it is; only a miss waits for a read.
            previous: (url) => {
              if (ahead.has(url)) return take(url);
              wanted.add(url);
              return readAhead().then(() => take(url));
            },
          },
    putPages: async (pages) => {
      const written: PageMemory[] = [];
      const carried: string[] = [];
      for (const page of pages) {
        if ("unchanged" in page) carried.push(page.url);
        else written.push(page);
      }
      if (written.length > 0) await sites.putPages(jobId, written);
      // Only a page of the history is read unchanged: `from` is set.
      if (carried.length > 0) await sites.carryPages(jobId, from!, carried);
    },
  };
}

export interface RunSuccessDeps {
  sites: SiteStore;
  policy: TargetPolicy;
  resolve: Resolver;
  userAgent: string;
  log: (message: string) => void;
}

/**
 * A run of a site succeeded: its result gains `changes` against the previous successful run, and
 * with `indexnow` the added and changed URLs (on the public origin) are submitted.
 */
export async function completeRun(deps: RunSuccessDeps, siteId: string, jobId: string, result: JobResult): Promise<JobResult> {
  const changes = await deps.sites.recordSuccess(siteId, jobId);
  if (changes === null) return result;
  const site = await deps.sites.get(siteId);
  const withChanges: JobResult = { ...result, changes };
  if (!site?.indexnow) return withChanges;
  const crawled = new URL(result.url).origin;
  const publicOrigin = site.options.public_origin ?? crawled;
  const publicUrl = publicUrls(crawled, publicOrigin);
  const urls: string[] = [];
  for (const kind of ["added", "changed"] as const) {
    for (let after: string | null = null; ; ) {
      const page = await deps.sites.changes(jobId, kind, after, 10_000);
      for (const url of page) urls.push(publicUrl(url));
      if (page.length < 10_000) break;
      after = page.at(-1)!;
    }
  }
  const outcome = await submitIndexNow(site.indexnow, publicOrigin, urls, deps);
  if (outcome.submitted < urls.length) deps.log(`site ${siteId}: IndexNow submission incomplete (${outcome.status})`);
  return { ...withChanges, indexnow: outcome };
}
