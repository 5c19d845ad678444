// The crawl options of POST /api/generate and POST /api/jobs: read from the JSON body at step 3,
// before admission, so an invalid option answers 400 and costs no quota.
import { type CrawlAuth, parseCrawlAuth, redactAuth } from "./auth.ts";
import { publicUrls, type SitemapFeatures } from "./output/xml.ts";

export interface CrawlOptions {
  /** Page requests of this crawl, 1 to the server's cap (the default). */
  max_pages: number;
  /** Links followed away from the start page (depth 0); null: no limit. */
  max_depth: number | null;
  /** robots.txt-style patterns on path and query: only matching URLs are listed. */
  include: string[];
  /** Same syntax: matching URLs are neither fetched nor listed. */
  exclude: string[];
  /** Query parameter names (with `*` wildcards) removed from every URL before it is queued or listed. */
  ignore_query_params: string[];
  /** Also queue the URLs of the sitemaps named by robots.txt `Sitemap:` lines. */
  sitemaps_from_robots: boolean;
  /** `<xhtml:link rel="alternate" hreflang>` entries for the page's hreflang links. */
  alternates: boolean;
  /** `<image:image>` entries for the page's `<img src>`. */
  images: boolean;
  /** This crawl's requests in flight, 1 to the server's --host-concurrency; null: the host cap. */
  max_concurrency: number | null;
  /** Least time between two of this crawl's request starts, ms. */
  delay_ms: number;
  /** Read pages through the browser: never, always, or when the start page shows it is needed. */
  render: RenderMode;
  /** Credentials for the start URL's origin (auth.ts); absent when none were given. */
  auth?: CrawlAuth;
  /**
   * The link report: broken links, redirects and the site's sitemap errors (links/); as an object,
   * also the links to other origins (`external`) and the resources pages load (`resources`),
   * checked once each (links/outside.ts). `true` is both false.
   */
  link_report: boolean | LinkChecks;
  /** `ignore`: robots.txt rules keep no URL out (its Crawl-delay and Sitemap lines still apply). */
  robots: Directive;
  /** `ignore`: pages are listed despite a noindex (meta or X-Robots-Tag); nofollow still holds. */
  noindex: Directive;
  /** Every URL of the crawled origin in the sitemap is written on this origin instead; null: as crawled. */
  public_origin: string | null;
  /** Also list in-scope documents search engines index (PDF, office formats, plain text). */
  documents: boolean;
  /** Publishing (jobs, sites, genapi crawl --output): URLs in one sitemap file, 1 to 50,000. */
  max_urls_per_file: number;
  /** Where the parts will be published (ends with /); null: the public origin plus /. */
  sitemap_base_url: string | null;
  /** The parts are written and served gzip-compressed, as sitemap-<n>.xml.gz. */
  gzip_files: boolean;
}

/** What the link report checks beyond the crawl's own links: `link_report`'s object form. */
export interface LinkChecks {
  external: boolean;
  resources: boolean;
}

export const LINK_REPORT_MESSAGE = 'link_report must be true, false or an object {"external": true|false, "resources": true|false}.';
export const LINK_REPORT_FIELDS_MESSAGE = "link_report takes only external and resources (true or false each).";
const LINK_CHECK_FIELDS = ["external", "resources"] as const;

/** The link report's checks beyond the origin: both off without the report or with `true`. */
export function linkChecksOf(options: Pick<CrawlOptions, "link_report">): LinkChecks {
  const value = options.link_report;
  return typeof value === "object" ? value : { external: false, resources: false };
}

/** Whether a crawl with these options makes a link report at all. */
export function hasLinkReport(options: Pick<CrawlOptions, "link_report">): boolean {
  return options.link_report !== false;
}

/** Whether a rule of the site is obeyed or, on its owner's word, ignored. */
export type Directive = "obey" | "ignore";
export const DIRECTIVES: Directive[] = ["obey", "ignore"];
/** The publishing fields, which only crawls that write files (jobs, sites, the CLI) take. */
export const PUBLISHING_FIELDS = ["max_urls_per_file", "sitemap_base_url", "gzip_files"] as const;
export const PUBLIC_ORIGIN_MESSAGE = "public_origin must be an http(s) origin such as https://www.example.com.";
export const SITEMAP_BASE_URL_MESSAGE =
  "sitemap_base_url must be an http(s) URL that ends with /, such as https://www.example.com/sitemaps/.";
/** sitemaps.org: URLs in one sitemap file. */
export const MAX_URLS_PER_FILE = 50_000;

export type RenderMode = "never" | "always" | "auto";
export const RENDER_MODES: RenderMode[] = ["never", "always", "auto"];
export const RENDER_UNAVAILABLE = "render is not available: no Chromium found on the server.";

/** delay_ms's upper bound. */
export const MAX_DELAY_MS = 60_000;

