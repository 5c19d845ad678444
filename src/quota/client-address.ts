// The client address used for free-tier quotas and logs: the socket peer, or, when the peer is
// a trusted proxy, the rightmost X-Forwarded-For entry that is not itself a trusted proxy.
import ipaddr from "ipaddr.js";

type IP = ipaddr.IPv4 | ipaddr.IPv6;

/** The proxies whose X-Forwarded-For is believed (from `--trust-proxy`). */
export interface TrustedProxies {
  readonly ranges: readonly [IP, number][];
}

/** What `clientAddress` answers when the server could not tell the peer (no socket). */
export const UNKNOWN_CLIENT = "unknown";

/**
 * Parses `CIDR[,CIDR...]`; a plain address means just that address (/32 or /128).
 * IPv4-mapped IPv6 ranges are turned into IPv4 ranges, since peers are compared as IPv4.
 */
export function parseTrustedProxies(csv: string | string[]): TrustedProxies {
  const entries = (Array.isArray(csv) ? csv : [csv]).flatMap((part) => part.split(","));
  const ranges: [IP, number][] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === "") continue;
    const range = parseRange(entry);
    if (!range) throw new Error(`"${entry}" is not an IP address or CIDR range.`);
    ranges.push(range);
  }
  return { ranges };
}

function parseRange(entry: string): [IP, number] | null {
  const slash = entry.indexOf("/");
  const address = parseIp(slash === -1 ? entry : entry.slice(0, slash));
  if (!address) return null;
  const maxBits = address instanceof ipaddr.IPv4 ? 32 : 128;
  const bitsText = slash === -1 ? String(maxBits) : entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText)) return null;
  const bits = Number(bitsText);
  if (bits > maxBits) return null;
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && bits >= 96) {
    return [address.toIPv4Address(), bits - 96];
  }
  return [address, bits];
}

/** IPv4 only in its four-part dotted form (not `127.1` or `0x7f.1`), or IPv6. */
function parseIp(text: string): IP | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return null;
}

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`, as Bun may report IPv4 peers) becomes IPv4. */
function normalise(address: IP): IP {
  return address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
}

/** An X-Forwarded-For entry: a bare address, or `1.2.3.4:port`, `[v6]`, `[v6]:port` as some proxies write. */
function parseForwardedEntry(entry: string): IP | null {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(entry);
  if (bracketed) return parseIp(bracketed[1]!);
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(entry);
  return parseIp(v4WithPort ? v4WithPort[1]! : entry);
}

function isTrusted(address: IP, trusted: TrustedProxies): boolean {
  return trusted.ranges.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}

/**
 * The client's address. X-Forwarded-For is read only when the peer is trusted, walking from the
 * right (the entry the nearest proxy wrote) past trusted proxies. An entry that does not parse
 * ends the walk and the last trusted hop is the client: a trusted proxy wrote nonsense, and
 * nothing to its left can be believed. When every entry is trusted, the leftmost is the client.
 */
export function clientAddress(peer: string | null, forwardedFor: string | null, trusted: TrustedProxies): string {
  const parsedPeer = peer === null ? null : parseIp(peer);
  if (!parsedPeer) return peer ?? UNKNOWN_CLIENT;
  let client = normalise(parsedPeer);
  if (!forwardedFor || !isTrusted(client, trusted)) return client.toString();
  const entries = forwardedFor.split(",").map((entry) => entry.trim());
  for (let i = entries.length - 1; i >= 0; i--) {
    const hop = parseForwardedEntry(entries[i]!);
    if (!hop) break;
    client = normalise(hop);
    if (!isTrusted(client, trusted)) break;
  }
  return client.toString();
}

/**
 * clientAddress for a server: the answer for a peer that is not a trusted proxy depends on the
 * peer alone, so it is remembered (up to `maxPeers`, then forgotten wholesale) instead of parsed
 * again on every request.
 */
export function clientAddressResolver(trusted: TrustedProxies, maxPeers = 10_000) {
  // peer -> its client address, or null when the peer is a trusted proxy (X-Forwarded-For decides).
  const known = new Map<string, string | null>();
  return (peer: string | null, forwardedFor: string | null): string => {
    if (peer === null) return UNKNOWN_CLIENT;
    let client = known.get(peer);
    if (client === undefined) {
      const parsed = parseIp(peer);
      client = parsed && isTrusted(normalise(parsed), trusted) ? null : clientAddress(peer, null, trusted);
      if (known.size >= maxPeers) known.clear();
      known.set(peer, client);
    }
    return client ?? clientAddress(peer, forwardedFor, trusted);
  };
}

/** What a free-tier quota counts: the IPv4 address, or the IPv6 /64 (one subscriber's network). */
export function quotaSubject(ip: string): string {
  const parsed = parseIp(ip);
  if (!parsed) return ip;
  const address = normalise(parsed);
  if (address instanceof ipaddr.IPv4) return address.toString();
  const network = new ipaddr.IPv6([...address.parts.slice(0, 4), 0, 0, 0, 0]);
  return `${network.toString()}/64`;
}
