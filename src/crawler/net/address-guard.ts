// Step 4 of admission (src/admission/admission.ts): may the crawler connect to this target? As in Stripe's
// Smokescreen and the OWASP SSRF cheat sheet: resolve the name once, check every address, and
// hand back the one address the caller must connect to (see guarded-fetch.ts).
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

/** The target (or a redirect hop of the start URL) is an address the service must not reach: 400. */
export class TargetRefusedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "TargetRefusedError";
  }
}

/** One `--allow-target HOST[:PORT]` entry; no port means any port. */
export interface AllowedTarget {
  host: string;
  port?: number;
}

export interface TargetPolicy {
  /** `--allow-private-targets`: no address or port check at all (an operator testing locally). */
  allowPrivate: boolean;
  allowTargets: AllowedTarget[];
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), every address in its order. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address }) => ({ address, family: familyOf(address) }));
};

// ---------------------------------------------------------------------------------------------
// Address ranges

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Label -> CIDRs. Order matters: the first label whose range holds the address wins. */
function ranges(table: Record<string, string[]>): [string, Range[]][] {
  return Object.entries(table).map(([label, cidrs]) => [label, cidrs.map((cidr) => ipaddr.parseCIDR(cidr))]);
}

const IPV4_BLOCKED = ranges({
  unspecified: ["0.0.0.0/8"],
  loopback: ["127.0.0.0/8"],
  private: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"],
  "carrier-grade NAT": ["100.64.0.0/10"],
  "link-local": ["169.254.0.0/16"],
  "IETF protocol assignment": ["192.0.0.0/24"],
  documentation: ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"],
  "6to4 relay anycast": ["192.88.99.0/24"],
  benchmarking: ["198.18.0.0/15"],
  multicast: ["224.0.0.0/4"],
  broadcast: ["255.255.255.255/32"],
  reserved: ["240.0.0.0/4"],
});

/** IPv6 forms that carry an IPv4 address: they are as reachable as the IPv4 addresses inside. */
const IPV6_EMBEDDING: { label: string; range: Range; embedded: (parts: number[]) => ipaddr.IPv4[] }[] = [
  { label: "IPv4-mapped", range: ipaddr.parseCIDR("::ffff:0:0/96"), embedded: (p) => [ipv4At(p, 6)] },
  { label: "IPv4-translated", range: ipaddr.parseCIDR("::ffff:0:0:0/96"), embedded: (p) => [ipv4At(p, 6)] },
  { label: "NAT64", range: ipaddr.parseCIDR("64:ff9b::/96"), embedded: (p) => [ipv4At(p, 6)] },
  // 6to4: the IPv4 address is bits 16-47.
  { label: "6to4", range: ipaddr.parseCIDR("2002::/16"), embedded: (p) => [ipv4At(p, 1)] },
  // Teredo: the server is bits 32-63, the client the last 32 bits inverted.
  {
    label: "Teredo",
    range: ipaddr.parseCIDR("2001::/32"),
    embedded: (p) => [ipv4At(p, 2), ipv4At(p, 6, 0xffff)],
  },
];

const IPV6_BLOCKED = ranges({
  unspecified: ["::/128"],
  loopback: ["::1/128"],
  // Deprecated IPv4-compatible form; ipaddr.js calls `::7f00:1` unicast.
  "IPv4-compatible": ["::/96"],
  // RFC 8215 local-use NAT64 is not globally reachable, whatever it embeds.
  "local-use NAT64": ["64:ff9b:1::/48"],
  discard: ["100::/64"],
  dummy: ["100:0:0:1::/64"],
  benchmarking: ["2001:2::/48"],
  ORCHID: ["2001:10::/28", "2001:20::/28"],
  // The rest of 2001::/23 (AMT, AS112, drone tags, ...): never a web site.
  "IETF protocol assignment": ["2001::/23"],
  documentation: ["2001:db8::/32", "3fff::/20"],
  "segment routing": ["5f00::/16"],
  "unique local": ["fc00::/7"],
  "link-local": ["fe80::/10"],
  "site-local": ["fec0::/10"],
  multicast: ["ff00::/8"],
});

