// The whole configuration of `genapi serve`, in one table: each option's flag, environment
// variables, default and validation live together, and `--help` is printed from the same table.
import { join } from "node:path";
import { parseAllowTarget, type AllowedTarget } from "../crawler/index.ts";
import { parseTrustedProxies, type TrustedProxies } from "../quota/client-address.ts";

export interface ServeConfig {
  port: number;
  host: string;
  dbPath: string;
  trustProxy: TrustedProxies;
  freeDailyLimit: number;
  maxPages: number;
  crawlTimeoutSeconds: number;
  maxCrawls: number;
  crawlQueue: number;
  allowPrivateTargets: boolean;
  allowTargets: AllowedTarget[];
  jobMaxPages: number;
  jobTimeoutSeconds: number;
  maxJobs: number;
  jobQueue: number;
  jobRetentionDays: number;
  jobLeaseSeconds: number;
  hostConcurrency: number;
  hostDelayMs: number;
  chromium: string | null;
  renderTabs: number;
  renderTimeoutSeconds: number;
  secretKeyFile: string | null;
  /** --site-scheduler: this instance starts sites' runs when they fall due. */
  siteScheduler: boolean;
}

/** A bad flag or value; the CLI prints its message on one line and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

type Env = Record<string, string | undefined>;

interface OptionSpec<T> {
  flag: string;
  env: string[];
  value?: string; // the placeholder in --help; absent for switches
  help: string;
  multiple?: boolean;
  /** What separates the values of a `multiple` option in its variable (default ","). */
  separator?: string;
  fallback: (env: Env) => T;
  parse: (text: string, name: string) => T;
}

const integer = (min: number, max: number) => (text: string, name: string) => {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) {
    throw new UsageError(`${name} must be an integer from ${min} to ${max} (got "${text}")`);
  }
  return Number(text);
};

const nonEmpty = (text: string, name: string) => {
  if (text.trim() === "") throw new UsageError(`${name} must not be empty`);
  return text;
};

/**
 * A path that may be left unset: an empty environment variable (`GENAPI_CHROMIUM=` in the env
 * file's examples) means the default, an empty flag value is a mistake.
 */
const optionalPath = (text: string, name: string): string | null => {
  if (text.trim() === "" && !name.startsWith("--")) return null;
  return nonEmpty(text, name);
};

const boolean = (text: string, name: string) => {
  const value = text.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(value)) return true;
  if (["0", "false", "no", "off", ""].includes(value)) return false;
  throw new UsageError(`${name} must be true or false (got "${text}")`);
};

const guarded =
  <T>(parse: (text: string) => T) =>
  (text: string, name: string): T => {
    try {
      return parse(text);
    } catch (error) {
      throw new UsageError(`${name}: ${(error as Error).message}`);
    }
  };

/** The database file: `$STATE_DIRECTORY/genapi.db` under systemd, else `./genapi.db`. */
export function defaultDbPath(env: Env): string {
  const stateDir = env.STATE_DIRECTORY?.split(":")[0];
  return stateDir ? join(stateDir, "genapi.db") : "genapi.db";
}

export const dbOption: OptionSpec<string> = {
  flag: "db",
  env: ["GENAPI_DB"],
  value: "PATH|URL",
  help: "SQLite database file, created if missing in an existing directory (default ./genapi.db, or $STATE_DIRECTORY/genapi.db under systemd), or a postgresql:// URL shared by several instances",
  fallback: defaultDbPath,
  parse: nonEmpty,
};

// Politeness toward crawled hosts, the same flags for serve and crawl (serve's hold for every
// process on the store, crawl's within its own process).
const hostConcurrencyOption: OptionSpec<number> = {
  flag: "host-concurrency",
  env: ["GENAPI_HOST_CONCURRENCY"],
  value: "N",
  help: "requests in flight to one host from every crawl at once (default 4, 1 to 64)",
  fallback: () => 4,
  parse: integer(1, 64),
};

const hostDelayOption: OptionSpec<number> = {
  flag: "host-delay",
  env: ["GENAPI_HOST_DELAY"],
  value: "MS",
  help: "least time between two request starts to one host, ms; robots.txt's Crawl-delay raises it (default 0)",
  fallback: () => 0,
  parse: integer(0, 60_000),
};

