// One HTTP request (one redirect hop) to an address the guard has checked. The sender is given the
// checked IP literal and never the name (the crawler's client, http-client.ts, refuses names; Bun's
// fetch has no DNS lookup hook): a second lookup that answers differently (DNS rebinding) cannot
// happen. The name still goes where the server and the certificate check need it: the Host header
// and, for https, the TLS server name.
//
// A crawl sends every page through here: each URL getter (a fresh string from the engine each
// time) is read once and the sender's options are built without a spread: 1.14-1.42 -> 0.67-0.85 µs
// a request with the request's URL parsed (medians of 7 x 100,000, Bun 1.4.4, load ~15;
// notes/bench-profile.md section 16). An address whose verdict is kept is sent in the same turn, the
// sender's promise handed back as it is: no async wrapper, and no race of the signal for a sender
// that settles on it (abort.ts).
import ipaddr from "ipaddr.js";
import { checkTarget, systemResolver, type CheckedAddress, type Resolver, type TargetPolicy } from "./address-guard.ts";
import { type ClientInit, createHttpClient, requestTarget } from "./http-client.ts";
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

/** The client's options (fetch's, and a conditional request's validators), and the request's queue hooks for a sender that makes it wait (politeness.ts). */
export type SendInit = ClientInit & { queue?: RequestQueue };

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
  // A crawl asks for one host, page after page: whether it is an IP literal is kept for the last one.
  let lastHostname = "";
  let lastIsLiteral = false;
  // The request once its address is checked. A kept verdict sends it in the same turn, and the
  // sender's promise is handed back as it is: no async wrapper, and when the sender settles on its
  // signal (the crawl's, abort.ts) neither does the requester race it.
  const sendTo = (
    url: URL,
    init: Parameters<HopFetcher>[1],
    checked: CheckedAddress,
    hostname: string,
    literal: boolean,
  ): Promise<Answer> => {
    const { signal, headers, target, queue, method, validators } = init;
    // Each URL getter makes a fresh string in the engine: each is read once.
    const protocol = url.protocol;
    const host = url.host;
    const port = url.port;
    const { address, family } = checked;
    const authority = `${family === 6 ? `[${address}]` : address}${port === "" ? "" : `:${port}`}`;
    if (headers !== lastHeaders || host !== lastHost) {
      lastHeaders = headers;
      lastHost = host;
      // Frozen: the client checks and writes a frozen record's fields once.
      sent = Object.freeze({ ...withoutHost(headers), Host: host });
    }
    const options: SendInit = {
      signal,
      headers: sent,
      redirect: "manual",
      decompress: true,
      proxy: false,
      tls: protocol === "https:" ? tlsFor(hostname, literal) : undefined,
      queue,
    };
    if (method !== undefined) options.method = method;
    if (validators !== undefined) options.validators = validators;
    // The path and query as the URL is listed ("/x?" stays "/x?", "?q='a'" is not "?q=%27a%27"):
    // robots.txt judged that URL.
    return send(`${protocol}//${authority}${target ?? requestTarget(url)}`, options);
  };
  const fetcher: HopFetcher = (url, init) => {
    try {
      const signal = init.signal;
      signal.throwIfAborted();
      const hostname = url.hostname;
      if (hostname !== lastHostname) {
        lastIsLiteral = isIpLiteral(hostname);
        lastHostname = hostname;
      }
      // Read now: another request may change lastIsLiteral while this one's check is under way.
      const literal = lastIsLiteral;
      // The port decides too, and a default port is not in `host`: the scheme stands for it.
      const key = literal ? `${url.protocol}//${url.host}` : undefined;
      const kept = key === undefined ? undefined : literals.get(key);
      if (kept !== undefined) return sendTo(url, init, kept, hostname, true);
      return untilAborted(checkTarget(url, policy, resolve), signal).then((checked) => {
        if (key !== undefined && !literals.has(key)) {
          if (literals.size >= MAX_LITERALS) literals.clear();
          literals.set(key, checked);
        }
        return sendTo(url, init, checked, hostname, literal);
      });
    } catch (err) {
      return Promise.reject(err);
    }
  };
  return settlesLike(send, fetcher);
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
