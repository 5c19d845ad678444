// Option `auth` of a crawl (contract: "Crawling protected sites"): its shape and limits, read from
// the request body at step 3, and the one redaction that everything showing options goes through.
// No message ever holds a value: a header's name is all a refusal may name.
import type { CrawlAuth } from "./net/credentials.ts";

export type { CrawlAuth } from "./net/credentials.ts";

export const MAX_AUTH_HEADERS = 20;
export const MAX_AUTH_COOKIES = 50;
/** Names and values, in characters (every accepted one is ASCII, so also bytes on the wire). */
export const MAX_AUTH_LENGTH = 4 * 1024;
/** What a shown password, header value or cookie value reads. */
export const REDACTED = "***";

export const AUTH_SHAPE_MESSAGE = "auth must be an object with basic, headers or cookies.";
export const authHeaderMessage = (name: string) => `auth.headers: ${name} cannot be set.`;

/** Header names a crawl decides itself (framing, the connection, the host) or that the options' own fields carry. */
const FORBIDDEN_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "upgrade",
  "te",
  "cookie",
  "authorization",
]);

/** RFC 9110 5.6.2: a token (header names, cookie names). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A header value: visible ASCII, spaces and tabs (RFC 9110 5.5 without obs-text); no CR, LF or NUL. */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
/** A cookie value: visible ASCII without `;` (which would start another cookie), `,`-tolerant as browsers are. */
const COOKIE_VALUE = /^[\x21-\x3a\x3c-\x7e]*$/;
/** RFC 7617: no control characters (C0, DEL, C1) in the user-id or the password; no ":" in the user-id. */
const CONTROL = /\p{Cc}/u;

export type ParsedAuth = { ok: true; auth: CrawlAuth } | { ok: false; message: string };

const shape = (): ParsedAuth => ({ ok: false, message: AUTH_SHAPE_MESSAGE });

/** `auth` from a request body: at least one of basic, headers, cookies, nothing else. */
export function parseCrawlAuth(value: unknown): ParsedAuth {
  if (!isObject(value)) return shape();
  const keys = Object.keys(value);
  if (keys.length === 0 || keys.some((key) => key !== "basic" && key !== "headers" && key !== "cookies")) return shape();
  const auth: CrawlAuth = {};
  if (value.basic !== undefined) {
    const basic = value.basic;
    if (!isObject(basic) || Object.keys(basic).some((key) => key !== "username" && key !== "password")) return shape();
    const { username, password } = basic;
    if (typeof username !== "string" || typeof password !== "string") return shape();
    if (username.length > MAX_AUTH_LENGTH || password.length > MAX_AUTH_LENGTH) return shape();
    if (username.includes(":") || CONTROL.test(username) || CONTROL.test(password)) return shape();
    auth.basic = { username, password };
  }
  if (value.headers !== undefined) {
    const headers = value.headers;
    if (!isObject(headers)) return shape();
    const entries = Object.entries(headers);
    if (entries.length > MAX_AUTH_HEADERS) return shape();
    const seen = new Set<string>();
    for (const [name, text] of entries) {
      if (name === "" || name.length > MAX_AUTH_LENGTH) return shape();
      const lower = name.toLowerCase();
      if (!TOKEN.test(name) || FORBIDDEN_HEADERS.has(lower) || lower.startsWith("proxy-")) {
        return { ok: false, message: authHeaderMessage(name) };
      }
      if (typeof text !== "string" || text.length > MAX_AUTH_LENGTH || !HEADER_VALUE.test(text) || seen.has(lower)) return shape();
      seen.add(lower);
    }
    auth.headers = Object.fromEntries(entries) as Record<string, string>;
  }
  if (value.cookies !== undefined) {
    const cookies = value.cookies;
    if (!isObject(cookies)) return shape();
    const entries = Object.entries(cookies);
    if (entries.length > MAX_AUTH_COOKIES) return shape();
    for (const [name, text] of entries) {
      if (name.length > MAX_AUTH_LENGTH || !TOKEN.test(name)) return shape();
      if (typeof text !== "string" || text.length > MAX_AUTH_LENGTH || !COOKIE_VALUE.test(text)) return shape();
    }
    auth.cookies = Object.fromEntries(entries) as Record<string, string>;
  }
  return { ok: true, auth };
}

/**
 * `auth` as it may be shown (job reads, lists, events, callbacks, logs, the store's options
 * column): every password, header value and cookie value "***"; names and the basic username kept.
 */
export function redactAuth(auth: CrawlAuth): CrawlAuth {
  const redacted: CrawlAuth = {};
  if (auth.basic) redacted.basic = { username: auth.basic.username, password: REDACTED };
  if (auth.headers) redacted.headers = Object.fromEntries(Object.keys(auth.headers).map((name) => [name, REDACTED]));
  if (auth.cookies) redacted.cookies = Object.fromEntries(Object.keys(auth.cookies).map((name) => [name, REDACTED]));
  return redacted;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