/** All global unicast space is allocated from 2000::/3; the rest of the IPv6 space is reserved. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

const UNPARSABLE = "unparsable";

/**
 * Why an IP may not be reached, or null when it is a public unicast address. The answer is a
 * label such as "loopback", "private", "carrier-grade NAT" or, for IPv6 forms embedding IPv4,
 * the form and the IPv4 label ("IPv4-mapped loopback", "Teredo private"); a mapped or embedded
 * public IPv4 address is allowed. Anything ipaddr.js does not call unicast is refused too, and so
 * is text that is not a plain IPv4 (four decimal parts) or IPv6 address ("unparsable").
 */
export function blockedRange(ip: string): string | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(ip)) return blockedIpv4(ipaddr.IPv4.parse(ip));
  if (ipaddr.IPv6.isValid(ip)) return blockedIpv6(ipaddr.IPv6.parse(ip));
  return UNPARSABLE;
}

function blockedIpv4(ip: ipaddr.IPv4): string | null {
  return firstMatch(ip, IPV4_BLOCKED) ?? specialPurpose(ip.range());
}

function blockedIpv6(ip: ipaddr.IPv6): string | null {
  for (const { label, range, embedded } of IPV6_EMBEDDING) {
    if (!ip.match(range)) continue;
    for (const inner of embedded(ip.parts)) {
      const reason = blockedIpv4(inner);
      if (reason) return `${label} ${reason}`;
    }
    return null;
  }
  const reason = firstMatch(ip, IPV6_BLOCKED);
  if (reason) return reason;
  if (!ip.match(IPV6_GLOBAL_UNICAST)) return "reserved";
  return specialPurpose(ip.range());
}

