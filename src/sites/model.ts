// The site object of the contract's "Sites" section and the request/response schemas of the site
// endpoints, for the OpenAPI document (with examples).
import { t } from "elysia";
import { defaultCrawlOptions } from "../crawler/index.ts";
import { jsonInteger, type Responses } from "../http/openapi.ts";
import {
  envelope,
  error,
  exampleFinishedJob,
  JobModel,
  JobOptionsModel,
  JobRequestModel,
  json,
  retryAfter,
  storeDown,
  unauthorized,
  xml,
} from "../jobs/model.ts";
import { MAX_EVERY_HOURS, MIN_EVERY_HOURS, PREMIUM_ONLY, SITE_NOT_FOUND } from "./site.ts";

const IndexNowModel = t.Object(
  {
    key: t.String({ minLength: 8, maxLength: 128, pattern: "^[a-zA-Z0-9-]+$", description: "The site's IndexNow key." }),
    endpoint: t.String({ format: "uri", description: "The IndexNow endpoint, through the address guard." }),
  },
  {
    description:
      "After each successful run the added and changed URLs (on the public origin) are POSTed here, `keyLocation` `<public origin>/<key>.txt`.",
  },
);

const everyHours = t.Union([jsonInteger({ minimum: MIN_EVERY_HOURS, maximum: MAX_EVERY_HOURS }), t.Null()], {
  description: "Hours between scheduled runs, 1 to 720; null: runs on request only. Default 24.",
});

export const SiteModel = t.Object({
  id: t.String({ description: "Unguessable site id (128 random bits, base64url)." }),
  url: t.String({ description: "The start URL." }),
  options: JobOptionsModel,
  every_hours: everyHours,
  next_run_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "When the next scheduled run is due." }),
  last_run: t.Union([JobModel, t.Null()], { description: "The latest run (a job), or null." }),
  publish: t.Union([t.Object({ url: t.String({ description: "The public sitemap's path: /s/<token>/sitemap.xml." }) }), t.Null()]),
  indexnow: t.Union([IndexNowModel, t.Null()]),
  created_at: t.String({ format: "date-time" }),
});

export const SiteRequestModel = t.Composite([
  JobRequestModel,
  t.Object({
    every_hours: t.Optional(everyHours),
    publish: t.Optional(t.Boolean({ default: false, description: "A public, unguessable sitemap URL (no key needed)." })),
    indexnow: t.Optional(t.Union([IndexNowModel, t.Null()])),
  }),
]);

export const SitePatchModel = t.Object(
  {
    every_hours: t.Optional(everyHours),
    publish: t.Optional(t.Boolean({ description: "true: a public URL (kept if there is one); false: revoked (404 from then on)." })),
    indexnow: t.Optional(t.Union([IndexNowModel, t.Null()])),
    callback_url: t.Optional(t.Union([t.String({ format: "uri" }), t.Null()])),
    options: t.Optional(
      t.Object({}, { additionalProperties: true, description: "Crawl options to change (also accepted at the top level)." }),
    ),
  },
  { additionalProperties: true, examples: [{ every_hours: 6, publish: true }] },
);

const exampleSite = {
  id: "Hk2p9ZQm4rT1sV7xY3bN0w",
  url: "https://example.com/",
  options: defaultCrawlOptions(20000),
  every_hours: 24,
  next_run_at: "2026-11-28T10:15:00.000Z",
  last_run: { ...exampleFinishedJob, site_id: "Hk2p9ZQm4rT1sV7xY3bN0w" },
  publish: { url: "/s/Wq8Jf3kX0aP5rL2nC7vB9g/sitemap.xml" },
  indexnow: null,
  created_at: "2026-11-27T10:15:00.000Z",
};

const forbidden = error("A free key: sites belong to premium keys.", PREMIUM_ONLY);
const notFound = error("No site with this id for this key.", SITE_NOT_FOUND);

export const createSiteResponses = {
  201: json(
    "Created; its first run is queued at once. `callback_secret` is shown here once, only when `callback_url` was sent.",
    envelope("Site created.", t.Composite([SiteModel, t.Object({ callback_secret: t.Optional(t.String()) })])),
    { success: true, message: "Site created.", data: exampleSite },
    { Location: { description: "The site's URL.", schema: { type: "string" as const } } },
  ),
  400: error(
    "Bad body, invalid URL or option, or an address that is not allowed (nothing counted).",
    "every_hours must be an integer from 1 to 720, or null.",
  ),
  401: unauthorized,
  403: forbidden,
  413: error("Body over 16 KiB.", "Request body is larger than 16 KiB."),
  503: storeDown,
} satisfies Responses;

