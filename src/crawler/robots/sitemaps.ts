// sitemaps_from_robots: the page URLs of the sitemaps that the origin's robots.txt names in its
// `Sitemap:` lines. Those files are untrusted input and are read as pages are, bounded: a cap on
// decompressed bytes (gzip bombs), on files and on index nesting (endless or cyclic indexes), on
// XML element depth; no DTD is read and no entity is expanded (saxes never expands DTD entities; a
// document with a DOCTYPE is refused outright); the stream is parsed as it arrives, never held whole.
import { SaxesParser } from "saxes";
import { TargetRefusedError } from "../net/address-guard.ts";
import { isRedirect } from "../net/headers.ts";
import { followHops, type HopStep } from "../net/hops.ts";
import { CrawlStopped, type Requester } from "../net/request.ts";
import { normaliseUrl } from "../url/url.ts";

export interface SitemapReadLimits {
  /** Sitemap files fetched in all, index children included. */
  maxFiles: number;
  /** Index nesting: 0 for the files robots.txt names, 1 for the children of an index, ... */
  maxIndexDepth: number;
  /** Bytes per file, counted after decompression (and before, for the raw body). */
  maxBytes: number;
  /** XML element nesting; a sitemap needs 3, its extensions a few more. */
  maxElementDepth: number;
  /** Characters of one <loc>. */
  maxLocLength: number;
  /** Redirects followed per file, each within the origin. */
  maxRedirects: number;
}

export const defaultSitemapReadLimits: SitemapReadLimits = {
  maxFiles: 50,
  maxIndexDepth: 2,
  // sitemaps.org's limit of one uncompressed sitemap file (50 MB).
  maxBytes: 52_428_800,
  maxElementDepth: 16,
  maxLocLength: 4_096,
  maxRedirects: 5,
};

export interface SitemapReadResult {
  /** Sitemap files read (fetched with a 2xx answer). */
  files: number;
  /**
   * A limit (files, index depth, bytes of a file, the caller's room) left URLs unread. A file that
   * fails (HTTP error, malformed XML, network) is skipped without truncating: it is the site's fault.
   */
  truncated: boolean;
}

/**
 * Reads the sitemaps named by `sitemapLines` that are on `origin` (others are ignored, as are
 * invalid URLs) and hands each page URL on `origin`, normalised, to `accept` with the sitemap file
 * that lists it (as robots.txt or its index names it), which answers false when it wants no more. Sitemap indexes are followed breadth-first; a file is fetched at most once.
 * Failures of single files (HTTP errors, timeouts, malformed XML) skip that file: what it gave
 * before failing is kept. A stopped crawl (CrawlStopped) propagates.
 */
export async function readRobotsSitemaps(
  origin: string,
  sitemapLines: readonly string[],
  request: Requester,
  accept: (url: string, sitemap: string) => boolean | Promise<boolean>,
  limits: SitemapReadLimits = defaultSitemapReadLimits,
): Promise<SitemapReadResult> {
  const inScope = (url: string | null): url is string => url?.startsWith(`${origin}/`) === true;
  const queue: { url: string; depth: number }[] = [];
  const queued = new Set<string>();
  const add = (url: string, depth: number) => {
    if (queued.has(url)) return;
    queued.add(url);
    queue.push({ url, depth });
  };
  for (const line of sitemapLines) {
    const url = normaliseUrl(line.trim());
    if (inScope(url)) add(url, 0);
  }

  let files = 0;
  let truncated = false;
  let wantsMore = true;
  for (let i = 0; i < queue.length && wantsMore; i++) {
    if (files === limits.maxFiles) {
      truncated = true;
      break;
    }
    const { url, depth } = queue[i]!;
    const outcome = await readOne(url, origin, request, limits, {
      page: async (loc) => {
        const page = normaliseUrl(loc);
        if (inScope(page)) wantsMore = await accept(page, url);
        return wantsMore;
      },
      child: (loc) => {
        const child = normaliseUrl(loc);
        if (!inScope(child)) return;
        // Past the file cap a child would never be fetched: it is not kept either.
        if (depth + 1 > limits.maxIndexDepth || queue.length >= limits.maxFiles) truncated = true;
        else add(child, depth + 1);
      },
    });
    if (outcome.read) files++;
    if (outcome.limited) truncated = true;
  }
  return { files, truncated: truncated || !wantsMore };
}

