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
  type CrawlOptions,
  type CrawlRun,
  crawlErrorAnswer,
  crawlReport,
  createCrawlFetch,
  cutLinkReport,
  type LinkCounts,
  type LinkReport,
  defaultCrawlLimits,
  INVALID_URL_MESSAGE,
  MemoryCrawlState,
  parseCrawlOptions,
  parseTargetUrl,
  runCrawl,
  SITEMAP_MAX_BYTES,
  SITEMAP_MAX_URLS,
  type WrittenSitemap,
  writeLinkLists,
  writeSitemap,
} from "../crawler/index.ts";
import { USER_AGENT } from "../config/version.ts";
import { createProgressLine, formatElapsed, pagesPerSecond, REDRAW_EVERY_MS } from "./progress.ts";

export interface CrawlCommandIo {
  stderr: (text: string) => void;
  /** Resolves once the text is written (the sitemap can be 50 MB; the process exits right after). */
  writeStdout: (text: string) => Promise<unknown>;
  writeFile: (path: string, text: string) => Promise<unknown>;
  /** Whether stderr is a terminal, and its width: the progress line is drawn only then. */
  stderrIsTTY: boolean;
  columns: () => number | undefined;
  /** Registers the Ctrl-C handler; returns its removal. */
  onInterrupt: (handler: () => void) => () => void;
  /** A second Ctrl-C: leave at once. */
  exit: (code: number) => never;
}

export const EXIT_INTERRUPTED = 130;

/** The flag that sets each crawl option, to name it in an error. */
const FLAG_OF: Record<string, string> = {
  max_pages: "--max-pages",
  max_depth: "--max-depth",
  include: "--include",
  exclude: "--exclude",
  ignore_query_params: "--ignore-query-param",
};

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
      link_report: config.linkReport !== null,
    },
    { maxPagesCap: CRAWL_COMMAND_MAX_PAGES },
  );
  if (parsed.ok) return parsed.options;
  const field = /^[a-z_]+/.exec(parsed.message)?.[0] ?? "";
  throw new UsageError(`${FLAG_OF[field] ?? field}: ${parsed.message}`);
}

