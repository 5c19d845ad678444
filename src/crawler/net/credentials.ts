// The crawl's credentials (option `auth`: basic auth, headers, cookies) are attached here and only
// here: a sender between the host's politeness and the HTTP client, so every request of a crawl
// passes it as the last step before the wire, pages, redirect hops, robots.txt and sitemaps alike
// (and the browser's requests when rendering comes: they use the same connection.fetch).
//
// They go to one origin: the start URL's, as sent (normalised), compared with what the request
// really goes to: its scheme and its Host header's name and port (the URL holds the checked IP).
// Not the origin after the start URL's redirects: a start URL that redirects elsewhere (another
// host, or http -> https) has already left the origin the user named, and the new one gets nothing.
// Every other request is sent with no Authorization, Cookie or Proxy-Authorization header and no
// header that holds a value the user set, whatever the caller put in its headers: a redirect chain,
// a link or a rendered page's sub-request cannot carry them elsewhere.
import { settlesLike } from "./abort.ts";
import { hostOf, hostOfUrl, type Sender } from "./politeness.ts";

/** Option `auth`, as parsed (../auth.ts checks its shape and limits): any subset of the three. */
export interface CrawlAuth {
  basic?: { username: string; password: string };
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
}

/** What a crawl's network needs to attach credentials: them, and the one origin they are for. */
export interface CrawlCredentials {
  auth: CrawlAuth;
  /** The start URL's origin ("https://example.com", "http://127.0.0.1:8080"). */
  origin: string;
}

/** Headers that carry credentials: never sent unless this layer adds them for the start origin. */
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"];

/** `send` with the credentials attached to requests for their origin, and every credential header removed from the others. */
export function withCredentials(send: Sender, credentials: CrawlCredentials): Sender {
  const { auth } = credentials;
  const origin = originKey(credentials.origin.startsWith("https:"), hostOfUrl(credentials.origin));
  const added = credentialHeaders(auth);
  // For the start origin, every header of a name the credentials set gives way to theirs. For any
  // other, the credential headers go, and a header that holds one of the user's values.
  const replaced = new Set([...CREDENTIAL_HEADERS, ...Object.keys(added).map((name) => name.toLowerCase())]);
  const values = new Map(Object.entries(added).map(([name, value]) => [name.toLowerCase(), value]));
  const ownHeader = (name: string) => !replaced.has(name.toLowerCase());
  const otherHeader = (name: string, value: string) => {
    const lower = name.toLowerCase();
    return !CREDENTIAL_HEADERS.includes(lower) && values.get(lower) !== value;
  };
  // A crawl sends one headers object again and again (guarded-fetch.ts keeps it per host): what it
  // becomes is kept for the last one seen, per kind.
  const own = { in: undefined as unknown, out: {} as Record<string, string> };
  const other = { in: undefined as unknown, out: {} as Record<string, string> };
  // The inner sender's promise is handed back as it is: it settles on the signal if that one does.
  return settlesLike(send, (input: string, init: Parameters<Sender>[1]) => {
    const headers = (init.headers ?? {}) as Record<string, string>;
    const mine = originKey(input.startsWith("https:"), hostOf(input, headers)) === origin;
    const kept = mine ? own : other;
    if (kept.in !== headers) {
      kept.in = headers;
      const entries = Object.entries(headers);
      // Frozen, as the guarded fetcher's: the client reads a frozen record once.
      kept.out = Object.freeze(
        mine
          ? { ...Object.fromEntries(entries.filter(([name]) => ownHeader(name))), ...added }
          : Object.fromEntries(entries.filter(([name, value]) => otherHeader(name, value))),
      );
    }
    return send(input, { ...init, headers: kept.out });
  });
}

const originKey = (https: boolean, host: string) => `${https ? "https" : "http"}://${host}`;

/** The header fields the credentials add: the user's headers, then Authorization and Cookie. */
function credentialHeaders(auth: CrawlAuth): Record<string, string> {
  const headers: Record<string, string> = { ...auth.headers };
  if (auth.basic) {
    const token = Buffer.from(`${auth.basic.username}:${auth.basic.password}`, "utf8").toString("base64");
    headers.Authorization = `Basic ${token}`;
  }
  const cookies = Object.entries(auth.cookies ?? {});
  if (cookies.length > 0) headers.Cookie = cookies.map(([name, value]) => `${name}=${value}`).join("; ");
  return headers;
}
