// The response head: where a header section ends (headEnd) and what it says (parseResponseHead).
//
// parseResponseHead is pure: bytes in (and whether the request was HEAD), a typed result out, no
// I/O and no connection state. Framing is where a client is attacked (request smuggling, a body
// taken for the next response), and a parser that wrote a connection's fields could only be tested
// through a socket: as a function it is checked case by case and fuzzed against llhttp, Node's parser
// (test/crawler/net/http1/head.fuzz.test.ts), as wget2 fuzzes its wget_http_parse_response_header.
// It allocates what the connection's own parser did (the field list, the field strings) and one
// result object, which stands in for the status line's RegExp match (the status line is read by
// hand): 1.29-1.38 µs a six-field head into a Headers against 1.45-1.48 µs for the parser it
// replaced (Bun 1.4.4, medians of 9 x 200,000 parses, with Content-Length or chunked and gzip); the
// fields go into a FieldList (fields.ts), which checks them as Headers did.
import { HttpClientError, malformed } from "./errors.ts";
import { FieldList } from "./fields.ts";

/** How a response's body ends. */
export const enum Framing {
  /** It has none (HEAD, 204, 304, a 205's). */
  None,
  /** After Content-Length bytes. */
  Length,
  Chunked,
  /** When the server closes the connection. */
  Close,
}

/** A final response's head. */
export interface FinalHead {
  readonly kind: "final";
  readonly status: number;
  /** The reason phrase as sent (possibly empty). */
  readonly reason: string;
  /** The fields; Content-Length left out when Transfer-Encoding overrides it. */
  readonly headers: FieldList;
  readonly framing: Framing;
  /** The body's length for Framing.Length, else 0. */
  readonly length: number;
  /** The server lets the connection serve another request after this response. */
  readonly keepAlive: boolean;
  /** The Content-Encoding fields' values joined, when the response has a body (not HEAD, 204 or 304); else null. */
  readonly encoding: string | null;
}

/** An interim (1xx) response: skipped, the final one follows. */
export interface InterimHead {
  readonly kind: "interim";
  readonly status: number;
}

/** A head that cannot be read: the connection cannot go on. */
export interface HeadError {
  readonly kind: "error";
  readonly error: HttpClientError;
}

export type ResponseHead = FinalHead | InterimHead | HeadError;

/**
 * The offset just past the blank line that ends a header section, searched from `from`, or -1.
 * Lines end in CRLF or a bare LF: the section ends at the first LF followed by LF or CRLF.
 */
export function headEnd(data: Uint8Array, from: number): number {
  for (let lf = data.indexOf(10, from); lf >= 0; lf = data.indexOf(10, lf + 1)) {
    const next = data[lf + 1];
    if (next === 10) return lf + 2;
    if (next === 13 && data[lf + 2] === 10) return lf + 3;
  }
  return -1;
}

/**
 * One header section, `data[start..end)` as headEnd delimits it (its blank line included), of the
 * response to a request that was HEAD when `isHead`.
 *
 * The status line is `HTTP/1.0` or `HTTP/1.1`, a space, three digits, then nothing or a space and a
 * reason without CR (a bare CR is invalid, RFC 9112 2.2: in the reason it would hide the fields
 * after it from the framing). 101 is refused (no upgrade was asked for). Lines end in CRLF or LF.
 */