/** Bounds that the OpenAPI schemas (src/sitemap/model.ts) state too. */
export const MAX_PATTERNS = 50;
export const MAX_PATTERN_LENGTH = 2_048;
export const MAX_PARAM_NAME_LENGTH = 256;

export type ParsedCrawlOptions = { ok: true; options: CrawlOptions } | { ok: false; message: string };

export function defaultCrawlOptions(maxPagesCap: number): CrawlOptions {
  return {
    max_pages: maxPagesCap,
    max_depth: null,
    include: [],
    exclude: [],
    ignore_query_params: [],
    sitemaps_from_robots: false,
    alternates: false,
    images: false,
    max_concurrency: null,
    delay_ms: 0,
    render: "never",
    link_report: false,
    robots: "obey",
    noindex: "obey",
    public_origin: null,
    documents: false,
    max_urls_per_file: MAX_URLS_PER_FILE,
    sitemap_base_url: null,
    gzip_files: false,
  };
}

/**
 * The crawl options of a request body (a JSON object); fields it does not know, `url` among them,
 * are ignored. The first invalid field gives the 400 message, which names it.
 */
export function parseCrawlOptions(
  body: Record<string, unknown>,
  limits: {
    maxPagesCap: number;
    hostConcurrency: number;
    renderAvailable?: boolean;
    /** The crawl writes files (jobs, sites): the publishing fields are allowed. */
    publishes?: boolean;
    /** `ignore` needs `auth` (the API: only a site's owner holds its staging credentials); not the CLI. */
    ignoreNeedsAuth?: boolean;
  },
): ParsedCrawlOptions {
  const options = defaultCrawlOptions(limits.maxPagesCap);
  const { maxPagesCap, hostConcurrency } = limits;

  if (body.max_pages !== undefined) {
    const value = body.max_pages;
    if (!isInteger(value) || value < 1 || value > maxPagesCap) return invalid(`max_pages must be an integer from 1 to ${maxPagesCap}.`);
    options.max_pages = value;
  }
  if (body.max_depth !== undefined) {
    const value = body.max_depth;
    if (!isInteger(value) || value < 0) return invalid("max_depth must be an integer of 0 or more.");
    options.max_depth = value;
  }
  for (const field of ["include", "exclude"] as const) {
    if (body[field] === undefined) continue;
    const list = stringList(body[field], field, "patterns");
    if (typeof list === "string") return invalid(list);
    for (const [i, pattern] of list.entries()) {
      if (!pattern.startsWith("/") || pattern.length > MAX_PATTERN_LENGTH) {
        return invalid(`${field}[${i}] must be a pattern that starts with / and has at most ${MAX_PATTERN_LENGTH} characters.`);
      }
    }
    options[field] = list;
  }
  if (body.ignore_query_params !== undefined) {
    const list = stringList(body.ignore_query_params, "ignore_query_params", "parameter names");
    if (typeof list === "string") return invalid(list);
    for (const [i, name] of list.entries()) {
      if (name === "" || name.length > MAX_PARAM_NAME_LENGTH) {
        return invalid(`ignore_query_params[${i}] must be a parameter name of 1 to ${MAX_PARAM_NAME_LENGTH} characters.`);
      }
    }
    options.ignore_query_params = list;
  }
  for (const field of ["sitemaps_from_robots", "alternates", "images"] as const) {
    const value = body[field];
    if (value === undefined) continue;
    if (typeof value !== "boolean") return invalid(`${field} must be true or false.`);
    options[field] = value;
  }
  if (body.max_concurrency !== undefined) {
    const value = body.max_concurrency;
    if (!isInteger(value) || value < 1 || value > hostConcurrency) {
      return invalid(`max_concurrency must be an integer from 1 to ${hostConcurrency}.`);
    }
    options.max_concurrency = value;
  }
  if (body.delay_ms !== undefined) {
    const value = body.delay_ms;
    if (!isInteger(value) || value < 0 || value > MAX_DELAY_MS) return invalid(`delay_ms must be an integer from 0 to ${MAX_DELAY_MS}.`);
    options.delay_ms = value;
  }
  if (body.render !== undefined) {
    const value = body.render;
    if (typeof value !== "string" || !RENDER_MODES.includes(value as RenderMode))
      return invalid("render must be one of: never, always, auto.");
    if (value !== "never" && !limits.renderAvailable) return invalid(RENDER_UNAVAILABLE);
    options.render = value as RenderMode;
  }
  if (body.auth !== undefined) {
    const parsed = parseCrawlAuth(body.auth);
    if (!parsed.ok) return invalid(parsed.message);
    options.auth = parsed.auth;
  }
  if (body.link_report !== undefined) {
    const value = parseLinkReport(body.link_report);
    if (typeof value === "string") return invalid(value);
    options.link_report = value;
  }
  for (const field of ["robots", "noindex"] as const) {
    const value = body[field];
    if (value === undefined) continue;
    if (typeof value !== "string" || !DIRECTIVES.includes(value as Directive)) return invalid(`${field} must be one of: obey, ignore.`);
    if (value === "ignore" && limits.ignoreNeedsAuth && options.auth === undefined) return invalid(`${field} "ignore" needs auth.`);
    options[field] = value as Directive;
  }
  if (body.public_origin !== undefined) {
    const origin = parsePublicOrigin(body.public_origin);
    if (origin === null) return invalid(PUBLIC_ORIGIN_MESSAGE);
    options.public_origin = origin;
  }
  if (body.documents !== undefined) {
    if (typeof body.documents !== "boolean") return invalid("documents must be true or false.");
    options.documents = body.documents;
  }
  for (const field of PUBLISHING_FIELDS) {
    if (body[field] !== undefined && !limits.publishes) return invalid(`${field} is only for jobs.`);
  }
  if (body.max_urls_per_file !== undefined) {
    const value = body.max_urls_per_file;
    if (!isInteger(value) || value < 1 || value > MAX_URLS_PER_FILE)
      return invalid(`max_urls_per_file must be an integer from 1 to ${MAX_URLS_PER_FILE}.`);
    options.max_urls_per_file = value;
  }
  if (body.sitemap_base_url !== undefined) {
    const base = parseSitemapBaseUrl(body.sitemap_base_url);
    if (base === null) return invalid(SITEMAP_BASE_URL_MESSAGE);
    options.sitemap_base_url = base;
  }
  if (body.gzip_files !== undefined) {
    if (typeof body.gzip_files !== "boolean") return invalid("gzip_files must be true or false.");
    options.gzip_files = body.gzip_files;
  }
  return { ok: true, options };
}

