// What the crawler reads from response headers: redirects, content type, Last-Modified, Link canonical.
import type { AnswerFields } from "./answer.ts";

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);

export function isRedirect(status: number): boolean {
  return REDIRECTS.has(status);
}

export interface MediaType {
  /** Lower-cased "type/subtype", or null when the header is missing or empty. */
  type: string | null;
  charset?: string;
}

/**
 * The media type of a Content-Type field. A site sends one value for most of its pages: the last
 * value's reading is kept (callers only read it).
 */
export function mediaTypeOf(headers: AnswerFields): MediaType {
  const value = headers.get("content-type") ?? "";
  if (value === lastMediaType.value) return lastMediaType.read;
  const read = readMediaType(value);
  lastMediaType = { value, read };
  return read;
}

let lastMediaType: { value: string; read: MediaType } = { value: "", read: { type: null, charset: undefined } };

function readMediaType(value: string): MediaType {
  const [essence = "", ...params] = value.split(";");
  const type = essence.trim().toLowerCase();
  let charset: string | undefined;
  for (const param of params) {
    const match = /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(param);
    if (match) charset = match[1];
  }
  return { type: type === "" ? null : type, charset };
}

export function isHtml(type: string | null): boolean {
  return type !== null && HTML_TYPES.has(type);
}

/** Documents search engines index from a sitemap (Google's list of indexable file types), by media type. */
const DOCUMENT_TYPES = new Set([
  "application/pdf",
  "application/msword",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  "application/vnd.ms-excel",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  "application/vnd.ms-powerpoint",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  "application/vnd.oasis.opendocument.text",
  "application/vnd.oasis.opendocument.spreadsheet",
  "application/vnd.oasis.opendocument.presentation",
  "application/rtf",
  "text/rtf",
  "text/plain",
]);