export function parseResponseHead(data: Buffer, start: number, end: number, isHead: boolean): ResponseHead {
  // Fields are sliced out of the Latin-1 text in place.
  const text = data.toString("latin1", start, end);
  const length = text.length;
  const statusEnd = text.indexOf("\n");
  const lineEnd = text.charCodeAt(statusEnd - 1) === 13 ? statusEnd - 1 : statusEnd;
  if (!isStatusLine(text, lineEnd))
    return failure(malformed(`invalid status line ${JSON.stringify(text.slice(0, Math.min(lineEnd, 64)))}`));
  const status = (text.charCodeAt(9) - 48) * 100 + (text.charCodeAt(10) - 48) * 10 + (text.charCodeAt(11) - 48);
  if (status === 101) return failure(malformed("unexpected 101 Switching Protocols"));
  if (status < 100 || status > 599) return failure(malformed(`invalid status ${status}`));
  if (status < 200) return { kind: "interim", status };

  const headers = new FieldList();
  const http10 = text.charCodeAt(7) === 48;
  let keepAlive = !http10;
  let close = false;
  let lengths: string[] | null = null;
  let transfer: string | null = null;
  let encoding: string | null = null;
  try {
    for (let at = statusEnd + 1; at < length; ) {
      const lf = text.indexOf("\n", at);
      let next = lf < 0 ? length : lf + 1;
      let end = lf < 0 ? length : lf;
      if (end > at && text.charCodeAt(end - 1) === 13) end--;
      if (end === at) {
        at = next;
        continue;
      }
      const first = text.charCodeAt(at);
      // A continuation line (below) that follows no field.
      if (first === 32 || first === 9) return failure(malformed("folded line without a field"));
      const colon = text.indexOf(":", at);
      if (colon <= at || colon >= end) return failure(malformed("header line without a name"));
      const name = text.slice(at, colon);
      let from = colon + 1;
      let to = end;
      while (from < to && (text.charCodeAt(from) === 32 || text.charCodeAt(from) === 9)) from++;
      while (to > from && (text.charCodeAt(to - 1) === 32 || text.charCodeAt(to - 1) === 9)) to--;
      let value = text.slice(from, to);
      // obs-fold (RFC 9112 5.2): a line that starts with SP or HTAB continues the field's value, joined
      // with a space; framing and decoding follow the value the Response's headers show.
      for (let c = text.charCodeAt(next); c === 32 || c === 9; c = text.charCodeAt(next)) {
        const foldLf = text.indexOf("\n", next);
        let foldEnd = foldLf < 0 ? length : foldLf;
        if (foldEnd > next && text.charCodeAt(foldEnd - 1) === 13) foldEnd--;
        value = `${value} ${trimOws(text.slice(next, foldEnd))}`;
        next = foldLf < 0 ? length : foldLf + 1;
      }
      headers.append(name, value);
      at = next;
      switch (name.length) {
        case 10:
          if (name.toLowerCase() === "connection") {
            // "close" in any Connection field ends the connection (RFC 9112 9.3), whatever other fields say.
            const tokens = value.toLowerCase();
            if (hasToken(tokens, "close")) {
              keepAlive = false;
              close = true;
            } else if (http10 && !close && hasToken(tokens, "keep-alive")) keepAlive = true;
          }
          break;
        case 14:
          if (name.toLowerCase() === "content-length") {
            lengths ??= [];
            lengths.push(value);
          }
          break;
        case 16:
          if (name.toLowerCase() === "content-encoding") encoding = encoding === null ? value : `${encoding}, ${value}`;
          break;
        case 17:
          if (name.toLowerCase() === "transfer-encoding") transfer = transfer === null ? value : `${transfer}, ${value}`;
          break;
      }
    }
  } catch {
    // FieldList (as Headers) throws a TypeError for a name that is not a token or a value with NUL or CR.
    return failure(malformed("invalid header field"));
  }

  const noBody = isHead || status === 204 || status === 304;
  let framing: Framing;
  let bodyLength = 0;
  if (noBody) framing = Framing.None;
  else if (transfer !== null) {
    // The codings, empty elements and "identity" aside: chunked must be the only one, and the last.
    let chunked = 0;
    let others = 0;
    let lastCoding = "";
    for (const part of transfer.toLowerCase().split(",")) {
      const coding = trimOws(part);
      if (coding === "") continue;
      lastCoding = coding;
      if (coding === "chunked") chunked++;
      else if (coding !== "identity") others++;
    }
    if (chunked + others === 0) {
      // Identity only: the body ends with the connection.
      framing = Framing.Close;
      keepAlive = false;
    } else if (chunked === 1 && others === 0 && lastCoding === "chunked") framing = Framing.Chunked;
    // Another coding, or chunked not last ("chunked, identity": RFC 9112 6.3 would read until the close).
    else return failure(new HttpClientError(`unsupported transfer coding ${JSON.stringify(transfer)}`, "ERR_HTTP_UNSUPPORTED_ENCODING"));
    // RFC 9112 6.1: both framings at once may be an attempt at request smuggling: not reused.
    if (lengths !== null || http10) keepAlive = false;
    // Transfer-Encoding overrides it (RFC 9112 6.3): left in, it would tell a reader (readCapped)
    // that an endless body is short.
    if (lengths !== null) headers.delete("content-length");
  } else if (lengths !== null) {
    bodyLength = contentLength(lengths);
    if (bodyLength < 0) return failure(malformed(`invalid Content-Length ${JSON.stringify(lengths.join(", ").slice(0, 64))}`));
    framing = Framing.Length;
  } else {
    framing = Framing.Close;
    keepAlive = false;
  }

  if (status === 205 && !(framing === Framing.Length && bodyLength === 0)) {
    // A 205 has no content (RFC 9110 15.3.6): one that comes anyway is not read (it may never
    // end), and the connection, not knowing where the next response starts, is closed.
    framing = Framing.None;
    keepAlive = false;
  }

  return {
    kind: "final",
    status,
    reason: lineEnd > 12 ? text.slice(13, lineEnd) : "",
    headers,
    framing,
    length: framing === Framing.Length ? bodyLength : 0,
    keepAlive,
    encoding: noBody ? null : encoding,
  };
}

/** `text[0..lineEnd)` is `HTTP/1.[01] DDD` followed by nothing or by a space and a reason without CR. */
function isStatusLine(text: string, lineEnd: number): boolean {
  if (lineEnd < 12 || !text.startsWith("HTTP/1.")) return false;
  const minor = text.charCodeAt(7);
  if ((minor !== 48 && minor !== 49) || text.charCodeAt(8) !== 32) return false;
  for (let i = 9; i < 12; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  if (lineEnd === 12) return true;
  if (text.charCodeAt(12) !== 32) return false;
  const cr = text.indexOf("\r", 13);
  return cr < 0 || cr >= lineEnd;
}

function failure(error: HttpClientError): HeadError {
  return { kind: "error", error };
}

/** Strips spaces and tabs (HTTP's optional whitespace) from both ends. */
export function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function hasToken(list: string, token: string): boolean {
  return list.split(",").some((t) => trimOws(t) === token);
}

/** One Content-Length, from every field and list element (RFC 9110 8.6); -1 when invalid or conflicting. */
function contentLength(values: string[]): number {
  let length = -1;
  for (const value of values) {
    for (const part of value.split(",")) {
      const digits = trimOws(part);
      if (!/^\d{1,15}$/.test(digits)) return -1;
      const n = Number(digits);
      if (length >= 0 && n !== length) return -1;
      length = n;
    }
  }
  return length;
}