// Rendering with the system's Chromium: the same --chromium for serve and crawl.
const chromiumOption: OptionSpec<string | null> = {
  flag: "chromium",
  env: ["GENAPI_CHROMIUM"],
  value: "PATH",
  help: "the Chromium that renders pages (default: the first of chromium, chromium-browser, google-chrome-stable, google-chrome on PATH)",
  fallback: () => null,
  parse: optionalPath,
};

const serveSpecs = {
  port: {
    flag: "port",
    env: ["GENAPI_PORT", "PORT"],
    value: "N",
    help: "TCP port to listen on; 0 picks a free one (default 8080)",
    fallback: () => 8080,
    parse: integer(0, 65535),
  },
  host: {
    flag: "host",
    env: ["GENAPI_HOST"],
    value: "ADDR",
    help: "address to listen on (default 0.0.0.0)",
    fallback: () => "0.0.0.0",
    parse: nonEmpty,
  },
  dbPath: dbOption,
  trustProxy: {
    flag: "trust-proxy",
    env: ["GENAPI_TRUST_PROXY"],
    value: "CIDRS",
    help: "comma-separated proxies whose X-Forwarded-For is believed (default none)",
    fallback: () => parseTrustedProxies([]),
    parse: guarded((text) => parseTrustedProxies(text)),
  },
  freeDailyLimit: {
    flag: "free-daily-limit",
    env: ["GENAPI_FREE_DAILY_LIMIT"],
    value: "N",
    help: "requests per client address per UTC day for free keys (default 5)",
    fallback: () => 5,
    parse: integer(1, 10_000_000),
  },
  maxPages: {
    flag: "max-pages",
    env: ["GENAPI_MAX_PAGES"],
    value: "N",
    help: "page requests per crawl, redirect hops included (default 500, at most 50000)",
    fallback: () => 500,
    parse: integer(1, 50_000),
  },
  crawlTimeoutSeconds: {
    flag: "crawl-timeout",
    env: ["GENAPI_CRAWL_TIMEOUT"],
    value: "SECONDS",
    help: "time budget of one crawl (default 60)",
    fallback: () => 60,
    parse: integer(1, 3600),
  },
  maxCrawls: {
    flag: "max-crawls",
    env: ["GENAPI_MAX_CRAWLS"],
    value: "N",
    help: "crawls running at once (default 4)",
    fallback: () => 4,
    parse: integer(1, 1000),
  },
  crawlQueue: {
    flag: "crawl-queue",
    env: ["GENAPI_CRAWL_QUEUE"],
    value: "N",
    help: "crawls that may wait for a slot; beyond that 503 (default 16)",
    fallback: () => 16,
    parse: integer(0, 100_000),
  },
  allowPrivateTargets: {
    flag: "allow-private-targets",
    env: ["GENAPI_ALLOW_PRIVATE_TARGETS"],
    help: "let the crawler reach loopback and private addresses: for local testing, NEVER in production",
    fallback: () => false,
    parse: boolean,
  },
  allowTargets: {
    flag: "allow-target",
    env: ["GENAPI_ALLOW_TARGETS"],
    value: "HOST[:PORT]",
    help: "repeatable: a private host the crawler may reach (no port: any port)",
    multiple: true,
    fallback: () => [],
    parse: guarded((text) => parseAllowTarget(text)),
  },
  jobMaxPages: {
    flag: "job-max-pages",
    env: ["GENAPI_JOB_MAX_PAGES"],
    value: "N",
    help: "page requests per crawl job, redirect hops included (default 100000, at most 1000000)",
    fallback: () => 100_000,
    parse: integer(1, 1_000_000),
  },
  jobTimeoutSeconds: {
    flag: "job-timeout",
    env: ["GENAPI_JOB_TIMEOUT"],
    value: "SECONDS",
    help: "crawl time of one job, over all its attempts (default 3600)",
    fallback: () => 3600,
    parse: integer(1, 30 * 86_400),
  },
  maxJobs: {
    flag: "max-jobs",
    env: ["GENAPI_MAX_JOBS"],
    value: "N",
    help: "crawl jobs this process runs at once; 0: it only serves them (default 2)",
    fallback: () => 2,
    parse: integer(0, 1000),
  },
  jobQueue: {
    flag: "job-queue",
    env: ["GENAPI_JOB_QUEUE"],
    value: "N",
    help: "jobs that may wait in the store; beyond that 503 (default 1000)",
    fallback: () => 1000,
    parse: integer(0, 1_000_000),
  },
  jobRetentionDays: {
    flag: "job-retention",
    env: ["GENAPI_JOB_RETENTION"],
    value: "DAYS",
    help: "days a finished job and its result are kept (default 7)",
    fallback: () => 7,
    parse: integer(1, 3650),
  },
  jobLeaseSeconds: {
    flag: "job-lease",
    env: ["GENAPI_JOB_LEASE"],
    value: "SECONDS",
    help: "how long a running job stays claimed after its process stops renewing it (default 60)",
    fallback: () => 60,
    parse: integer(2, 3600),
  },
  hostConcurrency: hostConcurrencyOption,
  hostDelayMs: hostDelayOption,
  chromium: chromiumOption,
  renderTabs: {
    flag: "render-tabs",
    env: ["GENAPI_RENDER_TABS"],
    value: "N",
    help: "pages rendered at once by this process (default 2)",
    fallback: () => 2,
    parse: integer(1, 64),
  },
  renderTimeoutSeconds: {
    flag: "render-timeout",
    env: ["GENAPI_RENDER_TIMEOUT"],
    value: "SECONDS",
    help: "time one page may take to render (default 15)",
    fallback: () => 15,
    parse: integer(1, 300),
  },
  secretKeyFile: {
    flag: "secret-key-file",
    env: ["GENAPI_SECRET_KEY_FILE"],
    value: "PATH",
    help: "32 random bytes in base64 (openssl rand -base64 32) that seal the credentials of jobs with auth; the same file on every instance of one PostgreSQL (default with SQLite: genapi.secret beside the database, created on first need; with PostgreSQL: none, and jobs with auth are refused)",
    fallback: () => null,
    parse: optionalPath,
  },
  siteScheduler: {
    flag: "site-scheduler",
    env: ["GENAPI_SITE_SCHEDULER"],
    value: "on|off",
    help: "on: this instance starts sites' runs when they fall due (each due run starts once, on one instance of a shared store); off: it still serves sites and runs the jobs others queue (default on)",
    fallback: () => true,
    parse: (text: string, name: string) => {
      if (text !== "on" && text !== "off") throw new UsageError(`${name} must be one of: on, off (got "${text}")`);
      return text === "on";
    },
  },
} satisfies { [K in keyof ServeConfig]: OptionSpec<ServeConfig[K] | AllowedTarget> };

