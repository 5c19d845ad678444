// `genapi crawl URL`: the API's crawl engine, options, report and sitemap writer, run from a terminal
// with the user's own rights (no server, database, key or address guard refusal). This module adds
// only what a command needs: flags to crawl options, the output files, the progress line, Ctrl-C.
//
// Exit codes: 0 a sitemap was written (truncated or not), 1 the crawl failed (the message
// /api/generate would answer with) or the result could not be written, 2 a bad flag or value,
// 130 interrupted (what was found is written first).
import { accessSync, constants, statSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { CRAWL_COMMAND_MAX_PAGES, UsageError, type CrawlCommandConfig } from "../config/config.ts";
import {
  hasLinkReport,
  Browser,
  type CrawlAuth,
  type CrawlOptions,
  type CrawlReport,
  type CrawlRun,
  crawlErrorAnswer,
  crawlReport,
  createCrawlNetwork,
  cutLinkReport,
  type LinkCounts,
  type LinkReport,
  defaultCrawlLimits,
  findChromium,
  INVALID_URL_MESSAGE,
  MemoryCrawlState,
  parseCrawlAuth,
  parseCrawlOptions,
  parseTargetUrl,
  partBaseUrl,
  runCrawl,
  sitemapFeatures,
  SITEMAP_MAX_BYTES,
  type WrittenSitemap,
  writeLinkLists,
  writeSitemap,
  MAX_LIST_ENTRIES,
} from "../crawler/index.ts";
import { USER_AGENT } from "../config/version.ts";
import { apiErrorBody } from "../http/errors.ts";
import { createProgressLine, formatElapsed, pagesPerSecond, REDRAW_EVERY_MS } from "./progress.ts";
import { askPassword, PromptCancelledError } from "./password-prompt.ts";

export interface CrawlCommandIo {
  stderr: (text: string) => void;
  /** Resolves once the text is written (the sitemap can be 50 MB; the process exits right after). */
  writeStdout: (text: string) => Promise<unknown>;
  writeFile: (path: string, data: string | Uint8Array) => Promise<unknown>;
  /** Whether stderr is a terminal, and its width: the progress line is drawn only then. */
  stderrIsTTY: boolean;
  columns: () => number | undefined;
  /** Registers the Ctrl-C handler; returns its removal. */
  onInterrupt: (handler: () => void) => () => void;
  /** A second Ctrl-C: leave at once. */
  exit: (code: number) => never;
  /**
   * The --auth-user password: GENAPI_AUTH_PASSWORD, else asked at the terminal without echo;
   * null when there is neither (no terminal to ask at).
   */
  password: (user: string) => Promise<string | null>;
}

export const EXIT_INTERRUPTED = 130;

/** The flag that sets each crawl option, to name it in an error. */
const FLAG_OF: Record<string, string> = {
  max_pages: "--max-pages",
  max_depth: "--max-depth",
  include: "--include",
  exclude: "--exclude",
  ignore_query_params: "--ignore-query-param",
  max_concurrency: "--max-concurrency",
  delay_ms: "--delay-ms",
  render: "--render",
  public_origin: "--public-origin",
  max_urls_per_file: "--max-urls-per-file",
  sitemap_base_url: "--sitemap-base-url",
};

/** The Chromium the crawl would render with: --chromium's (a missing one is a flag error), else one on PATH. */
function chromiumOf(config: CrawlCommandConfig): string | null {
  const found = findChromium(config.chromium);
  if (found === null && config.chromium !== null) throw new UsageError(`--chromium: no browser at ${config.chromium}`);
  return found;
}

/** link_report of the flags: --check-external and --check-resources need --link-report FILE. */
function linkReportOf(config: CrawlCommandConfig): boolean | { external: boolean; resources: boolean } {
  const checks = { external: config.checkExternal, resources: config.checkResources };
  if (config.linkReport === null) {
    if (checks.external || checks.resources)
      throw new UsageError(`${checks.external ? "--check-external" : "--check-resources"} needs --link-report FILE`);
    return false;
  }
  return checks.external || checks.resources ? checks : true;
}

/** The crawl options of the flags, checked by the API's own rules; a refusal is a flag error. */
export function crawlOptionsOf(config: CrawlCommandConfig): CrawlOptions {
  const parsed = parseCrawlOptions(
    {
      max_pages: config.maxPages,
      max_depth: config.maxDepth ?? undefined,
      include: config.include,
      exclude: config.exclude,
      ignore_query_params: config.ignoreQueryParams,
      sitemaps_from_robots: config.sitemapsFromRobots,
      alternates: config.alternates,
      images: config.images,
      max_concurrency: config.maxConcurrency ?? undefined,
      delay_ms: config.delayMs,
      render: config.render,
      link_report: linkReportOf(config),
      robots: config.robots,
      noindex: config.noindex,
      public_origin: config.publicOrigin ?? undefined,
      documents: config.documents,
      max_urls_per_file: config.maxUrlsPerFile,
      sitemap_base_url: config.sitemapBaseUrl ?? undefined,
      gzip_files: config.gzip,
    },
    {
      maxPagesCap: CRAWL_COMMAND_MAX_PAGES,
      hostConcurrency: config.hostConcurrency,
      renderAvailable: chromiumOf(config) !== null,
      publishes: true,
    },
  );
  if (parsed.ok) return parsed.options;
  const field = /^[a-z_]+/.exec(parsed.message)?.[0] ?? "";
  throw new UsageError(`${FLAG_OF[field] ?? field}: ${parsed.message}`);
}

/** The file names of --output: the parts go beside FILE as <stem>-1.xml, <stem>-2.xml, ... (with --gzip, <stem>-1.xml.gz, ...) */
export function outputFiles(output: string, gzipped = false) {
  const stem = basename(output, extname(output)) || basename(output);
  const partName = (n: number) => `${stem}-${n}.xml${gzipped ? ".gz" : ""}`;
  return { stem, partPath: (n: number) => join(dirname(output), partName(n)), partName };
}

function checkOutputDirectory(output: string, flag = "--output"): void {
  const dir = dirname(output);
  try {
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
    accessSync(dir, constants.W_OK);
  } catch {
    throw new UsageError(`${flag}: cannot write in directory "${dir}"`);
  }
}

/** The result needs an index and parts, which standard output cannot hold. */
class NeedsOutputError extends Error {
  override name = "NeedsOutputError";
}

const needsOutput = (maxUrls: number) =>
  `the sitemap is larger than one file may be (${maxUrls.toLocaleString("en-US")} URLs, ${SITEMAP_MAX_BYTES / 2 ** 20} MB): ` +
  "run again with --output FILE to write a sitemap index and its parts";

/**
 * Option `auth` of --auth-user, --header and --cookie, checked by the API's rules; the password is
 * asked for last, once every flag is known to be good. Messages name the flag, never a value.
 */
export async function crawlAuthOf(config: CrawlCommandConfig, io: Pick<CrawlCommandIo, "password">): Promise<CrawlAuth | undefined> {
  const auth: CrawlAuth = {};
  if (config.headers.length > 0) auth.headers = uniqueNames(config.headers, "--header", (name) => name.toLowerCase());
  if (config.cookies.length > 0) auth.cookies = uniqueNames(config.cookies, "--cookie", (name) => name);
  if (auth.headers) {
    const parsed = parseCrawlAuth({ headers: auth.headers });
    if (!parsed.ok) {
      const named = /^auth\.headers: (.*) cannot be set\.$/.exec(parsed.message);
      throw new UsageError(
        named
          ? `--header: ${named[1]} cannot be set`
          : `--header: a name must be an HTTP token and a value visible ASCII, at most 4096 characters each, at most 20 headers`,
      );
    }
  }
  if (auth.cookies && !parseCrawlAuth({ cookies: auth.cookies }).ok) {
    throw new UsageError(
      `--cookie: a name must be an HTTP token and a value visible ASCII without ";" or spaces, at most 4096 characters each, at most 50 cookies`,
    );
  }
  if (config.authUser !== null) {
    const user = config.authUser;
    if (!parseCrawlAuth({ basic: { username: user, password: "" } }).ok) {
      throw new UsageError(`--auth-user: a user name of at most 4096 characters, without ":" or control characters`);
    }
    let password: string | null;
    try {
      password = await io.password(user);
    } catch (error) {
      if (error instanceof PromptCancelledError) throw new UsageError(`--auth-user: ${error.message}`);
      throw error;
    }
    if (password === null) {
      throw new UsageError("--auth-user needs a password: set GENAPI_AUTH_PASSWORD, or run at a terminal to be asked for it");
    }
    if (!parseCrawlAuth({ basic: { username: user, password } }).ok) {
      throw new UsageError("--auth-user: the password must have at most 4096 characters and no control characters");
    }
    auth.basic = { username: user, password };
  }
  return Object.keys(auth).length > 0 ? auth : undefined;
}

/** name -> value; a name given twice (as `key` compares names) is a flag error. */
function uniqueNames(pairs: { name: string; value: string }[], flag: string, key: (name: string) => string): Record<string, string> {
  const seen = new Set<string>();
  const out: Record<string, string> = {};
  for (const { name, value } of pairs) {
    if (seen.has(key(name))) throw new UsageError(`${flag}: ${name} is given twice`);
    seen.add(key(name));
    out[name] = value;
  }
  return out;
}

export async function runCrawlCommand(rawUrl: string | undefined, config: CrawlCommandConfig, io: CrawlCommandIo): Promise<number> {
  if (rawUrl === undefined) throw new UsageError("crawl needs a URL: genapi crawl https://example.com/");
  const url = parseTargetUrl(rawUrl);
  if (url === null) throw new UsageError(`URL "${rawUrl}": ${INVALID_URL_MESSAGE}`);
  const options = crawlOptionsOf(config);
  if (config.output !== null) checkOutputDirectory(config.output);
  const auth = await crawlAuthOf(config, io);
  if (auth) options.auth = auth;
  if (config.linkReport !== null) checkOutputDirectory(config.linkReport, "--link-report");

  const stop = new AbortController();
  let interrupted = false;
  const removeInterrupt = io.onInterrupt(() => {
    if (interrupted) io.exit(EXIT_INTERRUPTED);
    interrupted = true;
    stop.abort();
  });
  const progress = io.stderrIsTTY && !config.quiet ? createProgressLine(io.stderr, { columns: io.columns }) : null;
  const state = new MemoryCrawlState({ linkReport: hasLinkReport(options) });
  const limits = { ...defaultCrawlLimits, maxPages: config.maxPages, timeoutMs: config.crawlTimeoutSeconds * 1000 };
  // The user's own rights: every address may be crawled, as with `serve --allow-private-targets`.
  // Politeness within this process: no store to share hosts with other processes.
  const fetch = createCrawlNetwork({
    policy: { allowPrivate: true, allowTargets: [] },
    politeness: { hostConcurrency: config.hostConcurrency, hostDelayMs: config.hostDelayMs },
  });
  const chromium = options.render === "never" ? null : chromiumOf(config);
  const renderer =
    chromium === null
      ? null
      : {
          // The user's own Chromium, sandboxed unless GENAPI_CHROMIUM_NO_SANDBOX=1 (root in a container).
          // What it has to say (a page that failed, a restart, a refused escape) goes to stderr.
          browser: new Browser({
            executable: chromium,
            tabs: 2,
            noSandbox: process.env.GENAPI_CHROMIUM_NO_SANDBOX === "1",
            log: (message) => {
              progress?.clear();
              io.stderr(`genapi: ${message}\n`);
            },
          }),
          timeoutMs: 15_000,
        };
  let run: CrawlRun;
  try {
    run = await runCrawl(
      url.href,
      state,
      limits,
      { fetch, now: Date.now, userAgent: USER_AGENT, renderer },
      {
        crawl: options,
        signal: stop.signal,
        onProgress: progress ? (p) => progress.update(p) : undefined,
        progressEveryMs: REDRAW_EVERY_MS,
      },
    );
  } catch (error) {
    await renderer?.browser.close();
    progress?.clear();
    removeInterrupt();
    const answer = crawlErrorAnswer(error, rawUrl);
    if (answer === null) throw error;
    io.stderr(config.json ? jsonError(answer.message) : `${answer.message}\n`);
    return interrupted ? EXIT_INTERRUPTED : 1;
  }
  await renderer?.browser.close();
  progress?.clear();

  let written: WrittenSitemap;
  const base = partBaseUrl(options, run.url);
  try {
    if (config.output === null && run.urlsListed > options.max_urls_per_file) throw new NeedsOutputError();
    const files = config.output === null ? null : outputFiles(config.output, options.gzip_files);
    written = await writeSitemap(state.entries(), {
      features: sitemapFeatures(options, run.url),
      partLoc: (n) => `${base}${encodeURIComponent(files!.partName(n))}`,
      sink: async (part, xml) => {
        if (files === null) {
          if (part !== 0) throw new NeedsOutputError();
          await io.writeStdout(xml);
        } else if (part === 0) {
          await io.writeFile(config.output!, xml);
        } else {
          await io.writeFile(files.partPath(part), options.gzip_files ? Bun.gzipSync(xml) : xml);
        }
      },
      limits: { urls: options.max_urls_per_file, bytes: SITEMAP_MAX_BYTES },
    });
  } catch (error) {
    removeInterrupt();
    const message =
      error instanceof NeedsOutputError
        ? `${run.urlsListed.toLocaleString("en-US")} URLs listed, but ${needsOutput(options.max_urls_per_file)}`
        : `could not write the sitemap: ${(error as Error).message}`;
    io.stderr(config.json ? jsonError(message) : `genapi: ${message}\n`);
    return 1;
  }
  let links: { report: LinkReport; counts: LinkCounts } | undefined;
  const source = state.linkSource();
  if (source !== null && config.linkReport !== null) {
    // The report's data.links is cut to 1,000 entries a list; the file holds them all.
    const limits = { maxRedirects: defaultCrawlLimits.maxRedirects };
    links = await cutLinkReport(source, limits, MAX_LIST_ENTRIES, run.checks);
    let text = "";
    await writeLinkLists(
      source,
      limits,
      (piece) => {
        text += piece;
      },
      run.checks,
    );
    try {
      await io.writeFile(config.linkReport, `${text}\n`);
    } catch (error) {
      removeInterrupt();
      const message = `could not write the link report: ${(error as Error).message}`;
      io.stderr(config.json ? jsonError(message) : `genapi: ${message}\n`);
      return 1;
    }
  }
  removeInterrupt();

  const report = crawlReport({ ...run, urlCount: written.urlCount, exclusions: await state.report(), links: links?.report }, new Date());
  if (config.json) io.stderr(`${JSON.stringify(report)}\n`);
  else if (!config.quiet)
    io.stderr(summary(run, written, config.output, interrupted, report, links && { file: config.linkReport!, counts: links.counts }));
  return interrupted ? EXIT_INTERRUPTED : 0;
}

/** A failure under --json: the API's error body, on one line. */
const jsonError = (message: string) => `${JSON.stringify(apiErrorBody(message))}\n`;

const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** What went wrong with the site on the way, for the summary line: throttled answers and pages not read. */
function trouble(report: CrawlReport): string {
  const parts: string[] = [];
  const { throttled, retries } = report.politeness;
  if (throttled > 0) parts.push(`the site throttled ${count(throttled, "request")} (429/503; ${count(retries, "retry", "retries")})`);
  if (report.excluded.http_error > 0) parts.push(`${count(report.excluded.http_error, "page")} answered an HTTP error`);
  if (report.excluded.failed > 0) parts.push(`${count(report.excluded.failed, "page")} failed`);
  return parts.length === 0 ? "" : `; ${parts.join(", ")}`;
}

function summary(
  run: CrawlRun,
  written: WrittenSitemap,
  output: string | null,
  interrupted: boolean,
  report: CrawlReport,
  links?: { file: string; counts: LinkCounts },
): string {
  const rate = pagesPerSecond(run.pagesCrawled, run.durationMs).toFixed(1);
  const where =
    output === null
      ? "written to standard output"
      : written.parts === 0
        ? `written to ${output}`
        : `written to ${output} (an index of ${written.parts} parts: ${outputFiles(output).partName(1)} ... ${outputFiles(output).partName(written.parts)})`;
  const why = interrupted
    ? "; interrupted, truncated"
    : run.stopped === "timed out"
      ? "; time limit reached, truncated"
      : run.truncated
        ? "; truncated (a page or size limit)"
        : "";
  const linkLine = links
    ? `; link report: ${plural(links.counts.broken_count, "broken link")}, ${plural(links.counts.redirect_count, "redirect")}, ${plural(links.counts.sitemap_error_count, "sitemap error")} written to ${links.file}`
    : "";
  return (
    `genapi: ${written.urlCount.toLocaleString("en-US")} URLs listed from ${run.pagesCrawled.toLocaleString("en-US")} pages ` +
    `in ${run.durationMs < 60_000 ? `${(run.durationMs / 1000).toFixed(1)} s` : formatElapsed(run.durationMs)} (${rate} pages/s), ${where}${why}${trouble(report)}${linkLine}\n`
  );
}

function plural(n: number, noun: string): string {
  return `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`;
}

/** The process's own streams and signals; `env` for GENAPI_AUTH_PASSWORD. */
export function processCrawlIo(env: Record<string, string | undefined>): CrawlCommandIo {
  return {
    async password(user) {
      const given = env.GENAPI_AUTH_PASSWORD;
      if (given !== undefined) return given;
      if (!process.stdin.isTTY) return null;
      try {
        return await askPassword(`Password for ${user}: `, process.stdin, (text) => void process.stderr.write(text));
      } catch (error) {
        // Ctrl-C at the prompt is an interrupt like any other.
        if (error instanceof PromptCancelledError && error.interrupted) process.exit(EXIT_INTERRUPTED);
        throw error;
      }
    },
    stderr: (text) => void process.stderr.write(text),
    writeStdout: (text) => Bun.write(Bun.stdout, text),
    writeFile: (path, text) => Bun.write(path, text),
    stderrIsTTY: process.stderr.isTTY === true,
    columns: () => process.stderr.columns,
    onInterrupt(handler) {
      process.on("SIGINT", handler);
      return () => process.off("SIGINT", handler);
    },
    exit: (code) => process.exit(code),
  };
}
