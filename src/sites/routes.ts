// The site endpoints: POST/GET /api/sites, GET/PATCH/DELETE /api/sites/<id>, its runs, its latest
// sitemap and change set, and the public sitemap URL /s/<token>/sitemap.xml. Every /api/sites
// request needs a premium key (403 for a free one) and, for a site, the key that created it (404
// `Site not found.` for another's). Handlers refuse by throwing an HttpError; the plugin's onError
// (src/http/errors.ts) answers it, a store outage (503) and anything else (a logged 500).
import { Elysia, t } from "elysia";
import type { BodyCheck, Checked, OtherTarget } from "../admission/admission.ts";
import { AUTH_FAILED_MESSAGE } from "../admission/admission.ts";
import { redactCrawlOptions } from "../crawler/index.ts";
import { answerErrors, HttpError } from "../http/errors.ts";
import { AUTH_NEEDS_KEY_MESSAGE, type JobCredentials } from "../jobs/job-credentials.ts";
import type { JobFiles, JobQueue } from "../jobs/job-store.ts";
import { partNumber } from "../jobs/publish.ts";
import { cursorOf, JOB_NOT_FOUND, jobView, paging, queueFull, xmlFile } from "../jobs/routes.ts";
import type { KeyRecord } from "../keys/key-store.ts";
import { API_KEY_SCHEME } from "../ops/docs.ts";
import {
  changesResponses,
  createSiteResponses,
  deleteSiteResponses,
  getSiteResponses,
  listRunsResponses,
  listSitesResponses,
  patchSiteResponses,
  publicSitemapResponses,
  SitePatchModel,
  SiteRequestModel,
  siteSitemapResponses,
  startRunResponses,
} from "./model.ts";
import { newSite, type SiteRunDeps, siteSealName, startRun } from "./runs.ts";
import {
  CHANGE_KINDS,
  type IndexNowSettings,
  noSitemapYet,
  PREMIUM_ONLY,
  parseNewSite,
  parseSitePatch,
  publicSitemapPath,
  runInProgress,
  SITE_NOT_FOUND,
  type SiteLimits,
  type SiteSettings,
  type SiteView,
  newToken,
} from "./site.ts";
import type { SiteStore, StoredSite } from "./site-store.ts";

const HOUR_MS = 3_600_000;
/** Change set URLs per store read. */
const CHANGES_PAGE = 10_000;

export interface SitesDeps {
  store: SiteStore;
  /** The runs are jobs: read them and their files. */
  jobs: JobQueue & JobFiles;
  /** The key of a request, or null (step 1 alone). */
  key: (request: Request) => Promise<KeyRecord | null>;
  /** Steps 1-4 of /api/generate without counting anything. */
  check: <T>(
    request: Request,
    validateBody: (body: Record<string, unknown>) => BodyCheck<T>,
    otherTargets?: (value: T) => OtherTarget[],
    options?: { keyRule?: (key: KeyRecord) => void; url?: boolean },
  ) => Promise<Checked<T>>;
  limits: SiteLimits;
  credentials: JobCredentials;
  runs: SiteRunDeps;
  now: () => number;
  log: (message: string) => void;
}

/** Sites belong to premium keys. */
function premiumOnly(key: KeyRecord): void {
  if (key.daily_limit === null) throw new HttpError(403, PREMIUM_ONLY);
}

/** The addresses a site's settings name besides its URL, judged by the address guard. */
function otherTargets(settings: SiteSettings): OtherTarget[] {
  const targets: OtherTarget[] = [];
  if (settings.callbackUrl) targets.push({ field: "callback_url", url: new URL(settings.callbackUrl) });
  if (settings.indexnow) targets.push({ field: "indexnow.endpoint", url: new URL(settings.indexnow.endpoint) });
  return targets;
}

const idParam = t.Object({ id: t.String({ description: "The site id from POST /api/sites." }) });
const secured = { security: [{ [API_KEY_SCHEME]: [] }], tags: ["sites"] };
const pageQuery = t.Object({
  limit: t.Optional(t.String({ description: "Per page, 1 to 100 (default 20).", examples: ["20"] })),
  cursor: t.Optional(t.String({ description: "`data.next_cursor` of the previous page." })),
});