/** `genapi crawl URL`: the crawl options as flags, plus where and how the result is written. */
export interface CrawlCommandConfig {
  output: string | null;
  maxPages: number;
  crawlTimeoutSeconds: number;
  maxDepth: number | null;
  include: string[];
  exclude: string[];
  ignoreQueryParams: string[];
  sitemapsFromRobots: boolean;
  alternates: boolean;
  images: boolean;
  hostConcurrency: number;
  hostDelayMs: number;
  maxConcurrency: number | null;
  delayMs: number;
  authUser: string | null;
  headers: { name: string; value: string }[];
  cookies: { name: string; value: string }[];
  json: boolean;
  quiet: boolean;
  render: string;
  chromium: string | null;
  /** --link-report FILE: crawl with link_report and write its full lists there. */
  linkReport: string | null;
  /** --check-external: the link report checks links to other origins too (needs --link-report). */
  checkExternal: boolean;
  /** --check-resources: the link report checks the images, scripts, stylesheets and media pages load (needs --link-report). */
  checkResources: boolean;
  robots: string;
  noindex: string;
  publicOrigin: string | null;
  documents: boolean;
  maxUrlsPerFile: number;
  sitemapBaseUrl: string | null;
  gzip: boolean;
}

/** `genapi crawl --max-pages` at most: the jobs' cap; the whole crawl state is in memory. */
export const CRAWL_COMMAND_MAX_PAGES = 1_000_000;