function firstMatch(ip: ipaddr.IPv4 | ipaddr.IPv6, table: [string, Range[]][]): string | null {
  for (const [label, list] of table) {
    if (list.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return label;
  }
  return null;
}

/** ipaddr.js knows a few more special-purpose blocks (AS112, AMT, ...): refuse them by name. */
function specialPurpose(range: string): string | null {
  return range === "unicast" ? null : `special-purpose (${range})`;
}

/** The IPv4 address held in hextets `at` and `at + 1`, each XORed with `mask`. */
function ipv4At(parts: number[], at: number, mask = 0): ipaddr.IPv4 {
  const high = (parts[at] ?? 0) ^ mask;
  const low = (parts[at + 1] ?? 0) ^ mask;
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

// ---------------------------------------------------------------------------------------------
// Targets

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443 };

/**
 * Parses `--allow-target HOST[:PORT]`: `host`, `host:port`, an IPv4 address with or without a
 * port, an IPv6 address bare (`::1`, no port) or in brackets (`[::1]:8080`). The host is kept
 * normalised the way a URL normalises it (lower case, IPv4 spellings, IPv6 compression), without
 * brackets or a trailing dot, so it compares with `hostKey(url.hostname)`.
 */
export function parseAllowTarget(spec: string): AllowedTarget {
  const invalid = (why: string) => new Error(`"${spec}" ${why}`);
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(spec);
  const bareIpv6 = !bracketed && (spec.match(/:/g)?.length ?? 0) > 1;
  const plain = bracketed || bareIpv6 ? null : /^([^:]+)(?::(\d+))?$/.exec(spec);
  const host = bracketed?.[1] ?? (bareIpv6 ? spec : plain?.[1]);
  const portText = bracketed?.[2] ?? plain?.[2];
  if (!host) throw invalid("is not HOST or HOST:PORT.");
  const isIpv6 = Boolean(bracketed) || bareIpv6;
  if (isIpv6 ? !ipaddr.IPv6.isValid(host) : /[\s/\\?#@[\]%]/.test(host)) {
    throw invalid(isIpv6 ? "is not a valid IPv6 address." : "is not a valid host name.");
  }
  let hostname: string;
  try {
    hostname = new URL(`http://${isIpv6 ? `[${host}]` : host}/`).hostname;
  } catch {
    throw invalid("is not a valid host name.");
  }
  if (portText === undefined) return { host: hostKey(hostname) };
  const port = Number(portText);
  if (portText.length > 5 || port < 1 || port > 65535) throw invalid("has a port outside 1-65535.");
  return { host: hostKey(hostname), port };
}

/** A URL hostname as compared with allow-list entries: no brackets, no trailing dot. */
function hostKey(hostname: string): string {
  return hostname
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.+$/, "")
    .toLowerCase();
}

/** RFC 6761: `localhost` and its subdomains are loopback, whatever DNS would say. */
function isLocalhost(key: string): boolean {
  return key === "localhost" || key.endsWith(".localhost");
}

function portAllowed(port: number): boolean {
  return port === 80 || port === 443 || (port >= 1024 && port <= 65535);
}

function familyOf(address: string): 4 | 6 {
  return address.includes(":") ? 6 : 4;
}

function withArticle(label: string): string {
  return `${/^(?:[aeioAEIO]|un(?!i))/.test(label) ? "an" : "a"} ${label}`;
}

/** `lead` reads "127.0.0.1 is" or "db.example resolves to 10.0.0.1,"; the label completes it. */
function refused(lead: string, label: string): TargetRefusedError {
  const what = label === UNPARSABLE ? "not a valid IP address" : `${withArticle(label)} address`;
  return new TargetRefusedError(`Target address not allowed: ${lead} ${what}.`);
}

/**
 * Resolves and checks a target; returns the address to connect to or throws
 * TargetRefusedError with a message naming the reason.
 *
 * - Port: 80, 443 and 1024-65535 only, checked before any lookup.
 * - `localhost` / `*.localhost` are loopback (127.0.0.1) without a lookup; IP literals are
 *   classified without a lookup; other names are resolved once and refused when ANY address is
 *   blocked, so a name cannot mix a public and a private answer.
 * - A matching `--allow-target` entry (host, and port when it names one) or `allowPrivate` lifts
 *   both the port and the address checks.
 * - A name that does not resolve is not a refusal but a crawl failure: a plain
 *   `Error("DNS lookup failed for <host>")`, which the crawler reports as 502.
 */
export async function checkTarget(url: URL, policy: TargetPolicy, resolve: Resolver): Promise<CheckedAddress> {
  const key = hostKey(url.hostname);
  const port = url.port === "" ? (DEFAULT_PORTS[url.protocol] ?? 0) : Number(url.port);
  const open =
    policy.allowPrivate || policy.allowTargets.some((entry) => entry.host === key && (entry.port === undefined || entry.port === port));

  if (!open && !portAllowed(port)) {
    throw new TargetRefusedError(`Target port ${port} not allowed: only 80, 443 and 1024-65535.`);
  }

  if (isLocalhost(key)) {
    if (!open) throw refused(`${key} is`, "loopback");
    return { address: "127.0.0.1", family: 4 };
  }

  const literal = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const literalFamily = ipaddr.IPv4.isValidFourPartDecimal(literal) ? 4 : ipaddr.IPv6.isValid(literal) ? 6 : null;
  if (literalFamily) {
    const reason = blockedRange(literal);
    if (reason && !open) throw refused(`${literal} is`, reason);
    return { address: literal, family: literalFamily };
  }

  const [first, ...rest] = await lookupAll(url.hostname, resolve);
  for (const address of [first, ...rest]) {
    const reason = blockedRange(address);
    if (reason === UNPARSABLE || (reason && !open)) throw refused(`${key} resolves to ${address},`, reason);
  }
  return { address: first, family: familyOf(first) };
}

/** Every address `hostname` resolves to, at least one. */
async function lookupAll(hostname: string, resolve: Resolver): Promise<[string, ...string[]]> {
  const failed = (cause?: unknown) => new Error(`DNS lookup failed for ${hostname}`, { cause });
  const answers = await resolve(hostname).catch((error: unknown) => {
    throw failed(error);
  });
  const [first, ...rest] = answers.map((answer) => answer.address);
  if (first === undefined) throw failed();
  return [first, ...rest];
}