export const siteRoutes = (deps: SitesDeps) => {
  /** The request's premium key; else the 401 or 403 that answers. */
  const premiumKey = async (request: Request): Promise<KeyRecord> => {
    const key = await deps.key(request);
    if (key === null) throw new HttpError(401, AUTH_FAILED_MESSAGE);
    premiumOnly(key);
    return key;
  };
  /** The site `id` if the request's premium key owns it; else 401, 403 or 404. */
  const ownSite = async (request: Request, id: string): Promise<StoredSite> => {
    const key = await premiumKey(request);
    const site = await deps.store.get(id);
    if (!site || site.keyId !== key.id) throw new HttpError(404, SITE_NOT_FOUND);
    return site;
  };
  /** The site as the API shows it, with its latest run. */
  const view = async (site: StoredSite): Promise<SiteView> => {
    const last = site.lastRun === null ? null : await deps.jobs.get(site.lastRun);
    return {
      id: site.id,
      url: site.url,
      options: redactCrawlOptions(site.options),
      every_hours: site.everyHours,
      next_run_at: site.nextRunAt === null ? null : new Date(site.nextRunAt).toISOString(),
      last_run: last ? jobView(last) : null,
      publish: site.publishToken === null ? null : { url: publicSitemapPath(site.publishToken) },
      indexnow: site.indexnow,
      created_at: site.createdAt,
    };
  };
  /** The settings a site has now, as a PATCH body is checked over them (options with `auth` redacted). */
  const settingsOf = (site: StoredSite): SiteSettings => ({
    options: site.options,
    everyHours: site.everyHours,
    callbackUrl: site.callbackUrl,
    publish: site.publishToken !== null,
    indexnow: site.indexnow as IndexNowSettings | null,
  });
  /** A file of the site's latest successful run: 0 the sitemap (or index), n >= 1 part n. */
  const latestFile = async (site: StoredSite, n: number): Promise<Uint8Array | null> => {
    if (site.lastSuccess === null) return null;
    const run = await deps.jobs.get(site.lastSuccess);
    if (!run?.result || n > run.result.sitemap_parts) return null;
    return deps.jobs.getPart(run.id, n);
  };

  return new Elysia({ name: "sites" })
    .onError(answerErrors(deps.log))
    .post(
      "/api/sites",
      async ({ request }) => {
        const checked = await deps.check(request, (body) => parseNewSite(body, deps.limits), otherTargets, { keyRule: premiumOnly });
        const settings = checked.value;
        if (settings.options.auth && !deps.credentials.available) throw new HttpError(400, AUTH_NEEDS_KEY_MESSAGE);
        const created = await newSite(checked.key.id, checked.url.href, settings, deps.credentials, deps.now());
        await deps.store.create(created);
        const stored = await deps.store.get(created.id);
        if (!stored) throw new HttpError(404, SITE_NOT_FOUND);
        // The first run is queued at once (or recorded failed with 429 over the key's daily limit).
        await startRun(deps.runs, stored);
        const data = await view((await deps.store.get(created.id)) ?? stored);
        return Response.json(
          {
            success: true,
            message: "Site created.",
            data: created.callbackSecret ? { ...data, callback_secret: created.callbackSecret } : data,
          },
          { status: 201, headers: { Location: `/api/sites/${created.id}` } },
        );
      },
      {
        parse: "none",
        detail: {
          ...secured,
          summary: "Create a site: a crawl repeated on a schedule, its first run queued at once",
          description:
            "Admission steps 1-4 as /api/generate (nothing is counted); each run counts once against the key's daily limit when it starts. Premium keys only.",
          requestBody: { required: true, content: { "application/json": { schema: SiteRequestModel as never } } },
          responses: createSiteResponses,
        },
      },
    )
    .get(
      "/api/sites",
      async ({ request }) => {
        const key = await premiumKey(request);
        const { limit, before } = paging(request);
        const rows = await deps.store.list(key.id, limit + 1, before);
        const page = rows.slice(0, limit);
        const next = rows.length > limit ? cursorOf(page[page.length - 1]!.seq) : null;
        return Response.json({
          success: true,
          message: "Sites listed.",
          data: { sites: await Promise.all(page.map(view)), next_cursor: next },
        });
      },
      { query: pageQuery, detail: { ...secured, summary: "List your sites, newest first", responses: listSitesResponses } },
    )
    .get(
      "/api/sites/:id",
      async ({ request, params }) => {
        const site = await ownSite(request, params.id);
        return Response.json({ success: true, message: "Site found.", data: await view(site) });
      },
      { params: idParam, detail: { ...secured, summary: "A site: its schedule, options and latest run", responses: getSiteResponses } },
    )
    .patch(
      "/api/sites/:id",
      async ({ request, params }) => {
        const site = await ownSite(request, params.id);
        const current = settingsOf(site);
        let sentAuth = false;
        const checked = await deps.check(
          request,
          (body) => {
            sentAuth = body.auth !== undefined || (typeof body.options === "object" && body.options !== null && "auth" in body.options);
            return parseSitePatch(body, current, deps.limits);
          },
          otherTargets,
          { keyRule: premiumOnly, url: false },
        );
        const settings = checked.value;
        let credentials: string | null | undefined;
        if (sentAuth) {
          if (settings.options.auth && !deps.credentials.available) throw new HttpError(400, AUTH_NEEDS_KEY_MESSAGE);
          credentials = settings.options.auth ? await deps.credentials.seal(siteSealName(site.id), settings.options.auth) : null;
        }
        const now = deps.now();
        const updated = await deps.store.update(site.id, {
          options: settings.options,
          credentials,
          everyHours: settings.everyHours,
          // A new period counts from now; an unchanged one keeps its next time.
          nextRunAt:
            settings.everyHours === site.everyHours
              ? site.nextRunAt
              : settings.everyHours === null
                ? null
                : now + settings.everyHours * HOUR_MS,
          callbackUrl: settings.callbackUrl,
          publishToken: settings.publish ? (site.publishToken ?? newToken()) : null,
          indexnow: settings.indexnow,
        });
        if (!updated) throw new HttpError(404, SITE_NOT_FOUND);
        return Response.json({ success: true, message: "Site updated.", data: await view(updated) });
      },
      {
        params: idParam,
        parse: "none",
        detail: {
          ...secured,
          summary: "Change a site's schedule, options, publishing or IndexNow",
          requestBody: { required: true, content: { "application/json": { schema: SitePatchModel as never } } },
          responses: patchSiteResponses,
        },
      },
    )
    .delete(
      "/api/sites/:id",
      async ({ request, params }) => {
        const site = await ownSite(request, params.id);
        await deps.store.remove(site.id);
        return Response.json({ success: true, message: "Site deleted." });
      },
      { params: idParam, detail: { ...secured, summary: "Delete a site, its runs, history and files", responses: deleteSiteResponses } },
    )
    .post(
      "/api/sites/:id/runs",
      async ({ request, params }) => {
        const site = await ownSite(request, params.id);
        const { outcome, jobId } = await startRun(deps.runs, site);
        if (outcome === "busy") throw new HttpError(409, runInProgress(site.id));
        if (outcome === "gone") throw new HttpError(404, SITE_NOT_FOUND);
        if (outcome === "queue full") throw queueFull();
        const job = await deps.jobs.get(jobId);
        if (!job) throw new HttpError(404, JOB_NOT_FOUND);
        return Response.json(
          { success: true, message: "Site run accepted.", data: jobView(job) },
          { status: 202, headers: { Location: `/api/jobs/${jobId}` } },
        );
      },
      { params: idParam, detail: { ...secured, summary: "Run a site now", responses: startRunResponses } },
    )
    .get(
      "/api/sites/:id/runs",
      async ({ request, params }) => {
        const site = await ownSite(request, params.id);
        const { limit, before } = paging(request);
        const rows = await deps.store.runs(site.id, limit + 1, before);
        const page = rows.slice(0, limit);
        const next = rows.length > limit ? cursorOf(page[page.length - 1]!.seq) : null;
        return Response.json({ success: true, message: "Runs listed.", data: { jobs: page.map(jobView), next_cursor: next } });
      },
      {
        params: idParam,
        query: pageQuery,
        detail: { ...secured, summary: "A site's runs (jobs), newest first", responses: listRunsResponses },
      },
    )
    .get(
      "/api/sites/:id/changes",
      async ({ request, params }) => {
        const site = await ownSite(request, params.id);
        const asked = new URL(request.url).searchParams.get("run");
        const runId = asked ?? site.lastSuccess;
        if (runId === null) throw new HttpError(409, noSitemapYet(site.id));
        const run = await deps.jobs.get(runId);
        if (!run || run.siteId !== site.id || run.status !== "succeeded" || !run.result?.changes)
          throw new HttpError(404, "Run not found.");
        const lists: Record<string, string[]> = {};
        for (const kind of CHANGE_KINDS) {
          const urls: string[] = [];
          for (let after: string | null = null; ; ) {
            const page = await deps.store.changes(run.id, kind, after, CHANGES_PAGE);
            urls.push(...page);
            if (page.length < CHANGES_PAGE) break;
            after = page.at(-1)!;
          }
          lists[kind] = urls;
        }
        return Response.json({
          success: true,
          message: "Changes listed.",
          data: { run: run.id, previous_run: run.result.changes.previous_run ?? null, ...lists },
        });
      },
      {
        params: idParam,
        query: t.Object({ run: t.Optional(t.String({ description: "A successful run's job id (default: the latest)." })) }),
        detail: { ...secured, summary: "A run's change set: added, removed and changed URLs", responses: changesResponses },
      },
    )
    .get(
      "/api/sites/:id/:file",
      async ({ request, params }) => {
        const site = await ownSite(request, params.id);
        const n = sitemapFileNumber(params.file, site);
        if (n === null) throw new HttpError(404, notFound(request));
        const file = await latestFile(site, n);
        if (!file) {
          if (site.lastSuccess === null) throw new HttpError(409, noSitemapYet(site.id));
          throw new HttpError(404, notFound(request));
        }
        return fileAnswer(file, n, site, request);
      },
      {
        params: t.Object({
          id: t.String({ description: "The site id." }),
          file: t.String({
            description: "`sitemap.xml`, or part `sitemap-<n>.xml` (`.xml.gz` with gzip_files).",
            examples: ["sitemap.xml"],
          }),
        }),
        detail: { ...secured, summary: "The site's latest sitemap (or index, or part n)", responses: siteSitemapResponses },
      },
    )
    .get(
      "/s/:token/:file",
      async ({ request, params }) => {
        const site = await deps.store.byToken(params.token);
        const n = site ? sitemapFileNumber(params.file, site) : null;
        if (!site || n === null) throw new HttpError(404, notFound(request));
        if (site.lastSuccess === null) throw new HttpError(409, "The site has no sitemap yet.");
        const run = await deps.jobs.get(site.lastSuccess);
        const file = await latestFile(site, n);
        if (!run || !file) throw new HttpError(404, notFound(request));
        // The latest successful run's file: its id and part name the version; the run's end, its date.
        const etag = `"${run.id}-${n}"`;
        const modified = new Date(run.finishedAt ?? run.createdAt);
        modified.setMilliseconds(0);
        const validators = { etag, "last-modified": modified.toUTCString(), "cache-control": "public, max-age=300" };
        if (notModified(request, etag, modified)) return new Response(null, { status: 304, headers: validators });
        const answer = fileAnswer(file, n, site, request);
        for (const [name, value] of Object.entries(validators)) answer.headers.set(name, value);
        return answer;
      },
      {
        params: t.Object({
          token: t.String({ description: "The site's public token (its `publish.url`)." }),
          file: t.String({
            description: "`sitemap.xml`, or part `sitemap-<n>.xml` (`.xml.gz` with gzip_files).",
            examples: ["sitemap.xml"],
          }),
        }),
        detail: {
          security: [],
          tags: ["sites"],
          summary: "A published site's sitemap: no key, cacheable, conditional requests answer 304",
          responses: publicSitemapResponses,
        },
      },
    );
};