// The crawl's page and time flags share serve's variables (GENAPI_MAX_PAGES, GENAPI_CRAWL_TIMEOUT):
// one flag name, one variable. The values the crawl options check again (src/crawler/options.ts) are
// only typed here; commands/crawl.ts turns that module's messages into flag errors.
const crawlSpecs = {
  output: {
    flag: "output",
    env: ["GENAPI_OUTPUT"],
    value: "FILE",
    help: "write the sitemap to FILE (default standard output); past 50,000 URLs or 50 MB, FILE is a sitemap index and the parts go beside it as <stem>-1.xml, <stem>-2.xml, ..., listed as <crawled origin>/<stem>-N.xml",
    fallback: () => null,
    parse: nonEmpty,
  },
  maxPages: {
    flag: "max-pages",
    env: ["GENAPI_MAX_PAGES"],
    value: "N",
    help: `page requests of the crawl, redirect hops included (default 100000, at most ${CRAWL_COMMAND_MAX_PAGES})`,
    fallback: () => 100_000,
    parse: integer(1, CRAWL_COMMAND_MAX_PAGES),
  },
  crawlTimeoutSeconds: {
    flag: "crawl-timeout",
    env: ["GENAPI_CRAWL_TIMEOUT"],
    value: "SECONDS",
    help: "time budget of the crawl; what was found by then is written, truncated (default 3600)",
    fallback: () => 3600,
    parse: integer(1, 30 * 86_400),
  },
  maxDepth: {
    flag: "max-depth",
    env: ["GENAPI_MAX_DEPTH"],
    value: "N",
    help: "links followed away from the start page, which is depth 0 (default no limit)",
    fallback: () => null,
    parse: (text: string, name: string) => {
      if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(Number(text))) {
        throw new UsageError(`${name} must be an integer of 0 or more (got "${text}")`);
      }
      return Number(text);
    },
  },
  include: {
    flag: "include",
    env: ["GENAPI_INCLUDE"],
    value: "PATTERN",
    help: "repeatable: list only URLs whose path and query match this robots.txt-style pattern (/blog/*, /*.pdf$); others are still crawled for links",
    multiple: true,
    fallback: () => [],
    parse: nonEmpty,
  },
  exclude: {
    flag: "exclude",
    env: ["GENAPI_EXCLUDE"],
    value: "PATTERN",
    help: "repeatable: neither fetch nor list URLs that match this pattern",
    multiple: true,
    fallback: () => [],
    parse: nonEmpty,
  },
  ignoreQueryParams: {
    flag: "ignore-query-param",
    env: ["GENAPI_IGNORE_QUERY_PARAMS"],
    value: "NAME",
    help: "repeatable: drop this query parameter from every URL (utm_* matches a prefix; * drops every query)",
    multiple: true,
    fallback: () => [],
    parse: nonEmpty,
  },
  sitemapsFromRobots: {
    flag: "sitemaps-from-robots",
    env: ["GENAPI_SITEMAPS_FROM_ROBOTS"],
    help: "also queue the URLs of the site's sitemaps named in robots.txt",
    fallback: () => false,
    parse: boolean,
  },
  alternates: {
    flag: "alternates",
    env: ["GENAPI_ALTERNATES"],
    help: "list each page's hreflang alternates (<xhtml:link>)",
    fallback: () => false,
    parse: boolean,
  },
  images: {
    flag: "images",
    env: ["GENAPI_IMAGES"],
    help: "list each page's images (<image:image>)",
    fallback: () => false,
    parse: boolean,
  },
  hostConcurrency: hostConcurrencyOption,
  hostDelayMs: hostDelayOption,
  render: {
    flag: "render",
    env: ["GENAPI_RENDER"],
    value: "MODE",
    help: "read pages through Chromium: never, always, or auto (when the start page shows links only the browser sees; default never)",
    fallback: () => "never",
    parse: (text: string, name: string) => {
      if (!["never", "always", "auto"].includes(text)) throw new UsageError(`${name} must be one of: never, always, auto (got "${text}")`);
      return text;
    },
  },
  chromium: chromiumOption,
  maxConcurrency: {
    flag: "max-concurrency",
    env: ["GENAPI_MAX_CONCURRENCY"],
    value: "N",
    help: "this crawl's requests in flight, at most --host-concurrency (default: that)",
    fallback: () => null,
    parse: integer(1, 64),
  },
  delayMs: {
    flag: "delay-ms",
    env: ["GENAPI_DELAY_MS"],
    value: "MS",
    help: "least time between two of this crawl's request starts, ms (default 0)",
    fallback: () => 0,
    parse: integer(0, 60_000),
  },
  // Credentials for the start URL's origin (commands/crawl.ts checks them as the API does). Their
  // messages never repeat a value; variables keep values out of `ps` and the shell history.
  authUser: {
    flag: "auth-user",
    env: ["GENAPI_AUTH_USER"],
    value: "USER",
    help: "basic auth user for the start URL's origin; the password comes from GENAPI_AUTH_PASSWORD, else it is asked at the terminal without echo",
    fallback: () => null,
    parse: (text: string) => text,
  },
  headers: {
    flag: "header",
    env: ["GENAPI_HEADERS"],
    value: "'NAME: VALUE'",
    help: "repeatable: a request header for the start URL's origin only (the variable: one header per line)",
    multiple: true,
    separator: "\n",
    fallback: () => [],
    parse: (text: string, name: string) => split(text, ":", `${name} must be 'Name: value'`),
  },
  cookies: {
    flag: "cookie",
    env: ["GENAPI_COOKIES"],
    value: "'NAME=VALUE'",
    help: "repeatable: a cookie for the start URL's origin only (the variable: one cookie per line)",
    multiple: true,
    separator: "\n",
    fallback: () => [],
    parse: (text: string, name: string) => split(text, "=", `${name} must be 'name=value'`),
  },
  json: {
    flag: "json",
    env: ["GENAPI_JSON"],
    help: 'print the crawl report as JSON on stderr instead of the summary line; a failure as {"success": false, "message": "..."}',
    fallback: () => false,
    parse: boolean,
  },
  quiet: {
    flag: "quiet",
    env: ["GENAPI_QUIET"],
    help: "no progress line and no summary line",
    fallback: () => false,
    parse: boolean,
  },
  linkReport: {
    flag: "link-report",
    env: ["GENAPI_LINK_REPORT"],
    value: "FILE",
    help: "also write the link report to FILE as JSON: every broken link and redirect met in scope, with up to 5 referring pages each, and with --sitemaps-from-robots the site's sitemap errors (the lists whole, not cut to 1,000)",
    fallback: () => null,
    parse: nonEmpty,
  },
  checkExternal: {
    flag: "check-external",
    env: ["GENAPI_CHECK_EXTERNAL"],
    help: "with --link-report: also check each distinct link to another origin once (HEAD, GET after 405/501; no credentials, never followed; at most 10,000 a crawl)",
    fallback: () => false,
    parse: boolean,
  },
  checkResources: {
    flag: "check-resources",
    env: ["GENAPI_CHECK_RESOURCES"],
    help: "with --link-report: also check each distinct image (src, srcset), stylesheet, script, source, video (src, poster) and audio URL of the pages once",
    fallback: () => false,
    parse: boolean,
  },
  // Staging and publishing: the API's fields, checked by its rules (commands/crawl.ts).
  robots: {
    flag: "robots",
    env: ["GENAPI_ROBOTS"],
    value: "obey|ignore",
    help: "ignore: robots.txt rules keep no URL out (its Crawl-delay and Sitemap lines still apply), for a staging site of your own (default obey)",
    fallback: () => "obey",
    parse: oneOf(["obey", "ignore"]),
  },
  noindex: {
    flag: "noindex",
    env: ["GENAPI_NOINDEX"],
    value: "obey|ignore",
    help: "ignore: list pages despite a noindex meta tag or X-Robots-Tag (nofollow still holds) (default obey)",
    fallback: () => "obey",
    parse: oneOf(["obey", "ignore"]),
  },
  publicOrigin: {
    flag: "public-origin",
    env: ["GENAPI_PUBLIC_ORIGIN"],
    value: "URL",
    help: "write every URL of the crawled origin in the sitemap on this origin instead (https://www.example.com): crawl staging, list production",
    fallback: () => null,
    parse: nonEmpty,
  },
  documents: {
    flag: "documents",
    env: ["GENAPI_DOCUMENTS"],
    help: "also list the site's documents (PDF, Word, Excel, PowerPoint, OpenDocument, RTF, plain text) that answer 200 without X-Robots-Tag noindex",
    fallback: () => false,
    parse: boolean,
  },
  maxUrlsPerFile: {
    flag: "max-urls-per-file",
    env: ["GENAPI_MAX_URLS_PER_FILE"],
    value: "N",
    help: "URLs in one sitemap file, 1 to 50000 (default 50000): past it, --output is an index and the parts go beside it",
    fallback: () => 50_000,
    parse: integer(1, 50_000),
  },
  sitemapBaseUrl: {
    flag: "sitemap-base-url",
    env: ["GENAPI_SITEMAP_BASE_URL"],
    value: "URL",
    help: "where the parts will be published, ending with / (default the crawled origin, or --public-origin, plus /): the index lists <URL><stem>-N.xml",
    fallback: () => null,
    parse: nonEmpty,
  },
  gzip: {
    flag: "gzip",
    env: ["GENAPI_GZIP"],
    help: "write the parts gzip-compressed as <stem>-N.xml.gz (the index stays plain XML)",
    fallback: () => false,
    parse: boolean,
  },
} satisfies {
  [K in keyof CrawlCommandConfig]: OptionSpec<CrawlCommandConfig[K] | CrawlCommandConfig["headers"][number] | string | number>;
};

