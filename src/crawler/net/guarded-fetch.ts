// One HTTP request (one redirect hop) to an address the guard has checked. The sender is given the
// checked IP literal and never the name (the crawler's client, http-client.ts, refuses names; Bun's
// fetch has no DNS lookup hook): a second lookup that answers differently (DNS rebinding) cannot
// happen. The name still goes where the server and the certificate check need it: the Host header
// and, for https, the TLS server name.
//
// A crawl sends every page through here, to one origin page after page: the URL getters (each a
// fresh string from the engine) are read once an origin, not once a request, the URL is known by
// its `origin` alone, and a kept IP literal's verdict is sent in the same turn, the sender's promise
// handed back as it is (no async wrapper, and no race of the signal for a sender that settles on
// it: abort.ts). With the request's URL parsed, a kept literal and a sender that answers at once:
// 0.92 -> 0.30 µs a request (medians of 7 x 200,000, Bun 1.4.4, load ~15; notes/bench-profile.md
// section 16, step 6).
import ipaddr from "ipaddr.js";
import { checkTarget, systemResolver, type CheckedAddress, type Resolver, type TargetPolicy } from "./address-guard.ts";
import { createHttpClient, requestTarget } from "./http-client.ts";
import { settlesLike, untilAborted } from "./abort.ts";
import type { Answer } from "./answer.ts";
import type { HopFetcher, RequestQueue } from "./request.ts";

/**
 * Sends one request, with fetch's signature, answered with an `A`: a Response from the crawler's
 * HTTP/1.1 client's `send` by default (a keep-alive pool of its own per guarded fetcher) and from
 * `fetch` for job callbacks (POSTs); a crawl's network (crawl-fetch.ts) sends with the client's
 * `answer`. Tests wrap any of them (to trust a test certificate, to record).
 */
export type Send<A extends Answer = Response> = (input: string, init: SendInit) => Promise<A>;

/** fetch's options, and the request's queue hooks for a sender that makes it wait (politeness.ts). */
export type SendInit = BunFetchRequestInit & { queue?: RequestQueue };

/**
 * A HopFetcher that runs `checkTarget` before every request (so a refused hop throws
 * TargetRefusedError and an unresolvable name a plain Error, before any connection), then
 * connects to the checked address. Redirects are returned as they are, never followed; bodies are
 * decompressed (the crawler counts decoded bytes); no proxy from the environment is used, so the
 * connection really goes to the checked address. The answer is the sender's, as it is (a fetch
 * Response's url is the IP URL: resolve Location headers against the URL that was asked for).
 */