/** `sitemap.xml` is file 0; a part's name gives its number (its gzip_files spelling); anything else null. */
function sitemapFileNumber(name: string, site: StoredSite): number | null {
  if (name === "sitemap.xml") return 0;
  return partNumber(name, site.options.gzip_files === true);
}

/** A stored (gzip-compressed) file as XML, or a gzip_files part as the .gz file it is. */
function fileAnswer(file: Uint8Array, n: number, site: StoredSite, request: Request): Response {
  if (n > 0 && site.options.gzip_files === true)
    return new Response(file as Uint8Array<ArrayBuffer>, { headers: { "content-type": "application/gzip" } });
  return xmlFile(file, request);
}

/** RFC 9110 13.1.2 and 13.1.3: If-None-Match wins over If-Modified-Since. */
function notModified(request: Request, etag: string, modified: Date): boolean {
  const match = request.headers.get("if-none-match");
  if (match !== null) return match.split(",").some((tag) => tag.trim() === "*" || tag.trim().replace(/^W\//, "") === etag);
  const since = request.headers.get("if-modified-since");
  if (since === null) return false;
  const at = Date.parse(since);
  return Number.isFinite(at) && modified.getTime() <= at;
}

/** The 404 of a file that is not there, as the router words it, the same with or without a trailing slash. */
function notFound(request: Request): string {
  const path = new URL(request.url).pathname;
  return `Not found: ${path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path}`;
}