/** A value that must be one of `choices`. */
function oneOf(choices: string[]) {
  return (text: string, name: string) => {
    if (!choices.includes(text)) throw new UsageError(`${name} must be one of: ${choices.join(", ")} (got "${text}")`);
    return text;
  };
}

/** "Name: value" or "name=value", each side trimmed; the message (which holds no value) when there is no name. */
function split(text: string, separator: string, message: string): { name: string; value: string } {
  const at = text.indexOf(separator);
  const name = at < 0 ? "" : text.slice(0, at).trim();
  if (name === "") throw new UsageError(message);
  return { name, value: text.slice(at + 1).trim() };
}

type Specs = Record<string, OptionSpec<unknown>>;

export const crawlCommandOptions = () => parseArgsOptions(crawlSpecs);

export function resolveCrawlCommandConfig(flags: Parameters<typeof resolveOptions>[1], env: Env): CrawlCommandConfig {
  return resolveOptions(crawlSpecs, flags, env) as unknown as CrawlCommandConfig;
}

export const crawlOptionHelp = () => optionHelp(crawlSpecs);

/** Options for node:util parseArgs, derived from a spec table. */
export function parseArgsOptions(specs: Specs) {
  return Object.fromEntries(
    Object.values(specs).map((spec) => [spec.flag, { type: spec.value ? "string" : "boolean", multiple: spec.multiple ?? false } as const]),
  );
}