/** `link_report`: a boolean, or the object of its checks (each key optional, false when absent); else the message refusing it. */
function parseLinkReport(value: unknown): boolean | LinkChecks | string {
  if (typeof value === "boolean") return value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return LINK_REPORT_MESSAGE;
  const checks: LinkChecks = { external: false, resources: false };
  for (const [key, flag] of Object.entries(value)) {
    if (!(LINK_CHECK_FIELDS as readonly string[]).includes(key)) return LINK_REPORT_FIELDS_MESSAGE;
    if (typeof flag !== "boolean") return `link_report.${key} must be true or false.`;
    checks[key as keyof LinkChecks] = flag;
  }
  return checks;
}

/** An http(s) origin, written `https://host[:port]` with or without a final `/`: its serialised origin, or null. */
export function parsePublicOrigin(value: unknown): string | null {
  const url = httpUrl(value);
  if (url === null || (url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "") return null;
  if ((value as string).includes("?") || (value as string).includes("#")) return null;
  return url.origin;
}

/** An http(s) URL ending with `/`, without query or fragment: normalised (host lower-cased, default port dropped), or null. */
export function parseSitemapBaseUrl(value: unknown): string | null {
  const url = httpUrl(value);
  if (url === null || !url.pathname.endsWith("/") || /[?#]/.test(value as string)) return null;
  return url.href;
}

function httpUrl(value: unknown): URL | null {
  if (typeof value !== "string" || value.length > 2_048) return null;
  const url = URL.parse(value);
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") return null;
  if (url.username !== "" || url.password !== "") return null;
  return url;
}

/**
 * What the sitemap files of a crawl with these options show: the extensions in use, and every URL
 * of the crawled origin (`crawledUrl`'s) on public_origin when one is set.
 */
export function sitemapFeatures(options: CrawlOptions, crawledUrl: string): SitemapFeatures {
  const features: SitemapFeatures = { alternates: options.alternates, images: options.images };
  if (options.public_origin) features.publicUrl = publicUrls(new URL(crawledUrl).origin, options.public_origin);
  return features;
}

/** Where the parts of a split sitemap will be published: sitemap_base_url, else the public origin (or the crawled one) plus `/`. */
export function partBaseUrl(options: CrawlOptions, crawledUrl: string): string {
  return options.sitemap_base_url ?? `${options.public_origin ?? new URL(crawledUrl).origin}/`;
}

/** The options as they may be shown or stored in clear: `auth` redacted (auth.ts), the rest as it is. */
export function redactCrawlOptions(options: CrawlOptions): CrawlOptions {
  return options.auth === undefined ? options : { ...options, auth: redactAuth(options.auth) };
}

const invalid = (message: string): ParsedCrawlOptions => ({ ok: false, message });

function isInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

/** The array of strings, or the message refusing it. */
function stringList(value: unknown, field: string, what: string): string[] | string {
  const message = `${field} must be an array of at most ${MAX_PATTERNS} ${what} (strings).`;
  if (!Array.isArray(value) || value.length > MAX_PATTERNS) return message;
  if (!value.every((item): item is string => typeof item === "string")) return message;
  return value;
}