interface Sinks {
  /** A <urlset>'s <url><loc>, awaited one at a time; answers false to stop reading. */
  page: (loc: string) => Promise<boolean>;
  /** A <sitemapindex>'s <sitemap><loc>. */
  child: (loc: string) => void;
}

/** What reading one file gave: whether it was read (a 2xx), and whether a limit cut it short. */
interface FileOutcome {
  read: boolean;
  limited: boolean;
}

const SKIPPED: FileOutcome = { read: false, limited: false };

/**
 * Fetches one sitemap file, following its redirects within the origin (the crawl's hop function),
 * and streams it through the parser. A refused address, a timeout or an HTTP error skips the file.
 */
async function readOne(start: string, origin: string, request: Requester, limits: SitemapReadLimits, sinks: Sinks): Promise<FileOutcome> {
  const followed = await followHops<FileOutcome>(
    start,
    {
      maxRedirects: limits.maxRedirects,
      resolve: (location, from) => normaliseUrl(location, from),
      admit: (target, chain) => (!target.startsWith(`${origin}/`) ? "another origin" : chain.includes(target) ? "redirect loop" : null),
      refusedIsFatal: () => false,
    },
    async (url): Promise<HopStep<FileOutcome>> => {
      try {
        return await request(url, async (res, signal): Promise<HopStep<FileOutcome>> => {
          const location = res.headers.get("location");
          if (isRedirect(res.status) && location !== null) return { kind: "redirect", location };
          if (res.status < 200 || res.status > 299 || res.body === null) return { kind: "final", value: SKIPPED };
          const parsed = await parseStream(res.body, signal, limits, sinks);
          return { kind: "final", value: { read: true, limited: parsed === "limited" } };
        });
      } catch (err) {
        if (err instanceof CrawlStopped || err instanceof TargetRefusedError) throw err;
        return { kind: "final", value: SKIPPED };
      }
    },
  );
  return followed.kind === "final" ? followed.value : SKIPPED;
}

const GZIP_MAGIC = [0x1f, 0x8b];

/** What parseStream needs of a reader: the raw body's, or the gunzipped stream's. */
interface ChunkReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  cancel(reason?: unknown): Promise<void>;
}

/**
 * Parses a sitemap body as it arrives, gunzipping it when it starts with the gzip magic bytes
 * (a `.gz` file served without Content-Encoding; an encoded one arrives decoded). Answers "done"
 * (read whole), "limited" (stopped by the byte cap or the caller) or "broken" (malformed, cut off).
 */
type ParseOutcome = "done" | "limited" | "broken";

async function parseStream(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  limits: SitemapReadLimits,
  sinks: Sinks,
): Promise<ParseOutcome> {
  const raw: ChunkReader = body.getReader();
  let reader: ChunkReader = raw;
  // A read waiting on a stalled body ends when the request's time runs out or the crawl stops.
  const onAbort = () => {
    void reader.cancel(signal.reason).catch(() => {});
    void raw.cancel(signal.reason).catch(() => {});
  };
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    return await parseBody(raw, signal, limits, sinks, (gunzipped) => (reader = gunzipped));
  } finally {
    signal.removeEventListener("abort", onAbort);
    void reader.cancel().catch(() => {});
  }
}

async function parseBody(
  raw: ChunkReader,
  signal: AbortSignal,
  limits: SitemapReadLimits,
  sinks: Sinks,
  setReader: (reader: ChunkReader) => void,
): Promise<ParseOutcome> {
  const first = await raw.read().catch(() => ({ done: true, value: undefined }));
  signal.throwIfAborted();
  if (first.done || first.value === undefined) return "done";
  let reader: ChunkReader = raw;
  let pending: Uint8Array | undefined = first.value;
  if (first.value[0] === GZIP_MAGIC[0] && first.value[1] === GZIP_MAGIC[1]) {
    const compressed = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(first.value),
      pull: async (controller) => {
        const { done, value } = await raw.read();
        if (done || value === undefined) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => raw.cancel(reason),
    });
    reader = compressed.pipeThrough(new DecompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>).getReader();
    setReader(reader);
    pending = undefined;
  }

  const parser = new SitemapParser(limits, sinks);
  const decoder = new TextDecoder();
  let bytes = 0;
  try {
    for (;;) {
      signal.throwIfAborted();
      let chunk: Uint8Array;
      if (pending) {
        chunk = pending;
        pending = undefined;
      } else {
        const next = await reader.read();
        if (next.done || next.value === undefined) break;
        chunk = next.value;
      }
      // Past the cap only the part within it is parsed: the entries it completes are kept.
      const over = bytes + chunk.byteLength > limits.maxBytes;
      if (over) chunk = chunk.subarray(0, limits.maxBytes - bytes);
      bytes += chunk.byteLength;
      // In slices, so that the URLs one write finds stay few before they are handed on.
      for (let at = 0; at < chunk.byteLength; at += PARSE_SLICE) {
        const written = parser.write(decoder.decode(chunk.subarray(at, at + PARSE_SLICE), { stream: true }));
        if (!(await handOn(parser, sinks))) return "limited";
        if (!written) return parser.outcome();
      }
      if (over) return "limited";
    }
    const outcome = parser.end(decoder.decode());
    return (await handOn(parser, sinks)) ? outcome : "limited";
  } catch {
    if (signal.aborted) throw signal.reason;
    // A corrupt gzip stream or a broken connection: what was parsed before it stays.
    return "broken";
  }
}