/** Resolves every option: the flag beats its environment variable, which beats the default. */
export function resolveOptions<S extends Specs>(
  specs: S,
  flags: Record<string, string | boolean | (string | boolean)[] | undefined>,
  env: Env,
): { [K in keyof S]: unknown } {
  const result: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(specs)) {
    const flagValue = flags[spec.flag];
    const envName = spec.env.find((name) => env[name] !== undefined);
    if (flagValue !== undefined) {
      const values = Array.isArray(flagValue) ? flagValue : [flagValue];
      const parsed = values.map((v) => (typeof v === "boolean" ? v : spec.parse(v, `--${spec.flag}`)));
      result[key] = spec.multiple ? parsed : parsed[0];
    } else if (envName !== undefined) {
      const text = env[envName]!;
      result[key] = spec.multiple
        ? text
            .split(spec.separator ?? ",")
            .filter((part) => part.trim() !== "")
            .map((part) => spec.parse(part.trim(), envName))
        : spec.parse(text, envName);
    } else {
      result[key] = spec.fallback(env);
    }
  }
  return result as { [K in keyof S]: unknown };
}

export const serveOptions = parseArgsOptions(serveSpecs);

export function resolveServeConfig(flags: Parameters<typeof resolveOptions>[1], env: Env): ServeConfig {
  return resolveOptions(serveSpecs, flags, env) as unknown as ServeConfig;
}

/** The option lines of --help, aligned. */
export function optionHelp(specs: Specs = serveSpecs): string {
  const rows = Object.values(specs).map((spec) => [
    `--${spec.flag}${spec.value ? ` ${spec.value}` : ""}`,
    `${spec.help} [${spec.env.join(", ")}]`,
  ]);
  const width = Math.max(...rows.map(([left]) => left!.length));
  return rows.map(([left, right]) => `  ${left!.padEnd(width)}  ${right}`).join("\n");
}
