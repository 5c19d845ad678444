// What the crawler reads from response headers: redirects, content type, Last-Modified, Link canonical.

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

export function mediaTypeOf(headers: Headers): MediaType {
  const value = headers.get("content-type") ?? "";
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

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const IMF_FIXDATE = /^[A-Z][a-z]{2}, (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;

/**
 * `Last-Modified` as a W3C datetime ("2026-11-21T10:15:00Z"), or undefined when absent, not an
 * IMF-fixdate (RFC 9110, the only form servers may send), impossible, or later than `now`.
 */
export function lastModifiedOf(headers: Headers, now: number): string | undefined {
  const match = IMF_FIXDATE.exec(headers.get("last-modified")?.trim() ?? "");
  if (!match) return undefined;
  const [, dd, monthName, yyyy, hh, mm, ss] = match;
  const month = MONTHS.indexOf(monthName!);
  if (month < 0) return undefined;
  const [day, year, hour, minute, second] = [dd, yyyy, hh, mm, ss].map(Number) as [number, number, number, number, number];
  const time = Date.UTC(year, month, day, hour, minute, second);
  const date = new Date(time);
  // Date.UTC rolls "31 Feb" or "25:00" over into another date (and maps years 0-99 to 19xx).
  const fields = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()];
  if (fields.join() !== [year, month, day, hour, minute, second].join()) return undefined;
  if (time > now) return undefined;
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The target of the first `Link: <...>; rel="canonical"` header entry, as written (may be relative). */
export function linkHeaderCanonical(headers: Headers): string | undefined {
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