const PARSE_SLICE = 64 * 1024;

/** Hands the page URLs the parser found to the sink, in order; false once it wants no more. */
async function handOn(parser: SitemapParser, sinks: Sinks): Promise<boolean> {
  for (const loc of parser.takePages()) if (!(await sinks.page(loc))) return false;
  return true;
}

/** A <urlset> or <sitemapindex> read with saxes; it stops at the first error or limit. */
class SitemapParser {
  private readonly parser = new SaxesParser({ xmlns: false, position: false });
  /** Local names of the open elements. */
  private readonly stack: string[] = [];
  private loc: string | null = null;
  /** Page URLs found since the last takePages(). */
  private pages: string[] = [];
  private stopped = false;
  private failed = false;

  constructor(
    private readonly limits: SitemapReadLimits,
    private readonly sinks: Sinks,
  ) {
    const p = this.parser;
    p.on("error", () => this.fail());
    // No DTD is ever needed by a sitemap: one is a sign of entity tricks.
    p.on("doctype", () => this.fail());
    // saxes goes on emitting the rest of a chunk after an error: every handler checks `stopped`.
    p.on("opentag", (tag) => {
      if (this.stopped) return;
      if (this.stack.length === this.limits.maxElementDepth) return this.fail();
      const name = localName(tag.name);
      if (this.stack.length === 0 && name !== "urlset" && name !== "sitemapindex") return this.fail();
      this.stack.push(name);
      if (name === "loc" && this.isLoc()) this.loc = "";
    });
    p.on("text", (text) => this.addText(text));
    p.on("cdata", (text) => this.addText(text));
    p.on("closetag", () => {
      if (this.stopped) return;
      if (this.loc !== null && this.isLoc()) this.emit(this.loc.trim());
      this.loc = null;
      this.stack.pop();
    });
  }

  /** Answers false once the parser has stopped (an error or refused markup). */
  write(text: string): boolean {
    if (!this.stopped) {
      try {
        this.parser.write(text);
      } catch {
        this.fail();
      }
    }
    return !this.stopped;
  }

  end(text: string): ParseOutcome {
    if (this.write(text)) {
      try {
        this.parser.close();
      } catch {
        this.fail();
      }
    }
    return this.outcome();
  }

  /** Broken on an error or refused markup, else done (the caller's stop is the caller's to say). */
  outcome(): ParseOutcome {
    return this.failed ? "broken" : "done";
  }

  takePages(): string[] {
    const pages = this.pages;
    this.pages = [];
    return pages;
  }

  /** A <loc> directly inside <urlset><url> or <sitemapindex><sitemap>. */
  private isLoc(): boolean {
    const [root, entry, loc] = this.stack;
    return (
      this.stack.length === 3 &&
      loc === "loc" &&
      ((root === "urlset" && entry === "url") || (root === "sitemapindex" && entry === "sitemap"))
    );
  }

  private addText(text: string): void {
    if (this.loc === null || this.stopped) return;
    // An overlong <loc> is dropped, not kept growing.
    this.loc = this.loc.length + text.length > this.limits.maxLocLength ? null : this.loc + text;
  }

  private emit(loc: string): void {
    if (this.stack[0] === "sitemapindex") this.sinks.child(loc);
    else this.pages.push(loc);
  }

  private fail(): void {
    this.failed = true;
    this.stopped = true;
  }
}

function localName(qualified: string): string {
  const colon = qualified.indexOf(":");
  return colon < 0 ? qualified : qualified.slice(colon + 1);
}