export function createGuardedFetch(policy: TargetPolicy, resolve?: Resolver): HopFetcher<Response>;
export function createGuardedFetch<A extends Answer>(policy: TargetPolicy, resolve: Resolver | undefined, send: Send<A>): HopFetcher<A>;
export function createGuardedFetch(
  policy: TargetPolicy,
  resolve: Resolver = systemResolver,
  send: Send<Answer> = createHttpClient().send,
): HopFetcher {
  // An IP literal's verdict depends on the scheme, host and port alone (no lookup), and a crawl asks
  // for it on every page: a verdict that admits it is kept (4.8 µs a page with ipaddr.js parsing).
  const literals = new Map<string, CheckedAddress>();
  // A crawl sends the same headers object on every request, to the same host: the headers sent
  // (theirs without Host, then the URL's Host) are made once for the two.
  let lastHeaders: Record<string, string> | undefined;
  let lastHost = "";
  let sent: Record<string, string> = {};
  // A crawl asks for one origin, page after page: what a request needs of it is read for the last one.
  let last: OriginParts | undefined;
  // The request once its address is checked, `start` its URL up to the path. A kept verdict sends
  // it in the same turn, and the sender's promise is handed back as it is: no async wrapper, and
  // when the sender settles on its signal (the crawl's, abort.ts) neither does the requester race it.
  const sendTo = (url: URL, init: Parameters<HopFetcher>[1], parts: OriginParts, start: string): Promise<Answer> => {
    const { signal, headers, target, queue, method } = init;
    const host = parts.host;
    if (headers !== lastHeaders || host !== lastHost) {
      lastHeaders = headers;
      lastHost = host;
      // Frozen: the client checks and writes a frozen record's fields once.
      sent = Object.freeze({ ...withoutHost(headers), Host: host });
    }
    const options: SendInit = { signal, headers: sent, redirect: "manual", decompress: true, proxy: false, tls: parts.tls, queue };
    if (method !== undefined) options.method = method;
    // The path and query as the URL is listed ("/x?" stays "/x?", "?q='a'" is not "?q=%27a%27"):
    // robots.txt judged that URL.
    return send(start + (target ?? requestTarget(url)), options);
  };
  const fetcher: HopFetcher = (url, init) => {
    try {
      const signal = init.signal;
      signal.throwIfAborted();
      // An opaque origin ("null") tells nothing of the URL, and a blob: URL has its inner URL's
      // origin: the scheme must match too.
      const origin = url.origin;
      let parts = last;
      if (parts === undefined || parts.origin !== origin || origin === "null" || url.protocol !== parts.protocol) {
        parts = originParts(url, origin, literals);
        last = parts;
      }
      if (parts.start !== undefined) return sendTo(url, init, parts, parts.start);
      const asked = parts;
      return untilAborted(checkTarget(url, policy, resolve), signal).then((checked) => {
        const start = startOf(asked, checked);
        if (asked.literal) {
          if (!literals.has(asked.key)) {
            if (literals.size >= MAX_LITERALS) literals.clear();
            literals.set(asked.key, checked);
          }
          asked.start = start;
        }
        return sendTo(url, init, asked, start);
      });
    } catch (err) {
      return Promise.reject(err);
    }
  };
  return settlesLike(send, fetcher);
}

/** What a request needs of its URL's origin, read once an origin. */
interface OriginParts {
  origin: string;
  protocol: string;
  host: string;
  port: string;
  /** An IP literal: its verdict is kept, by `key`. */
  literal: boolean;
  /** The scheme and host (the port decides too, and a default port is not in `host`: the scheme stands for it). */
  key: string;
  tls: BunFetchRequestInitTLS | undefined;
  /** The URL sent up to its path (scheme and checked address), once an IP literal's verdict is kept. */
  start: string | undefined;
}

function originParts(url: URL, origin: string, literals: Map<string, CheckedAddress>): OriginParts {
  const hostname = url.hostname;
  const protocol = url.protocol;
  const host = url.host;
  const literal = isIpLiteral(hostname);
  const key = `${protocol}//${host}`;
  const parts: OriginParts = {
    origin,
    protocol,
    host,
    port: url.port,
    literal,
    key,
    tls: protocol === "https:" ? tlsFor(hostname, literal) : undefined,
    start: undefined,
  };
  const kept = literal ? literals.get(key) : undefined;
  if (kept !== undefined) parts.start = startOf(parts, kept);
  return parts;
}

/** The URL sent up to its path: the scheme and the checked address, with the URL's port. */
function startOf(parts: OriginParts, { address, family }: CheckedAddress): string {
  return `${parts.protocol}//${family === 6 ? `[${address}]` : address}${parts.port === "" ? "" : `:${parts.port}`}`;
}

/**
 * For a name, the TLS server name: the sender sends it as SNI and verifies the certificate against
 * it (not against the IP in the URL, and never against the Host header). An IP literal needs
 * nothing: the URL already holds it. No `checkServerIdentity` callback: the built-in check already
 * uses `serverName` (test/crawler/net/guarded-fetch.test.ts proves both a match and a mismatch, with
 * the crawler's client and with fetch), and fetch opens a fresh connection for every request that
 * carries one.
 */
function tlsFor(hostname: string, literal: boolean): BunFetchRequestInitTLS | undefined {
  if (literal) return undefined;
  return { serverName: hostname.replace(/\.$/, "") };
}

const MAX_LITERALS = 1_024;

/** An IPv6 literal ("[...]") or a dotted IPv4 address: the URL parser has normalised every other IPv4 spelling. */
function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith("[") || ipaddr.IPv4.isValidFourPartDecimal(hostname);
}

function withoutHost(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== "host"));
}
