// The job object of the contract's "Crawl jobs" section and the request/response schemas of the
// job endpoints, for the OpenAPI document (with examples).
import { t } from "elysia";
import { type CrawlOptions, type CrawlReport, defaultCrawlOptions, type LinkCounts } from "../crawler/index.ts";
import { asSchema, jsonInteger, type ResponseHeaders, type Responses } from "../http/openapi.ts";
import {
  authModel,
  crawlOptionFields,
  LinkCountsModel,
  linkReportModel,
  linkReportOption,
  PolitenessModel,
  RenderModel,
} from "../sitemap/model.ts";

export type JobStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";
export const FINISHED: readonly JobStatus[] = ["succeeded", "failed", "cancelled"];

export interface JobProgress {
  pages_crawled: number;
  pages_queued: number;
  urls_listed: number;
  elapsed_ms: number;
}

/**
 * The /api/generate success data without `sitemap` (the crawl report), plus where the sitemap is.
 * Results stored before a field existed lack it: the report's later fields are optional here.
 */
export interface JobResult
  extends Omit<CrawlReport, "excluded" | "excluded_examples" | "politeness" | "render">,
    Partial<Pick<CrawlReport, "politeness" | "render">> {
  excluded?: Record<string, number>;
  excluded_examples?: Record<string, string[]>;
  sitemap_url: string;
  /** Part files of a split result; 0 when sitemap.xml is the whole sitemap. */
  sitemap_parts: number;
  /** With link_report: the lists' lengths (the lists: GET /api/jobs/<id>/links.json). */
  links?: LinkCounts;
  /** A site's run: its change set's counts against the site's previous successful run. */
  changes?: { added: number; removed: number; changed: number; unchanged: number; previous_run: string | null };
  /** A site's run with IndexNow: the URLs submitted and the endpoint's last answer. */
  indexnow?: { submitted: number; status: number | string };
}

export interface JobError {
  /** How /api/generate would have answered; 409 for a job cancelled before any URL was listed; 429 for a site's run over its key's daily limit. */
  status: 400 | 409 | 422 | 429 | 502;
  message: string;
}

/** The error of a job cancelled before any URL was listed (queued, or its start page in flight). */
export const CANCELLED_EMPTY: JobError = { status: 409, message: "Job cancelled before any URL was listed." };

/** The job as every endpoint shows it. */
export interface Job {
  id: string;
  status: JobStatus;
  url: string;
  options: CrawlOptions;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress: JobProgress;
  result?: JobResult;
  error?: JobError;
  /** A site's run: the site's id. */
  site_id?: string;
}

export const emptyProgress = (): JobProgress => ({ pages_crawled: 0, pages_queued: 0, urls_listed: 0, elapsed_ms: 0 });

const nullableDate = t.Union([t.String({ format: "date-time" }), t.Null()]);

const directive = (description: string) => t.Union([t.Literal("obey"), t.Literal("ignore")], { description });

/** The fields of crawls that write files (jobs, sites). */
export const publishingFields = {
  max_urls_per_file: t.Optional(
    jsonInteger({
      minimum: 1,
      maximum: 50_000,
      default: 50_000,
      description: "URLs in one sitemap file: past it the result is split into parts of at most this many under a <sitemapindex>.",
      examples: [40000],
    }),
  ),
  sitemap_base_url: t.Optional(
    t.String({
      format: "uri",
      maxLength: 2048,
      description:
        "Where the parts will be published, an http(s) URL ending with /: the index lists `<sitemap_base_url>sitemap-<n>.xml`. Default: the crawled origin (or `public_origin`) plus /.",
      examples: ["https://www.example.com/sitemaps/"],
    }),
  ),
  gzip_files: t.Optional(
    t.Boolean({
      default: false,
      description: "Name the parts `sitemap-<n>.xml.gz` and store and serve them gzip-compressed (`application/gzip`).",
      examples: [true],
    }),
  ),
};

