// A page's own date, for its <lastmod>: `<meta property="article:modified_time">` (Open Graph's
// article property; the `name=` spelling is not Open Graph's and is not read), then JSON-LD's
// `dateModified`, then `Last-Modified` (net/headers.ts, which leaves out a server's "now"). The first
// plausible one is the date: one malformed or in the future is passed over for the next.
import type { AnswerFields } from "../net/answer.ts";
import { lastModifiedOf } from "../net/headers.ts";

/** The dates a page gives itself in its HTML, as written (character references decoded). */
export interface OwnDates {
  /** The content of the first `<meta property="article:modified_time">`. */
  modifiedTime?: string;
  /** The first JSON-LD `dateModified` (jsonLdDateModified). */
  dateModified?: string;
}

/** The page's <lastmod>: its first plausible own date as a W3C datetime (readW3cDate), else Last-Modified's, else none. */
export function pageLastmod(own: OwnDates, headers: AnswerFields, now: number): string | undefined {
  if (own.modifiedTime !== undefined) {
    const date = readW3cDate(own.modifiedTime, now);
    if (date !== undefined) return date;
  }
  if (own.dateModified !== undefined) {
    const date = readW3cDate(own.dateModified, now);
    if (date !== undefined) return date;
  }
  return lastModifiedOf(headers, now);
}

/**
 * The W3C datetime forms (ISO 8601's profile that sitemaps use): a date, or a date and a time to the
 * minute or second with an optional fraction and a zone (Z, ±hh:mm; ±hhmm and ±hh too, as PHP's and
 * others' ISO 8601 output writes it). "T" or one space between date and time (RFC 3339 5.6's note).
 * A time without a zone names no instant and is not read.
 */
const W3C_DATETIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?))?$/;

/**
 * A W3C datetime as the sitemap writes it: a date stays a date ("2026-11-21"), a time becomes UTC to
 * the second ("2026-11-21T10:15:00Z", a fraction dropped). Undefined when malformed, impossible
 * ("2026-02-30", "25:00", an offset past 23:59) or later than `now`: a sitemap written now cannot
 * truthfully hold a later date, so no clock-skew allowance is made (the HTTP date rule is the same).
 */
export function readW3cDate(value: string, now: number): string | undefined {
  const match = W3C_DATETIME.exec(value.trim());
  if (match === null) return undefined;
  const [, yyyy, mo, dd, hh, mi, ss, zulu, sign, oh, om] = match;
  const [year, month, day] = [Number(yyyy), Number(mo), Number(dd)];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hh === undefined) return utc(year, month, day, 0, 0, 0) > now ? undefined : `${yyyy}-${mo}-${dd}`;
  const [hour, minute, second] = [Number(hh), Number(mi), ss === undefined ? 0 : Number(ss)];
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (zulu === undefined) {
    const [offsetHours, offsetMins] = [Number(oh), om === undefined ? 0 : Number(om)];
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (sign === "-" ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const time = utc(year, month, day, hour, minute, second) - offsetMinutes * 60_000;
  if (time > now) return undefined;
  return new Date(time).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Milliseconds since the epoch of a UTC time; setUTCFullYear, as Date.UTC reads years 0-99 as 19xx. */
function utc(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

function daysIn(year: number, month: number): number {
  return new Date(utc(year, month + 1, 0, 0, 0, 0)).getUTCDate();
}

/**
 * The first JSON-LD `dateModified` string of the page's main entities: in document order of the
 * blocks, the top-level objects (the block, or each member of an array), each read as itself, then
 * its `mainEntity`, then each member of its `@graph` (read the same way, without a further graph).
 * Dates of nested things (authors, comments, offers, reviews) are not the page's and are not read.
 * A block that is not JSON is passed over (a page's error, as an unreadable Last-Modified is); only
 * blocks naming dateModified are parsed at all.
 */
export function jsonLdDateModified(blocks: readonly string[]): string | undefined {
  for (const block of blocks) {
    if (!block.includes("dateModified")) continue;
    let data: unknown;
    try {
      data = JSON.parse(block);
    } catch {
      continue;
    }
    for (const node of Array.isArray(data) ? data : [data]) {
      const found = entityDate(node, true);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function entityDate(node: unknown, graph: boolean): string | undefined {
  if (!isObject(node)) return undefined;
  if (typeof node.dateModified === "string") return node.dateModified;
  const main = node.mainEntity;
  if (isObject(main) && typeof main.dateModified === "string") return main.dateModified;
  if (graph && Array.isArray(node["@graph"])) {
    for (const member of node["@graph"]) {
      const found = entityDate(member, false);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