/** A document the `documents` option lists: PDF, Word, Excel, PowerPoint, OpenDocument, RTF or plain text. */
export function isDocument(type: string | null): boolean {
  return type !== null && DOCUMENT_TYPES.has(type);
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/** RFC 9110 5.6.7: the preferred form, "Sun, 06 Nov 1994 08:49:37 GMT". */
const IMF_FIXDATE = /^[A-Z][a-z]{2}, (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
/** The obsolete RFC 850 form, "Sunday, 06-Nov-94 08:49:37 GMT". */
const RFC850_DATE = /^[A-Z][a-z]{5,8}, (\d{2})-([A-Z][a-z]{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
/** ANSI C's asctime() form, "Sun Nov  6 08:49:37 1994" (a one-digit day after a space). */
const ASCTIME_DATE = /^[A-Z][a-z]{2} ([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

/** A Last-Modified this close to the answer's own Date is the time of the answer, not of the page. */
export const STAMPED_NOW_MS = 60_000;

/**
 * `Last-Modified` as a W3C datetime ("2026-11-21T10:15:00Z"), or undefined when absent, in none of
 * the three HTTP date forms a recipient must accept (RFC 9110 5.6.7), impossible, later than `now`,
 * or within STAMPED_NOW_MS of the answer's `Date` (a server that stamps every answer "now"; an
 * absent or unreadable Date rules out nothing).
 */
export function lastModifiedOf(headers: AnswerFields, now: number): string | undefined {
  const value = headers.get("last-modified")?.trim() ?? "";
  if (value === "") return undefined;
  let read: { time: number; iso: string | undefined } | undefined;
  // Sites send one date for many pages: an IMF-fixdate's reading depends on the string alone.
  if (value === lastFixdate.value) read = lastFixdate;
  else {
    read = readHttpDate(value, now);
    if (read === undefined) return undefined;
    if (IMF_FIXDATE.test(value)) Object.assign(lastFixdate, { value, ...read });
  }
  if (read.time > now) return undefined;
  const dateValue = headers.get("date");
  if (dateValue !== null) {
    const date = readAnswerDate(dateValue.trim(), now);
    if (date !== undefined && Math.abs(date.time - read.time) <= STAMPED_NOW_MS) return undefined;
  }
  return read.iso;
}

/** The last IMF-fixdate read, and what it reads as. */
const lastFixdate = { value: "", time: 0, iso: undefined as string | undefined };

/**
 * An answer's Date field, read. A server stamps every answer of the same second alike: the last
 * IMF-fixdate read is kept (a crawl of a fast site reads thousands of answers a second; its reading
 * depends on the string alone).
 */
function readAnswerDate(value: string, now: number): { time: number; iso: string } | undefined {
  if (value === lastDate.value) return lastDate.read;
  const read = readHttpDate(value, now);
  if (read !== undefined && IMF_FIXDATE.test(value)) lastDate = { value, read };
  return read;
}

let lastDate: { value: string; read: { time: number; iso: string } | undefined } = { value: "", read: undefined };

/** An HTTP date as a time and its W3C datetime; undefined when it is no valid date. */
export function readHttpDate(value: string, now: number): { time: number; iso: string } | undefined {
  let fields: [day: string, month: string, year: number, hour: string, minute: string, second: string] | undefined;
  let match = IMF_FIXDATE.exec(value);
  if (match !== null) {
    fields = [match[1]!, match[2]!, Number(match[3]), match[4]!, match[5]!, match[6]!];
  } else {
    match = RFC850_DATE.exec(value);
    if (match !== null) {
      fields = [match[1]!, match[2]!, twoDigitYear(Number(match[3]), now), match[4]!, match[5]!, match[6]!];
    } else {
      match = ASCTIME_DATE.exec(value);
      if (match !== null) fields = [match[2]!.trim(), match[1]!, Number(match[6]), match[3]!, match[4]!, match[5]!];
    }
  }
  if (fields === undefined) return undefined;
  const [dd, monthName, year, hh, mm, ss] = fields;
  const month = MONTHS.indexOf(monthName);
  if (month < 0) return undefined;
  const [day, hour, minute, second] = [dd, hh, mm, ss].map(Number) as [number, number, number, number];
  const time = Date.UTC(year, month, day, hour, minute, second);
  const date = new Date(time);
  // Date.UTC rolls "31 Feb" or "25:00" over into another date (and maps years 0-99 to 19xx).
  const check = [
    date.getUTCFullYear(),
    date.getUTCMonth(),
    date.getUTCDate(),
    date.getUTCHours(),
    date.getUTCMinutes(),
    date.getUTCSeconds(),
  ];
  if (check.join() !== [year, month, day, hour, minute, second].join()) return undefined;
  return { time, iso: date.toISOString().replace(/\.\d{3}Z$/, "Z") };
}

/**
 * RFC 9110 5.6.7: a two-digit year more than 50 years in the future is the most recent past year
 * with the same last two digits.
 */
function twoDigitYear(yy: number, now: number): number {
  const thisYear = new Date(now).getUTCFullYear();
  let year = thisYear - (thisYear % 100) + yy;
  if (year > thisYear + 50) year -= 100;
  return year;
}

/** The target of the first `Link: <...>; rel="canonical"` header entry, as written (may be relative). */
export function linkHeaderCanonical(headers: AnswerFields): string | undefined {
  const value = headers.get("link");
  if (value === null) return undefined;
  for (const match of value.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]*)*)/g)) {
    for (const param of match[2]!.split(";")) {
      const rel = /^\s*rel\s*=\s*"?([^"]*)"?\s*$/i.exec(param);
      if (rel && rel[1]!.toLowerCase().split(/\s+/).includes("canonical")) return match[1]!.trim();
    }
  }
  return undefined;
}

/**
 * A Retry-After field (RFC 9110 10.2.3) as milliseconds from `now`: delay-seconds, or an HTTP date
 * (in any of its three forms; a date in the past is 0). Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: AnswerFields, now: number): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = readHttpDate(value, now);
  return date === undefined ? undefined : Math.max(0, date.time - now);
}