export const JobOptionsModel = t.Object(
  {
    max_pages: jsonInteger({ minimum: 1, description: "Page requests of this crawl, 1 to --job-max-pages (the default)." }),
    max_depth: t.Union([jsonInteger({ minimum: 0 }), t.Null()], {
      description: "Links followed away from the start page; null: no limit.",
    }),
    include: t.Array(t.String(), { maxItems: 50, description: "robots.txt-style patterns: only matching URLs are listed." }),
    exclude: t.Array(t.String(), { maxItems: 50, description: "robots.txt-style patterns: matching URLs are neither fetched nor listed." }),
    ignore_query_params: t.Array(t.String(), {
      maxItems: 50,
      description: "Query parameter names (with * wildcards) removed from every URL.",
    }),
    sitemaps_from_robots: t.Boolean(),
    alternates: t.Boolean(),
    images: t.Boolean(),
    max_concurrency: t.Union([jsonInteger({ minimum: 1 }), t.Null()], {
      description: "The crawl's requests in flight at most; null: the server's --host-concurrency.",
    }),
    delay_ms: jsonInteger({ minimum: 0, description: "Least time between two of the crawl's request starts, ms." }),
    render: t.Union([t.Literal("never"), t.Literal("always"), t.Literal("auto")], { description: "JavaScript rendering mode." }),
    auth: t.Optional(authModel(true)),
    link_report: t.Union([t.Boolean(), t.Object({ external: t.Boolean(), resources: t.Boolean() }, { additionalProperties: false })], {
      description:
        "The link report (as an object: with its checks beyond the origin): counts in `result.links`, lists at GET /api/jobs/{id}/links.json.",
    }),
    robots: t.Optional(directive("robots.txt rules obeyed, or ignored (with auth).")),
    noindex: t.Optional(directive("noindex obeyed, or ignored (with auth).")),
    public_origin: t.Optional(
      t.Union([t.String(), t.Null()], { description: "The origin the sitemap's URLs are written on; null: as crawled." }),
    ),
    documents: t.Optional(t.Boolean({ description: "Documents (PDF, office formats, plain text) listed too." })),
    max_urls_per_file: t.Optional(jsonInteger({ minimum: 1, maximum: 50_000, description: "URLs in one sitemap file." })),
    sitemap_base_url: t.Optional(
      t.Union([t.String(), t.Null()], { description: "Where the parts will be published; null: the public origin plus /." }),
    ),
    gzip_files: t.Optional(t.Boolean({ description: "Parts written as sitemap-<n>.xml.gz." })),
  },
  { description: "The crawl options as accepted, defaults filled in; `auth` (only when sent) redacted." },
);

export const JobProgressModel = t.Object({
  pages_crawled: jsonInteger({ description: "Page requests made so far, redirect hops included." }),
  pages_queued: jsonInteger({ description: "URLs waiting to be fetched." }),
  urls_listed: jsonInteger({ description: "URLs listed so far." }),
  elapsed_ms: jsonInteger({ description: "Crawl time so far, over all attempts." }),
});

export const JobResultModel = t.Object({
  url: t.String({ description: "The start URL after redirects." }),
  url_count: jsonInteger({ description: "URLs listed, over all parts." }),
  pages_crawled: jsonInteger(),
  truncated: t.Boolean({ description: "True when a page or time limit, or a cancel, stopped the crawl early." }),
  duration_ms: jsonInteger(),
  generated_at: t.String({ format: "date-time" }),
  excluded: t.Optional(t.Record(t.String(), jsonInteger(), { description: "URLs met and not listed, by reason." })),
  excluded_examples: t.Optional(t.Record(t.String(), t.Array(t.String()), { description: "Up to 5 URLs per reason." })),
  politeness: t.Optional(PolitenessModel),
  render: t.Optional(RenderModel),
  sitemap_url: t.String({ description: "Path of the sitemap (a <sitemapindex> when split)." }),
  sitemap_parts: jsonInteger({
    description: "Number of part files sitemap-<n>.xml (sitemap-<n>.xml.gz with gzip_files); 0 when not split.",
  }),
  links: t.Optional(LinkCountsModel),
  changes: t.Optional(
    t.Object(
      {
        added: jsonInteger({ minimum: 0 }),
        removed: jsonInteger({ minimum: 0 }),
        changed: jsonInteger({ minimum: 0 }),
        unchanged: jsonInteger({ minimum: 0 }),
        previous_run: t.Union([t.String(), t.Null()], { description: "The successful run compared with; null for the site's first." }),
      },
      { description: "A site's run: URLs added, removed, changed (fingerprint) and unchanged against its previous successful run." },
    ),
  ),
  indexnow: t.Optional(
    t.Object(
      {
        submitted: jsonInteger({ minimum: 0, description: "URLs the endpoint accepted." }),
        status: t.Union([jsonInteger(), t.String()], { description: "The endpoint's last HTTP status, or why it gave none." }),
      },
      { description: "A site's run with `indexnow`: what was submitted of its added and changed URLs." },
    ),
  ),
});

