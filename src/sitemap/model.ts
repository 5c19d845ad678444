// The request and response models of POST /api/generate, for the OpenAPI document.
import { t } from "elysia";
import { asSchema, jsonInteger, type ResponseHeaders, type Responses } from "../http/openapi.ts";
import {
  EXCLUSION_REASONS,
  type ExclusionReason,
  INVALID_EXAMPLE_LENGTH,
  MAX_AUTH_COOKIES,
  MAX_AUTH_HEADERS,
  MAX_AUTH_LENGTH,
  MAX_DELAY_MS,
  MAX_EXAMPLES_PER_REASON,
  MAX_LIST_ENTRIES,
  MAX_PARAM_NAME_LENGTH,
  MAX_PATTERN_LENGTH,
  MAX_PATTERNS,
  MAX_REFERRERS,
  NOT_LINKED,
} from "../crawler/index.ts";

const patterns = (description: string, example: string[]) =>
  t.Optional(
    t.Array(t.String({ minLength: 1, maxLength: MAX_PATTERN_LENGTH, pattern: "^/" }), {
      maxItems: MAX_PATTERNS,
      description,
      examples: [example],
    }),
  );

const nameValues = (max: number, what: string, redacted: boolean) =>
  t.Unsafe<Record<string, string>>({
    type: "object",
    maxProperties: max,
    propertyNames: { type: "string", minLength: 1, maxLength: MAX_AUTH_LENGTH, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" },
    additionalProperties: redacted ? { type: "string", const: "***" } : { type: "string", maxLength: MAX_AUTH_LENGTH },
    description: what,
  });

/**
 * Option `auth` (`redacted`: as a job shows it, every password and value "***"). Credentials for
 * the start URL's origin only: its pages, redirect hops, robots.txt and sitemaps, never another origin.
 */
export const authModel = (redacted: boolean) =>
  t.Object(
    {
      basic: t.Optional(
        t.Object(
          {
            username: t.String({ maxLength: MAX_AUTH_LENGTH, pattern: "^[^:]*$" }),
            password: redacted ? t.Literal("***") : t.String({ maxLength: MAX_AUTH_LENGTH }),
          },
          { additionalProperties: false, description: "HTTP basic authentication (RFC 7617, UTF-8)." },
        ),
      ),
      headers: t.Optional(
        nameValues(
          MAX_AUTH_HEADERS,
          "Request headers, name to value (visible ASCII). Not Host, Content-Length, Transfer-Encoding, Connection, Upgrade, TE, Cookie, Authorization or Proxy-*: `auth.headers: <Name> cannot be set.`",
          redacted,
        ),
      ),
      cookies: t.Optional(nameValues(MAX_AUTH_COOKIES, "Cookies, name to value, sent in one Cookie header.", redacted)),
    },
    {
      additionalProperties: false,
      minProperties: 1,
      description: redacted
        ? "The credentials, redacted: names and the basic username as sent, every password, header value and cookie value `***`."
        : "Credentials for the start URL's origin (as sent) only: its pages, redirect hops, robots.txt and sitemaps, never another origin. " +
          "Never shown again (jobs show them redacted); a job keeps them encrypted under the server's secret key until it ends. " +
          "A bad shape answers 400 `auth must be an object with basic, headers or cookies.`; on a server that cannot keep them " +
          "(PostgreSQL without --secret-key-file) a job answers 400 `auth needs --secret-key-file on this server.`",
      examples: redacted
        ? [{ basic: { username: "preview", password: "***" }, headers: { "X-Preview-Token": "***" } }]
        : [
            {
              basic: { username: "preview", password: "correct horse" },
              headers: { "X-Preview-Token": "abc123" },
              cookies: { session: "s3cr3t" },
            },
          ],
    },
  );

/**
 * The crawl options beside `url`, shared by POST /api/generate and POST /api/jobs (whose page cap
 * is --job-max-pages). An invalid value answers 400 before the quota is counted.
 */
export const crawlOptionFields = {
  max_pages: t.Optional(
    t.Unsafe<number>({
      type: "integer",
      minimum: 1,
      description:
        "Page requests of this crawl (redirect hops count, robots.txt does not): 1 to the server's cap, which is also the default (--max-pages, 500 unless set; --job-max-pages for jobs).",
      examples: [200],
    }),
  ),
  max_depth: t.Optional(
    t.Unsafe<number>({
      type: "integer",
      minimum: 0,
      description: "Links followed away from the start page, which is depth 0. No limit when absent. Deeper URLs count as `filtered`.",
      examples: [3],
    }),
  ),
  include: patterns(
    "robots.txt-style patterns on path and query (`*` any run of characters, `$` the end, each starting with `/`): only matching URLs are listed; the others are still crawled for links.",
    ["/blog/", "/*.html$"],
  ),
  exclude: patterns("Same syntax as `include`: matching URLs are neither fetched nor listed.", ["/admin/", "/*?print="]),
  ignore_query_params: t.Optional(
    t.Array(t.String({ minLength: 1, maxLength: MAX_PARAM_NAME_LENGTH }), {
      maxItems: MAX_PATTERNS,
      description:
        'Query parameter names removed from every URL before it is queued or listed; `*` matches any run of characters (`utm_*`); `["*"]` drops every query.',
      examples: [["utm_*", "sessionid"]],
    }),
  ),
  sitemaps_from_robots: t.Optional(
    t.Boolean({
      default: false,
      description:
        "Also queue the page URLs of the origin's existing sitemaps named by robots.txt `Sitemap:` lines (same origin only; sitemap indexes and .gz files read; at most the page budget). They must meet every listing rule like any other URL.",
      examples: [true],
    }),
  ),
  alternates: t.Optional(
    t.Boolean({
      default: false,
      description:
        'Add `<xhtml:link rel="alternate" hreflang=".." href=".."/>` for each page\'s `<link rel="alternate" hreflang>` entries.',
      examples: [true],
    }),
  ),
  images: t.Optional(
    t.Boolean({
      default: false,
      description:
        "Add `<image:image><image:loc>..</image:loc></image:image>` for each page's `<img src>` (absolute http(s) URLs, at most 1,000 per page).",
      examples: [true],
    }),
  ),
  max_concurrency: t.Optional(
    t.Unsafe<number>({
      type: "integer",
      minimum: 1,
      maximum: 64,
      description:
        "This crawl's requests in flight at once: 1 to the server's --host-concurrency (4 unless set), which is also the default. Lower only: a larger value answers 400.",
      examples: [2],
    }),
  ),
  render: t.Optional(
    t.Union([t.Literal("never"), t.Literal("always"), t.Literal("auto")], {
      default: "never",
      description:
        "Read pages through the server's Chromium: `never`, `always`, or `auto` (the start page is read raw and rendered; the crawl is rendered when the browser finds in-scope links the raw HTML lacks). 400 `render is not available: no Chromium found on the server.` when it has none.",
      examples: ["auto"],
    }),
  ),
  delay_ms: t.Optional(
    t.Unsafe<number>({
      type: "integer",
      minimum: 0,
      maximum: MAX_DELAY_MS,
      default: 0,
      description: "Least time between two of this crawl's request starts, in ms, on top of the host's own interval.",
      examples: [250],
    }),
  ),
  auth: t.Optional(authModel(false)),
  robots: t.Optional(
    t.Union([t.Literal("obey"), t.Literal("ignore")], {
      default: "obey",
      description:
        'robots.txt: `obey`, or `ignore` (its rules keep no URL out; its Crawl-delay and Sitemap lines still apply), for a staging site crawled with its owner\'s credentials: `ignore` needs `auth` (400 `robots "ignore" needs auth.`).',
      examples: ["ignore"],
    }),
  ),
  noindex: t.Optional(
    t.Union([t.Literal("obey"), t.Literal("ignore")], {
      default: "obey",
      description:
        'noindex (meta robots or X-Robots-Tag): `obey`, or `ignore` (pages are listed despite it; nofollow still holds). `ignore` needs `auth` (400 `noindex "ignore" needs auth.`).',
      examples: ["ignore"],
    }),
  ),
  public_origin: t.Optional(
    t.String({
      format: "uri",
      maxLength: 2048,
      description:
        "Every URL of the crawled origin in the sitemap (locs, hreflang and image URLs, part URLs) is written on this http(s) origin instead: crawl staging, list production. The crawl itself is unchanged.",
      examples: ["https://www.example.com"],
    }),
  ),
  documents: t.Optional(
    t.Boolean({
      default: false,
      description:
        "Also list in-scope documents search engines index (PDF, Word, Excel, PowerPoint, OpenDocument, RTF, plain text, by content type) that answer 200 without `X-Robots-Tag: noindex`, with their Last-Modified; their bodies are not read.",
      examples: [true],
    }),
  ),
  link_report: t.Optional(linkReportOption()),
};

/** `link_report`: a boolean, or the object of its checks beyond the origin. */
export function linkReportOption(extra = "") {
  return t.Union(
    [
      t.Boolean(),
      t.Object(
        {
          external: t.Optional(
            t.Boolean({
              default: false,
              description:
                "Also check each distinct link to another origin once (HEAD, GET after 405/501; public addresses only, without credentials, never followed, never listed); at most 10,000 a crawl, the rest counted in `external_unchecked`.",
            }),
          ),
          resources: t.Optional(
            t.Boolean({
              default: false,
              description:
                'Also check each distinct `<img src>`/`srcset`, `<link rel="stylesheet">`, `<script src>`, `<source src>`, `<video src|poster>` and `<audio src>` URL once (in scope with the crawl\'s credentials); at most 10,000 a crawl, the rest counted in `resources_unchecked`.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ],
    {
      default: false,
      description: `Also report what to fix next: \`data.links\` lists the in-scope broken links and redirects the crawl met, with up to 5 referring pages each, and, with \`sitemaps_from_robots\`, the site's own sitemap URLs that the generated sitemap does not list (or lists only thanks to that sitemap). As an object, broken links to other origins (\`external\`) and broken resources (\`resources\`) too, each broken entry with its \`kind\`; \`true\` is both false.${extra}`,
      examples: [true, { external: true, resources: true }],
    },
  );
}

/** `data.render`: whether pages were read through the browser. */
export const RenderModel = t.Object(
  {
    mode: t.Union([t.Literal("never"), t.Literal("always"), t.Literal("auto")]),
    rendered: t.Boolean({ description: "The crawl's pages were read from the rendered DOM." }),
    pages_rendered: jsonInteger({ minimum: 0, description: "Pages rendered in the browser." }),
  },
  { description: "JavaScript rendering: the mode asked for, whether it rendered, and how many pages." },
);

/** `data.politeness`: what politeness toward the crawled site did to this crawl. */
export const PolitenessModel = t.Object(
  {
    max_concurrency: jsonInteger({ minimum: 1, description: "Requests this crawl had in flight at most." }),
    delay_ms: jsonInteger({
      minimum: 0,
      description: "The interval kept between request starts to the host: the crawl's delay_ms or the server's --host-delay, the larger.",
    }),
    crawl_delay_s: t.Union([t.Number({ minimum: 0, maximum: 30 }), t.Null()], {
      description: "robots.txt's Crawl-delay for genapi (or `*`), seconds, at most 30; null when none.",
    }),
    throttled: jsonInteger({ minimum: 0, description: "429 and 503 answers received." }),
    retries: jsonInteger({ minimum: 0, description: "Requests sent again after a 429 or 503 (at most 3 per URL)." }),
    paused_ms: jsonInteger({
      minimum: 0,
      description:
        "Time this crawl's requests waited on pauses of the host after a 429 or 503, whoever met it; at most the crawl's duration.",
    }),
  },
  { description: "Politeness toward the crawled host: limits applied, throttled answers, retries and pauses." },
);

const requestExample = { url: "https://example.com/" };
const requestWithOptionsExample = {
  url: "https://example.com/",
  max_pages: 200,
  max_depth: 3,
  exclude: ["/admin/"],
  ignore_query_params: ["utm_*"],
  images: true,
};

export const GenerateRequestModel = t.Object(
  {
    url: t.String({
      format: "uri",
      maxLength: 2048,
      description: "Absolute http:// or https:// URL of the site's start page.",
      examples: ["https://example.com/"],
    }),
    ...crawlOptionFields,
  },
  { examples: [requestExample, requestWithOptionsExample] },
);

const REASON_DESCRIPTIONS: Record<ExclusionReason, string> = {
  robots: "Disallowed by robots.txt.",
  noindex: '`noindex` in `<meta name="robots">` or X-Robots-Tag.',
  canonical: 'Its `rel="canonical"` points elsewhere.',
  redirect: "The redirecting URL (its target is judged on its own).",
  not_html: "The final response is not HTML.",
  http_error: "The final response is a 4xx or 5xx.",
  failed: "Network error, timeout, or over the size cap.",
  filtered: "Left out by `include`, `exclude` or `max_depth`.",
  invalid: "A link that cannot be listed: longer than 2,048 characters once normalised, or not a valid URI.",
};

/** `data.excluded`: every reason, 0 when nothing fell there. */
export const ExcludedModel = t.Object(
  Object.fromEntries(EXCLUSION_REASONS.map((reason) => [reason, jsonInteger({ minimum: 0, description: REASON_DESCRIPTIONS[reason] })])),
  { description: "How many URLs the crawl met and did not list, by reason." },
);

/** `data.excluded_examples`: up to 5 URLs per reason; an `invalid` one is cut and need not be a URI. */
export const ExcludedExamplesModel = t.Object(
  Object.fromEntries(
    EXCLUSION_REASONS.map((reason) => [
      reason,
      reason === "invalid"
        ? t.Array(t.String({ maxLength: INVALID_EXAMPLE_LENGTH }), {
            maxItems: MAX_EXAMPLES_PER_REASON,
            description: `The link as met, cut to ${INVALID_EXAMPLE_LENGTH} characters (not necessarily a valid URI).`,
          })
        : t.Array(t.String({ format: "uri" }), { maxItems: MAX_EXAMPLES_PER_REASON }),
    ]),
  ),
  { description: "Up to 5 of the URLs counted in `excluded`, by reason." },
);

const uri = (description: string) => t.String({ format: "uri", description });
const referrerFields = {
  referrers: t.Array(uri("A page linking to it."), {
    maxItems: MAX_REFERRERS,
    description: "Up to 5 pages whose `<a>`/`<area>` links (nofollow ones included) point at it, sorted.",
  }),
  referrer_count: jsonInteger({ minimum: 1, description: "Pages linking to it." }),
};

/** One entry of `links.broken`. */
export const BrokenLinkModel = t.Object(
  {
    url: uri("A URL that pages link to (in scope for `page`) or load (`resource`)."),
    kind: t.Union([t.Literal("page"), t.Literal("external"), t.Literal("resource")], {
      description:
        "`page`: an in-scope link; `external`: a link to another origin; `resource`: an image, stylesheet, script or media URL a page loads.",
    }),
    status: t.Union([jsonInteger({ minimum: 100, maximum: 599 }), t.Null()], {
      description: "The final HTTP status; null when there was none (a network failure, a timeout, a redirect loop).",
    }),
    error: t.String({ description: "`HTTP <status>`, or the failure: `timed out`, `connection refused`, `redirect loop`, ..." }),
    ...referrerFields,
  },
  {
    additionalProperties: false,
    description:
      "A link (or resource) whose final answer was a 4xx/5xx or a failure; external links and resources are checked once each and never followed (a redirect is not broken). Referrers of a resource are the pages that load it.",
  },
);

/** One entry of `links.redirects`. */
export const RedirectLinkModel = t.Object(
  {
    url: uri("An in-scope URL that pages link to."),
    status: jsonInteger({ minimum: 300, maximum: 399, description: "The first hop's status." }),
    target: uri("Where the redirects lead: the final URL."),
    hops: jsonInteger({ minimum: 1, description: "Redirects on the way." }),
    ...referrerFields,
  },
  { additionalProperties: false, description: "An in-scope link that answered with a redirect." },
);

/** One entry of `links.sitemap_errors`. */
export const SitemapErrorModel = t.Object(
  {
    url: uri("A page URL of the site's own sitemaps."),
    sitemap: uri("The sitemap file that lists it."),
    reason: t.Union(
      [...EXCLUSION_REASONS, NOT_LINKED].map((reason) => t.Literal(reason)),
      { description: "The `excluded` reason it fell under, or `not_linked`: listed only thanks to the sitemap, no link reaches it." },
    ),
  },
  {
    additionalProperties: false,
    description: "A sitemap URL that the generated sitemap does not list, or lists only thanks to that sitemap.",
  },
);

const uncheckedFields = {
  external_unchecked: t.Optional(
    jsonInteger({ minimum: 0, description: "With `external`: distinct links to other origins met past the 10,000 checked." }),
  ),
  resources_unchecked: t.Optional(
    jsonInteger({ minimum: 0, description: "With `resources`: distinct resource URLs met past the 10,000 checked." }),
  ),
};

/** The link report's lists: `data.links` (at most `maxItems` each) or a job's links.json (uncut). */
export const linkReportModel = (maxItems?: number) => {
  const list = (schema: Parameters<typeof t.Array>[0], description: string) =>
    t.Array(schema, maxItems === undefined ? { description } : { maxItems, description });
  return t.Object(
    {
      broken: list(BrokenLinkModel, "Sorted by url."),
      redirects: list(RedirectLinkModel, "Sorted by url."),
      sitemap_errors: list(SitemapErrorModel, "Sorted by url; empty without `sitemaps_from_robots`."),
      truncated: t.Boolean({
        description:
          maxItems === undefined
            ? "Always false: the lists are whole."
            : `True when a list was cut to ${maxItems.toLocaleString("en-US")} entries.`,
      }),
      ...uncheckedFields,
    },
    { additionalProperties: false },
  );
};

/** A job's `result.links`: the lists' lengths. */
export const LinkCountsModel = t.Object(
  {
    broken_count: jsonInteger({ minimum: 0 }),
    redirect_count: jsonInteger({ minimum: 0 }),
    sitemap_error_count: jsonInteger({ minimum: 0 }),
    ...uncheckedFields,
  },
  { additionalProperties: false, description: "With `link_report`: the lists' lengths; the lists are at GET /api/jobs/{id}/links.json." },
);

export const GenerateSuccess = t.Object({
  success: t.Literal(true),
  message: t.Literal("Sitemap generated successfully."),
  data: t.Object({
    url: t.String({ description: "The start URL after redirects." }),
    sitemap: t.String({ description: "sitemaps.org 0.9 <urlset>, UTF-8." }),
    url_count: jsonInteger({ description: "URLs listed in the sitemap." }),
    pages_crawled: jsonInteger({ description: "Page requests made, redirect hops included; robots.txt excluded." }),
    truncated: t.Boolean({ description: "True when a page, time or size limit stopped the crawl before it ran out of links." }),
    duration_ms: jsonInteger(),
    generated_at: t.String({ format: "date-time" }),
    excluded: ExcludedModel,
    excluded_examples: ExcludedExamplesModel,
    politeness: PolitenessModel,
    render: RenderModel,
    links: t.Optional(linkReportModel(MAX_LIST_ENTRIES)),
  }),
});

export const GenerateError = t.Object({
  success: t.Literal(false),
  message: t.String(),
});

const successExample = {
  success: true,
  message: "Sitemap generated successfully.",
  data: {
    url: "https://example.com/",
    sitemap:
      '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
      "<url><loc>https://example.com/</loc><lastmod>2026-11-20T08:00:00Z</lastmod></url>" +
      "<url><loc>https://example.com/about</loc></url></urlset>\n",
    url_count: 2,
    pages_crawled: 3,
    truncated: false,
    duration_ms: 412,
    generated_at: "2026-11-21T10:15:00.000Z",
    excluded: { robots: 0, noindex: 1, canonical: 0, redirect: 0, not_html: 0, http_error: 0, failed: 0, filtered: 0, invalid: 0 },
    excluded_examples: {
      robots: [],
      noindex: ["https://example.com/drafts"],
      canonical: [],
      redirect: [],
      not_html: [],
      http_error: [],
      failed: [],
      filtered: [],
      invalid: [],
    },
  },
};

const rateLimitHeaders = {
  "X-RateLimit-Limit": { description: "Requests allowed per UTC day.", schema: { type: "integer" as const } },
  "X-RateLimit-Remaining": { description: "Requests left today.", schema: { type: "integer" as const } },
  "X-RateLimit-Reset": { description: "Unix seconds of the next reset (00:00 UTC).", schema: { type: "integer" as const } },
  "RateLimit-Policy": { description: 'IETF draft, e.g. `"daily";q=5;w=86400`.', schema: { type: "string" as const } },
  RateLimit: { description: 'IETF draft, e.g. `"daily";r=4;t=3600`.', schema: { type: "string" as const } },
} satisfies ResponseHeaders;

const error = (description: string, message: string, headers: ResponseHeaders = rateLimitHeaders) => ({
  description,
  headers,
  content: { "application/json": { schema: asSchema(GenerateError), example: { success: false, message } } },
});

export const generateResponses = {
  200: {
    description: "The sitemap.",
    headers: rateLimitHeaders,
    content: { "application/json": { schema: asSchema(GenerateSuccess), example: successExample } },
  },
  400: error(
    "Bad body, invalid URL, an invalid crawl option (the message names the field, e.g. `max_pages must be an integer from 1 to 500.`), or a target address that is not allowed. Not counted against the quota.",
    "Invalid URL. Provide a full URL that includes http:// or https://.",
  ),
  401: error("Missing, unknown or revoked API key.", "Authentication failed. Invalid or missing API key.", {}),
  413: error("Body over 16 KiB.", "Request body is larger than 16 KiB."),
  429: error("Daily quota used up.", "API rate limit exceeded (5 requests per day). Please contact us for premium access.", {
    ...rateLimitHeaders,
    "Retry-After": { description: "Seconds until the next reset.", schema: { type: "integer" as const } },
  }),
  422: error(
    "The crawl found no URL to list; the reason is in parentheses. Counts against the quota.",
    "Could not crawl https://example.com/: no indexable page found (the start page is noindex)",
  ),
  502: error(
    "The start page could not be crawled, or, with `render`, the browser could not be started or the start page rendered (`Could not crawl <url>: render failed: <reason>`).",
    "Could not crawl https://example.com/: HTTP 404",
  ),
  503: error(
    "Too many crawls running and queued, or the database busy, unreachable, full, read-only or failing (`Service temporarily unavailable: the database is <problem>.`); the request did not count.",
    "The service is busy: too many sitemap crawls are running. Try again shortly.",
    {
      ...rateLimitHeaders,
      "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" as const } },
    },
  ),
} satisfies Responses;

export const GenerateRequest = asSchema(GenerateRequestModel);
