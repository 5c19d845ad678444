// A site: a crawl that genapi repeats on a schedule so that its sitemap stays current and its
// <lastmod> dates can be trusted. Its settings are checked here, as plain functions over the request
// body (POST /api/sites, PATCH /api/sites/<id>); the runs are jobs (src/jobs/), the history of its
// pages is in the store (site-store.ts).
import { type CrawlOptions, parseCrawlOptions, parseTargetUrl } from "../crawler/index.ts";
import type { JobStatus } from "../jobs/model.ts";

/** every_hours: a run at most once an hour, at least once in 30 days; null: runs on request only. */
export const MIN_EVERY_HOURS = 1;
export const MAX_EVERY_HOURS = 720;
/** A site created without every_hours is crawled once a day. */
export const DEFAULT_EVERY_HOURS = 24;

export const SITE_NOT_FOUND = "Site not found.";
export const PREMIUM_ONLY = "Sites need a premium key.";
export const EVERY_HOURS_MESSAGE = `every_hours must be an integer from ${MIN_EVERY_HOURS} to ${MAX_EVERY_HOURS}, or null.`;
export const INDEXNOW_MESSAGE =
  'indexnow must be null or {"key": 8 to 128 characters a-z A-Z 0-9 -, "endpoint": "https://..."}, such as {"key": "a1b2c3d4", "endpoint": "https://api.indexnow.org/indexnow"}.';
export const CALLBACK_URL_MESSAGE = "callback_url must be a full URL that includes http:// or https://.";
export const runInProgress = (id: string) => `Site ${id} has a run in progress.`;
export const noSitemapYet = (id: string) => `Site ${id} has no sitemap yet.`;

/** Where genapi tells a search engine what a run added and changed (the IndexNow protocol). */
export interface IndexNowSettings {
  /** The site's IndexNow key, which its owner publishes at `<public origin>/<key>.txt`. */
  key: string;
  /** The search engine's IndexNow endpoint, e.g. https://api.indexnow.org/indexnow. */
  endpoint: string;
}

/** What a request body sets of a site (POST: every field; PATCH: those it names). */
export interface SiteSettings {
  options: CrawlOptions;
  everyHours: number | null;
  callbackUrl: string | null;
  publish: boolean;
  indexnow: IndexNowSettings | null;
}

/** The site as the API shows it. */
export interface SiteView {
  id: string;
  url: string;
  options: CrawlOptions;
  every_hours: number | null;
  next_run_at: string | null;
  last_run: unknown | null;
  publish: { url: string } | null;
  indexnow: IndexNowSettings | null;
  created_at: string;
}

/** A run's change set against the site's previous successful run (its `result.changes` counts). */
export interface ChangeCounts {
  added: number;
  removed: number;
  changed: number;
  unchanged: number;
  /** The successful run it was compared with; null for the site's first. */
  previous_run: string | null;
}

export type ChangeKind = "added" | "removed" | "changed";
export const CHANGE_KINDS: readonly ChangeKind[] = ["added", "removed", "changed"];

/** A run is busy while its job is queued or running. */
export const BUSY: readonly JobStatus[] = ["queued", "running"];

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export interface SiteLimits {
  maxPagesCap: number;
  hostConcurrency: number;
  renderAvailable: boolean;
}

/** POST /api/sites: the crawl options (as a job's), every_hours, callback_url, publish and indexnow. */
export function parseNewSite(body: Record<string, unknown>, limits: SiteLimits): Checked<SiteSettings> {
  const parsed = parseCrawlOptions(body, { ...limits, publishes: true, ignoreNeedsAuth: true });
  if (!parsed.ok) return parsed;
  const rest = parseSiteFields(body, { everyHours: DEFAULT_EVERY_HOURS, callbackUrl: null, publish: false, indexnow: null });
  if (!rest.ok) return rest;
  return { ok: true, value: { options: parsed.options, ...rest.value } };
}

/**
 * PATCH /api/sites/<id>: the fields the body names replace the site's; crawl options may come at the
 * top level (as POST takes them) or in `options`, and are checked as a whole over the current ones.
 * `auth` absent keeps the site's credentials: `current.options` holds them redacted, which pass the
 * checks (robots "ignore" needs auth) and are shown as they are, while the sealed ones stay in the store.
 */
export function parseSitePatch(body: Record<string, unknown>, current: SiteSettings, limits: SiteLimits): Checked<SiteSettings> {
  const nested = body.options;
  if (nested !== undefined && (typeof nested !== "object" || nested === null || Array.isArray(nested)))
    return { ok: false, message: "options must be an object of crawl options." };
  const { auth, ...kept } = current.options;
  const merged: Record<string, unknown> = { ...kept, ...(auth ? { auth } : {}), ...(nested as object), ...crawlFields(body) };
  // The stored options hold null for "none"; the body's checks take an absent field instead.
  for (const [name, value] of Object.entries(merged)) if (value === null) delete merged[name];
  const parsed = parseCrawlOptions(merged, { ...limits, publishes: true, ignoreNeedsAuth: true });
  if (!parsed.ok) return parsed;
  const rest = parseSiteFields(body, current);
  if (!rest.ok) return rest;
  return { ok: true, value: { options: parsed.options, ...rest.value } };
}

/** The body's fields other than the site's own and `url` (the crawl options, as sent). */
function crawlFields(body: Record<string, unknown>): Record<string, unknown> {
  const { url: _url, options: _options, every_hours: _e, callback_url: _c, publish: _p, indexnow: _i, ...fields } = body;
  return fields;
}

function parseSiteFields(body: Record<string, unknown>, defaults: Omit<SiteSettings, "options">): Checked<Omit<SiteSettings, "options">> {
  const value = { ...defaults };
  if (body.every_hours !== undefined) {
    const hours = body.every_hours;
    if (hours !== null && !(Number.isSafeInteger(hours) && (hours as number) >= MIN_EVERY_HOURS && (hours as number) <= MAX_EVERY_HOURS))
      return { ok: false, message: EVERY_HOURS_MESSAGE };
    value.everyHours = hours as number | null;
  }
  if (body.callback_url !== undefined) {
    if (body.callback_url === null) value.callbackUrl = null;
    else {
      const url = parseTargetUrl(body.callback_url);
      if (!url) return { ok: false, message: CALLBACK_URL_MESSAGE };
      value.callbackUrl = url.href;
    }
  }
  if (body.publish !== undefined) {
    if (typeof body.publish !== "boolean") return { ok: false, message: "publish must be true or false." };
    value.publish = body.publish;
  }
  if (body.indexnow !== undefined) {
    const indexnow = parseIndexNow(body.indexnow);
    if (indexnow === undefined) return { ok: false, message: INDEXNOW_MESSAGE };
    value.indexnow = indexnow;
  }
  return { ok: true, value };
}

const INDEXNOW_KEY = /^[a-zA-Z0-9-]{8,128}$/;

/** `{"key", "endpoint"}` or null; undefined when it is neither. */
export function parseIndexNow(value: unknown): IndexNowSettings | null | undefined {
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) return undefined;
  const { key, endpoint } = value as Record<string, unknown>;
  if (typeof key !== "string" || !INDEXNOW_KEY.test(key)) return undefined;
  const url = parseTargetUrl(endpoint);
  if (!url) return undefined;
  return { key, endpoint: url.href };
}

/** >= 128 random bits, URL-safe: a site's id, and the token of its public sitemap URL. */
export function newToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url");
}

/** The public sitemap's path: beside it, its parts. */
export const publicSitemapPath = (token: string) => `/s/${token}/sitemap.xml`;