export const JobModel = t.Object({
  id: t.String({ description: "Unguessable job id (128 random bits, base64url)." }),
  status: t.Union(["queued", "running", "succeeded", "failed", "cancelled"].map((s) => t.Literal(s))),
  url: t.String({ description: "The URL as sent." }),
  options: JobOptionsModel,
  created_at: t.String({ format: "date-time" }),
  started_at: nullableDate,
  finished_at: nullableDate,
  progress: JobProgressModel,
  result: t.Optional(JobResultModel),
  site_id: t.Optional(t.String({ description: "When the job is a site's run: the site's id (GET /api/sites/{id})." })),
  error: t.Optional(
    t.Object(
      { status: t.Union([t.Literal(400), t.Literal(409), t.Literal(422), t.Literal(429), t.Literal(502)]), message: t.String() },
      {
        description:
          "How /api/generate would have answered; for a job cancelled before any URL was listed, 409 `Job cancelled before any URL was listed.`; for a site's run over its key's daily limit, 429 (the run was not started).",
      },
    ),
  ),
});

export const JobRequestModel = t.Object(
  {
    url: t.String({ format: "uri", maxLength: 2048, description: "Absolute http:// or https:// URL of the site's start page." }),
    callback_url: t.Optional(
      t.String({ format: "uri", maxLength: 2048, description: "POSTed the job JSON when it finishes, signed with X-Genapi-Signature." }),
    ),
    max_pages: t.Optional(jsonInteger({ minimum: 1 })),
    max_depth: t.Optional(jsonInteger({ minimum: 0 })),
    include: t.Optional(t.Array(t.String(), { maxItems: 50 })),
    exclude: t.Optional(t.Array(t.String(), { maxItems: 50 })),
    ignore_query_params: t.Optional(t.Array(t.String(), { maxItems: 50 })),
    sitemaps_from_robots: t.Optional(t.Boolean()),
    alternates: t.Optional(t.Boolean()),
    images: t.Optional(t.Boolean()),
    max_concurrency: t.Optional(jsonInteger({ minimum: 1 })),
    delay_ms: t.Optional(jsonInteger({ minimum: 0, maximum: 60_000 })),
    render: t.Optional(t.Union([t.Literal("never"), t.Literal("always"), t.Literal("auto")])),
    auth: crawlOptionFields.auth,
    robots: crawlOptionFields.robots,
    noindex: crawlOptionFields.noindex,
    public_origin: crawlOptionFields.public_origin,
    documents: crawlOptionFields.documents,
    ...publishingFields,
    link_report: t.Optional(linkReportOption(" A job's counts are in `result.links`, the full lists at GET /api/jobs/{id}/links.json.")),
  },
  { examples: [{ url: "https://example.com/", max_pages: 20000, callback_url: "https://hooks.example.net/genapi" }] },
);

const exampleOptions = defaultCrawlOptions(20000);

export const exampleJob = {
  id: "q7Yc0JxkS1uQm3n2V5rT8w",
  status: "running",
  url: "https://example.com/",
  options: exampleOptions,
  created_at: "2026-11-21T10:15:00.000Z",
  started_at: "2026-11-21T10:15:00.120Z",
  finished_at: null,
  progress: { pages_crawled: 5120, pages_queued: 8300, urls_listed: 4980, elapsed_ms: 61250 },
};