/** The file names of --output: the parts go beside FILE as <stem>-1.xml, <stem>-2.xml, ... */
export function outputFiles(output: string) {
  const stem = basename(output, extname(output)) || basename(output);
  return {
    stem,
    partPath: (n: number) => join(dirname(output), `${stem}-${n}.xml`),
    partName: (n: number) => `${stem}-${n}.xml`,
  };
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

const NEEDS_OUTPUT =
  `the sitemap is larger than one file may be (${SITEMAP_MAX_URLS.toLocaleString("en-US")} URLs, ${SITEMAP_MAX_BYTES / 2 ** 20} MB): ` +
  "run again with --output FILE to write a sitemap index and its parts";

export async function runCrawlCommand(rawUrl: string | undefined, config: CrawlCommandConfig, io: CrawlCommandIo): Promise<number> {
  if (rawUrl === undefined) throw new UsageError("crawl needs a URL: genapi crawl https://example.com/");
  const url = parseTargetUrl(rawUrl);
  if (url === null) throw new UsageError(`URL "${rawUrl}": ${INVALID_URL_MESSAGE}`);
  const options = crawlOptionsOf(config);
  if (config.output !== null) checkOutputDirectory(config.output);
  if (config.linkReport !== null) checkOutputDirectory(config.linkReport, "--link-report");

  const stop = new AbortController();
  let interrupted = false;
  const removeInterrupt = io.onInterrupt(() => {
    if (interrupted) io.exit(EXIT_INTERRUPTED);
    interrupted = true;
    stop.abort();
  });
  const progress = io.stderrIsTTY && !config.quiet ? createProgressLine(io.stderr, { columns: io.columns }) : null;
  const state = new MemoryCrawlState({ linkReport: options.link_report });
  const limits = { ...defaultCrawlLimits, maxPages: config.maxPages, timeoutMs: config.crawlTimeoutSeconds * 1000 };
  // The user's own rights: every address may be crawled, as with `serve --allow-private-targets`.
  const fetch = createCrawlFetch({ policy: { allowPrivate: true, allowTargets: [] }, concurrency: limits.concurrency });
  let run: CrawlRun;
  try {
    run = await runCrawl(
      url.href,
      state,
      limits,
      { fetch, now: Date.now, userAgent: USER_AGENT },
      {
        crawl: options,
        signal: stop.signal,
        onProgress: progress ? (p) => progress.update(p) : undefined,
        progressEveryMs: REDRAW_EVERY_MS,
      },
    );
  } catch (error) {
    progress?.clear();
    removeInterrupt();
    const answer = crawlErrorAnswer(error, rawUrl);
    if (answer === null) throw error;
    io.stderr(config.json ? jsonError(answer.message) : `${answer.message}\n`);
    return interrupted ? EXIT_INTERRUPTED : 1;
  }
  progress?.clear();

  let written: WrittenSitemap;
  const origin = new URL(run.url).origin;
  try {
    if (config.output === null && run.urlsListed > SITEMAP_MAX_URLS) throw new NeedsOutputError();
    const files = config.output === null ? null : outputFiles(config.output);
    written = await writeSitemap(state.entries(), {
      features: { alternates: options.alternates, images: options.images },
      partLoc: (n) => `${origin}/${encodeURIComponent(files!.partName(n))}`,
      sink: async (part, xml) => {
        if (files === null) {
          if (part !== 0) throw new NeedsOutputError();
          await io.writeStdout(xml);
        } else {
          await io.writeFile(part === 0 ? config.output! : files.partPath(part), xml);
        }
      },
    });
  } catch (error) {
    removeInterrupt();
    const message =
      error instanceof NeedsOutputError
        ? `${run.urlsListed.toLocaleString("en-US")} URLs listed, but ${NEEDS_OUTPUT}`
        : `could not write the sitemap: ${(error as Error).message}`;
    io.stderr(config.json ? jsonError(message) : `genapi: ${message}\n`);
    return 1;
  }
  let links: { report: LinkReport; counts: LinkCounts } | undefined;
  const source = state.linkSource();
  if (source !== null && config.linkReport !== null) {
    // The report's data.links is cut to 1,000 entries a list; the file holds them all.
    const limits = { maxRedirects: defaultCrawlLimits.maxRedirects };
    links = await cutLinkReport(source, limits);
    let text = "";
    await writeLinkLists(source, limits, (piece) => {
      text += piece;
    });
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
    io.stderr(summary(run, written, config.output, interrupted, links && { file: config.linkReport!, counts: links.counts }));
  return interrupted ? EXIT_INTERRUPTED : 0;
}

/** A failure under --json: the API's error body, on one line. */
const jsonError = (message: string) => `${JSON.stringify({ success: false, message })}\n`;

function summary(
  run: CrawlRun,
  written: WrittenSitemap,
  output: string | null,
  interrupted: boolean,
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
  const report = links
    ? `; link report: ${plural(links.counts.broken_count, "broken link")}, ${plural(links.counts.redirect_count, "redirect")}, ${plural(links.counts.sitemap_error_count, "sitemap error")} written to ${links.file}`
    : "";
  return (
    `genapi: ${written.urlCount.toLocaleString("en-US")} URLs listed from ${run.pagesCrawled.toLocaleString("en-US")} pages ` +
    `in ${run.durationMs < 60_000 ? `${(run.durationMs / 1000).toFixed(1)} s` : formatElapsed(run.durationMs)} (${rate} pages/s), ${where}${why}${report}\n`
  );
}

function plural(n: number, noun: string): string {
  return `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`;
}

/** The process's own streams and signals. */
export function processCrawlIo(): CrawlCommandIo {
  return {
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