export const listSitesResponses = {
  200: json(
    "The key's sites, newest first.",
    envelope("Sites listed.", t.Object({ sites: t.Array(SiteModel), next_cursor: t.Union([t.String(), t.Null()]) })),
    { success: true, message: "Sites listed.", data: { sites: [exampleSite], next_cursor: null } },
  ),
  400: error("Bad limit or cursor.", "limit must be an integer from 1 to 100."),
  401: unauthorized,
  403: forbidden,
  503: storeDown,
} satisfies Responses;

export const getSiteResponses = {
  200: json("The site.", envelope("Site found.", SiteModel), { success: true, message: "Site found.", data: exampleSite }),
  401: unauthorized,
  403: forbidden,
  404: notFound,
  503: storeDown,
} satisfies Responses;

export const patchSiteResponses = {
  200: json("The site as changed.", envelope("Site updated.", SiteModel), { success: true, message: "Site updated.", data: exampleSite }),
  400: error("Bad body or option.", "publish must be true or false."),
  401: unauthorized,
  403: forbidden,
  404: notFound,
  503: storeDown,
} satisfies Responses;

export const deleteSiteResponses = {
  200: json("Deleted, with its runs, history and published files.", t.Object({ success: t.Literal(true), message: t.String() }), {
    success: true,
    message: "Site deleted.",
  }),
  401: unauthorized,
  403: forbidden,
  404: notFound,
  503: storeDown,
} satisfies Responses;

export const startRunResponses = {
  202: json(
    "The run: a job, queued (or, over the key's daily limit, recorded as failed with `error.status` 429).",
    envelope("Site run accepted.", JobModel),
    { success: true, message: "Site run accepted.", data: { ...exampleFinishedJob, status: "queued", site_id: exampleSite.id } },
    { Location: { description: "The run's job URL.", schema: { type: "string" as const } } },
  ),
  401: unauthorized,
  403: forbidden,
  404: notFound,
  409: error("A run of the site is still queued or running.", `Site ${exampleSite.id} has a run in progress.`),
  503: error(
    "Too many jobs waiting, or the database unavailable.",
    "The service is busy: too many sitemap jobs are waiting. Try again later.",
    retryAfter,
  ),
} satisfies Responses;

export const listRunsResponses = {
  200: json(
    "The site's runs (jobs), newest first.",
    envelope("Runs listed.", t.Object({ jobs: t.Array(JobModel), next_cursor: t.Union([t.String(), t.Null()]) })),
    { success: true, message: "Runs listed.", data: { jobs: [exampleSite.last_run], next_cursor: null } },
  ),
  400: error("Bad limit or cursor.", "limit must be an integer from 1 to 100."),
  401: unauthorized,
  403: forbidden,
  404: notFound,
  503: storeDown,
} satisfies Responses;

const noSitemap = error("No run of the site has succeeded yet.", `Site ${exampleSite.id} has no sitemap yet.`);
const urlsetExample =
  '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/</loc><lastmod>2026-11-20T08:00:00Z</lastmod></url></urlset>\n';

export const siteSitemapResponses = {
  200: xml("The latest successful run's sitemap (or its index, or part n).", urlsetExample),
  401: unauthorized,
  403: forbidden,
  404: notFound,
  409: noSitemap,
  503: storeDown,
} satisfies Responses;

export const ChangesModel = t.Object({
  run: t.String({ description: "The run's job id." }),
  previous_run: t.Union([t.String(), t.Null()], { description: "The successful run it is compared with; null for the first." }),
  added: t.Array(t.String()),
  removed: t.Array(t.String()),
  changed: t.Array(t.String(), { description: "Listed both times, with another fingerprint (title and main text)." }),
});

export const changesResponses = {
  200: json("The run's change set, each list sorted.", envelope("Changes listed.", ChangesModel), {
    success: true,
    message: "Changes listed.",
    data: { run: exampleFinishedJob.id, previous_run: null, added: ["https://example.com/"], removed: [], changed: [] },
  }),
  401: unauthorized,
  403: forbidden,
  404: error("No such site for this key, or `run` is not one of its successful runs.", SITE_NOT_FOUND),
  409: noSitemap,
  503: storeDown,
} satisfies Responses;

export const publicSitemapResponses = {
  200: {
    ...xml("The site's latest successful sitemap (or index, or part), with ETag and Last-Modified; no key needed.", urlsetExample),
  },
  304: { description: "Not modified since the ETag or date the request names." },
  404: error("No published site with this token (never, or revoked).", "Not found: /s/Wq8Jf3kX0aP5rL2nC7vB9g/sitemap.xml"),
  409: error("No run of the site has succeeded yet.", "The site has no sitemap yet."),
  503: storeDown,
} satisfies Responses;