export const exampleFinishedJob = {
  ...exampleJob,
  status: "succeeded",
  finished_at: "2026-11-21T10:32:41.900Z",
  progress: { pages_crawled: 61234, pages_queued: 0, urls_listed: 60012, elapsed_ms: 1061780 },
  result: {
    url: "https://example.com/",
    url_count: 60012,
    pages_crawled: 61234,
    truncated: false,
    duration_ms: 1061780,
    generated_at: "2026-11-21T10:32:41.900Z",
    sitemap_url: "/api/jobs/q7Yc0JxkS1uQm3n2V5rT8w/sitemap.xml",
    sitemap_parts: 2,
  },
};

export const ErrorBodyModel = t.Object({ success: t.Literal(false), message: t.String() });
export const envelope = (message: string, data: ReturnType<typeof t.Object>) =>
  t.Object({ success: t.Literal(true), message: t.Literal(message), data });

export const retryAfter = {
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" as const } },
} satisfies ResponseHeaders;

export const error = (description: string, message: string, headers: ResponseHeaders = {}) => ({
  description,
  headers,
  content: { "application/json": { schema: asSchema(ErrorBodyModel), example: { success: false, message } } },
});

export const unauthorized = error("Missing, unknown or revoked API key.", "Authentication failed. Invalid or missing API key.");
export const storeDown = error(
  "The database is busy, unreachable, full, read-only or failing; nothing was counted or changed.",
  "Service temporarily unavailable: the database is unreachable.",
  retryAfter,
);
const notFound = error("No job with this id for this key.", "Job not found.");
export const json = (description: string, schema: ReturnType<typeof t.Object>, example: unknown, headers: ResponseHeaders = {}) => ({
  description,
  headers,
  content: { "application/json": { schema: asSchema(schema), example } },
});

export const createJobResponses = {
  202: json(
    "Accepted: the job is queued. `callback_secret` is shown here once, only when `callback_url` was sent.",
    envelope("Sitemap job accepted.", t.Composite([JobModel, t.Object({ callback_secret: t.Optional(t.String()) })])),
    {
      success: true,
      message: "Sitemap job accepted.",
      data: {
        ...exampleJob,
        status: "queued",
        started_at: null,
        progress: { pages_crawled: 0, pages_queued: 0, urls_listed: 0, elapsed_ms: 0 },
        callback_secret: "3vQf8m2Xc9...",
      },
    },
    { Location: { description: "The job's URL.", schema: { type: "string" as const } } },
  ),
  400: error(
    "Bad body, invalid URL or option, or a target address that is not allowed; a `callback_url` the address guard refuses answers `callback_url is not allowed: <reason>` (nothing is counted).",
    "Invalid URL. Provide a full URL that includes http:// or https://.",
  ),
  401: unauthorized,
  408: error("The body did not arrive in time.", "Request body did not arrive within 10 s."),
  413: error("Body over 16 KiB.", "Request body is larger than 16 KiB."),
  429: error("Daily quota used up.", "API rate limit exceeded (5 requests per day). Please contact us for premium access.", retryAfter),
  503: error(
    "Too many jobs waiting, or the database busy, unreachable, full, read-only or failing; the request did not count.",
    "The service is busy: too many sitemap jobs are waiting. Try again later.",
    retryAfter,
  ),
} satisfies Responses;

export const listJobsResponses = {
  200: json(
    "The key's jobs, newest first.",
    envelope("Jobs listed.", t.Object({ jobs: t.Array(JobModel), next_cursor: t.Union([t.String(), t.Null()]) })),
    { success: true, message: "Jobs listed.", data: { jobs: [exampleFinishedJob], next_cursor: null } },
  ),
  400: error("Bad limit or cursor.", "limit must be an integer from 1 to 100."),
  401: unauthorized,
  503: storeDown,
} satisfies Responses;

