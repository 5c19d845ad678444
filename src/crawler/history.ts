// A page as a site's previous run left it: what a re-crawl needs to ask for it conditionally
// (If-None-Match, If-Modified-Since) and, when the site answers 304 Not Modified, to read it without
// its body: its fingerprint, <lastmod>, listing verdict and links. The crawl is given a PageHistory
// (the store's page rows of the previous run) and hands back the same facts of every page it reads,
// which the store keeps for the next run.
import type { ExclusionReason } from "./exclusions.ts";
import type { Validators } from "./net/http-client.ts";
import type { SitemapEntry } from "./output/xml.ts";
import { originOf } from "./url/url.ts";

/** What one run knew of one page it fetched (a 200 or 304 HTML page, or a listed document). */
export interface PageMemory {
  url: string;
  /** The page's validators, as the site sent them. */
  etag: string | null;
  lastModified: string | null;
  /** Hash of its title and main text (html/fingerprint.ts); null: not computed (a document). */
  fingerprint: string | null;
  /** The <lastmod> it was listed with. */
  lastmod: string | null;
  /** Why it was not listed; null: listed. */
  exclusion: ExclusionReason | null;
  /** Its canonical URL when another page's. */
  canonical: string | null;
  /** The links it gave to follow, normalised. */
  links: string[];
  /** Alternates and images of its entry, when the options gather them. */
  extra: Pick<SitemapEntry, "alternates" | "images"> | null;
}

/**
 * What a run keeps of a page for the next run: its memory, or, when it read the page exactly as the
 * previous run left it (a 304, or a 200 with the same facts and validators), only that: the store
 * then copies the previous run's row (nothing packed, and the page's links are not held until the
 * checkpoint).
 */
export type PageKept = PageMemory | { url: string; unchanged: true };

/** A previous run's memory of a page as the store reads it, its links still packed (unpacked when the crawl asks for the page). */
export type StoredPage = Omit<PageMemory, "links"> & { packedLinks: Uint8Array };

/** A stored page with its links unpacked (each field named: a rest and a spread were 0.8 µs a page of a re-crawl). */
export function unpackPage(page: StoredPage): PageMemory {
  return {
    url: page.url,
    etag: page.etag,
    lastModified: page.lastModified,
    fingerprint: page.fingerprint,
    lastmod: page.lastmod,
    exclusion: page.exclusion,
    canonical: page.canonical,
    links: unpackLinks(originOf(page.url), page.packedLinks),
    extra: page.extra,
  };
}

/**
 * The previous run's memory of pages, asked for page by page as the crawl reaches them: at once
 * when it is at hand (read ahead), else once it is read.
 */
export interface PageHistory {
  previous(url: string): PageMemory | null | Promise<PageMemory | null>;
}

/** A site's first run: no page was read before. */
export const NO_HISTORY: PageHistory = { previous: () => null };

/** The validators of a conditional request for a page the previous run fetched (sent as If-None-Match, If-Modified-Since). */
export function validatorsOf(previous: PageMemory | null): Validators | undefined {
  if (previous === null || (previous.etag === null && previous.lastModified === null)) return undefined;
  return { etag: previous.etag, lastModified: previous.lastModified };
}

/** Whether `page` says of its URL what `previous` said (validators, fingerprint, lastmod, verdict, links, entry). */
export function samePage(page: PageMemory, previous: PageMemory): boolean {
  return (
    page.url === previous.url &&
    page.etag === previous.etag &&
    page.lastModified === previous.lastModified &&
    page.fingerprint === previous.fingerprint &&
    page.lastmod === previous.lastmod &&
    page.exclusion === previous.exclusion &&
    page.canonical === previous.canonical &&
    page.links.length === previous.links.length &&
    page.links.every((link, i) => link === previous.links[i]) &&
    (page.extra === previous.extra || JSON.stringify(page.extra) === JSON.stringify(previous.extra))
  );
}

/**
 * A site's <lastmod> for a page read now: an unchanged fingerprint keeps the previous run's date; a
 * new or changed page takes its own plausible date (`ownDate`), else the time this run fetched it.
 */
export function siteLastmod(
  previous: PageMemory | null,
  fingerprint: string | null,
  ownDate: string | undefined,
  fetchedAt: number,
): string {
  if (previous !== null && previous.lastmod !== null && fingerprint !== null && previous.fingerprint === fingerprint)
    return previous.lastmod;
  return ownDate ?? w3cSeconds(fetchedAt);
}

/**
 * A time as a W3C datetime to the second, UTC ("2026-11-27T10:15:00Z"). The last second's text is
 * kept: a run dates hundreds of pages in the same second, and a Date and its ISO string were 0.4 µs.
 */
export function w3cSeconds(ms: number): string {
  // The Date's own second (it truncates a fraction toward zero); a time out of its range throws as it did.
  const second = Math.floor(Math.trunc(ms) / 1000);
  if (second === lastSecond && Math.abs(ms) <= 8.64e15) return lastSecondText;
  const text = `${new Date(ms).toISOString().slice(0, 19)}Z`;
  lastSecond = second;
  lastSecondText = text;
  return text;
}
let lastSecond = Number.NaN;
let lastSecondText = "";

/** Packed links at least this long are deflated; shorter ones are kept as they are. */
const DEFLATE_FROM_BYTES = 1_024;
const RAW = 0;
const DEFLATED = 1;

/**
 * Links kept per page: relative to the page's origin, one a line, after a byte that says whether
 * they are deflated. Deflating a typical page's links (20, 179 bytes to 54) cost 5.3 µs a page,
 * about 5% of a page's crawl CPU, and inflating them 1.7 µs: only lists of a kilobyte or more are.
 */
export function packLinks(origin: string, links: readonly string[]): Uint8Array {
  const prefix = `${origin}/`;
  const text = new TextEncoder().encode(links.map((link) => (link.startsWith(prefix) ? link.slice(origin.length) : link)).join("\n"));
  const body = text.byteLength >= DEFLATE_FROM_BYTES ? Bun.deflateSync(text) : text;
  const packed = new Uint8Array(body.byteLength + 1);
  packed[0] = body === text ? RAW : DEFLATED;
  packed.set(body, 1);
  return packed;
}

const decoder = new TextDecoder();

export function unpackLinks(origin: string, packed: Uint8Array): string[] {
  // A raw list is decoded with its first byte (0, one character of UTF-8) and sliced after it: no view of the bytes is made.
  const text =
    packed[0] === DEFLATED
      ? decoder.decode(Bun.inflateSync(packed.subarray(1) as Uint8Array<ArrayBuffer>))
      : decoder.decode(packed).slice(1);
  if (text === "") return [];
  const links = text.split("\n");
  for (let i = 0; i < links.length; i++) if (links[i]!.charCodeAt(0) === 47) links[i] = origin + links[i];
  return links;
}
