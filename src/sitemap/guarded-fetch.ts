// One HTTP request (one redirect hop) to an address the guard has checked. Bun's fetch has no DNS
// lookup hook, so it is given the checked IP literal and never the name: a second lookup that
// answers differently (DNS rebinding) cannot happen. The name still goes where the server and the
// certificate check need it: the Host header and, for https, the TLS server name.
import ipaddr from "ipaddr.js";
import { checkTarget, systemResolver, type CheckedAddress, type Resolver, type TargetPolicy } from "./address-guard.ts";
import { untilAborted, type HopFetcher } from "./request.ts";

/** Sends one request: `fetch` in production; tests wrap it (to trust a test certificate, to record). */
export type Send = (input: string, init: BunFetchRequestInit) => Promise<Response>;

/**
 * A HopFetcher that runs `checkTarget` before every request (so a refused hop throws
 * TargetRefusedError and an unresolvable name a plain Error, before any connection), then
 * connects to the checked address. Redirects are returned as they are, never followed; bodies are
 * decompressed (the crawler counts decoded bytes); no proxy from the environment is used, so the
 * connection really goes to the checked address. Response.url is the IP URL: resolve Location
 * headers against the URL that was asked for, not against it.
 */
export function createGuardedFetch(
  policy: TargetPolicy,
  resolve: Resolver = systemResolver,
  send: Send = fetch,
): HopFetcher {
  // An IP literal's verdict depends on the scheme, host and port alone (no lookup), and a crawl asks
  // for it on every page: a verdict that admits it is kept (4.8 µs a page with ipaddr.js parsing).
  const literals = new Map<string, CheckedAddress>();
  return async (url, { signal, headers }) => {
    signal.throwIfAborted();
    // The port decides too, and a default port is not in `host`: the scheme stands for it.
    const key = isIpLiteral(url.hostname) ? `${url.protocol}//${url.host}` : undefined;
    const checked = (key && literals.get(key)) || (await untilAborted(checkTarget(url, policy, resolve), signal));
    if (key && !literals.has(key)) {
      if (literals.size >= MAX_LITERALS) literals.clear();
      literals.set(key, checked);
    }
    const { address, family } = checked;
    const authority = `${family === 6 ? `[${address}]` : address}${url.port === "" ? "" : `:${url.port}`}`;
    return send(`${url.protocol}//${authority}${url.pathname}${url.search}`, {
      signal,
      headers: { ...withoutHost(headers), Host: url.host },
      redirect: "manual",
      decompress: true,
      proxy: false,
      tls: url.protocol === "https:" ? tlsFor(url.hostname) : undefined,
    });
  };
}

/**
 * For a name, the TLS server name: Bun then sends it as SNI and verifies the certificate against
 * it (not against the IP in the URL, and never against the Host header). An IP literal needs
 * nothing: the URL already holds it. No `checkServerIdentity` callback on purpose: Bun opens a
 * fresh connection for every request that carries one, and its built-in check already uses
 * `serverName` (test/sitemap/guarded-fetch.test.ts proves both a match and a mismatch).
 */
function tlsFor(hostname: string): BunFetchRequestInitTLS | undefined {
  if (isIpLiteral(hostname)) return undefined;
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