export const getJobResponses = {
  200: json("The job.", envelope("Job found.", JobModel), { success: true, message: "Job found.", data: exampleFinishedJob }),
  401: unauthorized,
  404: notFound,
  503: storeDown,
} satisfies Responses;

export const deleteJobResponses = {
  200: json(
    "`Job cancelled.` for a queued or running job, with `data` the job as it stays (what it found is kept as its result, truncated; with nothing listed, its error is 409 `Job cancelled before any URL was listed.`); `Job deleted.` for a finished job (its result is gone).",
    t.Object({ success: t.Literal(true), message: t.String(), data: t.Optional(JobModel) }),
    { success: true, message: "Job cancelled.", data: { ...exampleJob, status: "cancelled" } },
  ),
  401: unauthorized,
  404: notFound,
  503: storeDown,
} satisfies Responses;

export const eventsResponses = {
  200: {
    description:
      "Server-Sent Events: `progress` with the job at least every 2 s while it runs, then one `done` with the final job; the stream then ends.",
    content: {
      "text/event-stream": {
        schema: { type: "string" as const },
        example: `event: progress\ndata: ${JSON.stringify(exampleJob)}\n\nevent: done\ndata: ${JSON.stringify(exampleFinishedJob)}\n\n`,
      },
    },
  },
  401: unauthorized,
  404: notFound,
  503: storeDown,
} satisfies Responses;

export const xml = (description: string, example: string) => ({
  description,
  headers: {
    "Content-Encoding": { description: "gzip when the request's Accept-Encoding allows it.", schema: { type: "string" as const } },
  },
  content: { "application/xml": { schema: { type: "string" as const }, example } },
});

export const sitemapResponses = {
  200: xml(
    "The sitemap, or a <sitemapindex> over its parts when the result exceeds 50,000 URLs or 50 MB.",
    '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://example.com/sitemap-1.xml</loc></sitemap><sitemap><loc>https://example.com/sitemap-2.xml</loc></sitemap></sitemapindex>\n',
  ),
  401: unauthorized,
  404: notFound,
  409: error("The job has not succeeded (yet).", "Job q7Yc0JxkS1uQm3n2V5rT8w is running."),
  503: storeDown,
} satisfies Responses;

export const linksResponses = {
  200: {
    description:
      "The link report of a job run with `link_report`, once it has a result: every list in full (not cut to 1,000), sorted by url; `truncated` is always false.",
    headers: {
      "Content-Encoding": { description: "gzip when the request's Accept-Encoding allows it.", schema: { type: "string" as const } },
    },
    content: {
      "application/json": {
        schema: asSchema(linkReportModel()),
        example: {
          broken: [
            {
              url: "https://example.com/old-pricing",
              status: 404,
              error: "HTTP 404",
              referrers: ["https://example.com/", "https://example.com/blog/launch"],
              referrer_count: 2,
            },
          ],
          redirects: [
            {
              url: "https://example.com/docs",
              status: 301,
              target: "https://example.com/docs/",
              hops: 1,
              referrers: ["https://example.com/"],
              referrer_count: 1,
            },
          ],
          sitemap_errors: [{ url: "https://example.com/drafts/x", sitemap: "https://example.com/sitemap.xml", reason: "noindex" }],
          truncated: false,
        },
      },
    },
  },
  401: unauthorized,
  404: error(
    "No such job for this key (`Job not found.`), a job run without `link_report`, or one without a result (yet): `Job <id> is running.`",
    "Job q7Yc0JxkS1uQm3n2V5rT8w is running.",
  ),
  503: storeDown,
} satisfies Responses;

const partXml = xml(
  "Part n of a split result: XML, or for a job with `gzip_files` (`sitemap-<n>.xml.gz`) the gzip-compressed file as `application/gzip`.",
  '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/</loc></url></urlset>\n',
);

export const partResponses = {
  200: {
    ...partXml,
    content: { ...partXml.content, "application/gzip": { schema: { type: "string" as const, format: "binary" } } },
  },
  401: unauthorized,
  404: error("No such job for this key, or no such part.", "Job not found."),
  503: storeDown,
} satisfies Responses;
