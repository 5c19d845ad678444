// Requests: where one goes (a Target: the checked IP address, port and TLS options, which key the
// pool's connections) and its request line and header section, written as fetch would write them.
//
// A crawl sends one header record for every page of a host. When it is frozen (the guarded fetcher
// and the credentials freeze theirs) its fields are checked and written once and kept with it:
// `prepare` of a page's request 1.21-1.30 µs -> 0.78-1.06 µs (Bun 1.4.4, medians of 7 x 200,000,
// three headers, on a machine at load ~30; notes/bench-profile.md section 16). A site's re-crawl
// asks for every page conditionally: its validators come beside the record (`validators`) rather
// than in a record of their own a page, which every layer's copy and this cache would miss (2 µs a
// page of an unchanged run; notes/sites.md).

const ACCEPT_ENCODING = "gzip, deflate, br";
/** What fetch sends when the caller names no User-Agent. */
const DEFAULT_USER_AGENT = `Bun/${Bun.version}`;

export interface Target {
  /** The pool key: scheme, address, port, TLS options (and the identity of any CA, certificate...). */
  key: string;
  hostname: string;
  port: number;
  tls: Bun.TLSOptions | undefined;
  checkServerIdentity: BunFetchRequestInitTLS["checkServerIdentity"];
  serverName: string | undefined;
}

/** A conditional GET's validators, from the page's previous answer: sent as If-None-Match and If-Modified-Since. */
export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

/** fetch's options as the client reads them, and a conditional request's validators. */
export type ClientInit = BunFetchRequestInit & { validators?: Validators };

/** A request ready to send. */
export interface PreparedRequest {
  target: Target;
  /** The request line and header section: ASCII as a string, else Latin-1 bytes. */
  head: string | Buffer;
  isHead: boolean;
  /** The connection may be kept alive after it (no `keepalive: false`, no `Connection: close`). */
  reusable: boolean;
}

/** What a request's headers say to the client, and their lines as written (Host aside). */
interface HeaderFields {
  host: string | undefined;
  accept: boolean;
  acceptEncoding: boolean;
  userAgent: boolean;
  connection: string | undefined;
  /** The record sets its own If-None-Match / If-Modified-Since (a user's header): a validator of that name is not sent beside it. */
  ifNoneMatch: boolean;
  ifModifiedSince: boolean;
  /** The fields but Host, each line ending in CRLF. */
  written: string;
}

/** Reads and checks a request's headers; throws a TypeError for a malformed name or value. */
function headerFields(headers: BunFetchRequestInit["headers"]): HeaderFields {
  let host: string | undefined;
  let accept = false;
  let acceptEncoding = false;
  let userAgent = false;
  let connection: string | undefined;
  let ifNoneMatch = false;
  let ifModifiedSince = false;
  let written = "";
  if (headers !== undefined && headers !== null) {
    const pairs = headers instanceof Headers ? [...headers] : Array.isArray(headers) ? headers : null;
    const names = pairs === null ? Object.keys(headers) : null;
    const count = pairs === null ? names!.length : pairs.length;
    for (let i = 0; i < count; i++) {
      const name = pairs === null ? names![i]! : String(pairs[i]![0]);
      const value = String(pairs === null ? (headers as Record<string, string>)[name] : pairs[i]![1]);
      if (!TOKEN.test(name)) throw new TypeError(`http-client: invalid header name ${JSON.stringify(name)}`);
      if (BAD_VALUE.test(value)) throw new TypeError(`http-client: invalid value for header ${name}`);
      const length = name.length;
      const lower =
        length === 4 || length === 6 || length === 10 || length === 13 || length === 15 || length === 17 ? name.toLowerCase() : "";
      if (lower === "host") {
        host = value;
        continue;
      }
      if (lower === "accept") accept = true;
      else if (lower === "user-agent") userAgent = true;
      else if (lower === "accept-encoding") acceptEncoding = true;
      else if (lower === "connection") connection = value;
      else if (lower === "if-none-match") ifNoneMatch = true;
      else if (lower === "if-modified-since") ifModifiedSince = true;
      written += `${name}: ${value}\r\n`;
    }
  }
  return { host, accept, acceptEncoding, userAgent, connection, ifNoneMatch, ifModifiedSince, written };
}

function validatorLines({ etag, lastModified }: Validators, fields: HeaderFields): string {
  let lines = "";
  if (etag !== null && !fields.ifNoneMatch) {
    if (BAD_VALUE.test(etag)) throw new TypeError("http-client: invalid value for header If-None-Match");
    lines += `If-None-Match: ${etag}\r\n`;
  }
  if (lastModified !== null && !fields.ifModifiedSince) {
    if (BAD_VALUE.test(lastModified)) throw new TypeError("http-client: invalid value for header If-Modified-Since");
    lines += `If-Modified-Since: ${lastModified}\r\n`;
  }
  return lines;
}

/** Makes requests, keeping the Targets made (one per authority and TLS options) and the identities of TLS option values. */
export class Requests {
  /** Identities of TLS option values (a CA, a client certificate) for the pool key. */
  private readonly tlsIds = new Map<unknown, number>();
  private readonly targets = new Map<string, Target>();
  /** The last frozen header record sent, and what it says. */
  private lastHeaders: unknown = null;
  private lastFields: HeaderFields | null = null;

  /** Throws a TypeError for what the client does not support or a malformed header. */
  prepare(input: string, init: ClientInit): PreparedRequest {
    const method = init.method === undefined ? "GET" : init.method.toUpperCase();
    if (method !== "GET" && method !== "HEAD") throw new TypeError(`http-client: ${method} is not supported (GET and HEAD only)`);
    if (init.body !== undefined && init.body !== null) throw new TypeError("http-client: a request body is not supported");
    // The guarded fetcher's URLs are serialised already ("http://1.2.3.4:8080/path?query"): they
    // are sliced; anything else goes through the URL parser.
    let https: boolean;
    let authority: string;
    let target: string;
    if (PLAIN_URL.test(input)) {
      https = input.charCodeAt(4) === 115;
      const from = https ? 8 : 7;
      const slash = input.indexOf("/", from);
      authority = input.slice(from, slash);
      target = input.slice(slash);
    } else {
      const url = new URL(input);
      https = url.protocol === "https:";
      if (!https && url.protocol !== "http:") throw new TypeError(`http-client: unsupported protocol ${url.protocol}`);
      authority = url.host;
      target = requestTarget(url);
    }
    const server = this.target(https, authority, https ? init.tls : undefined);

    const headers = init.headers;
    // A frozen record cannot change: its fields are checked and written once (the guarded fetcher
    // sends one frozen record, page after page).
    let fields: HeaderFields;
    if (headers !== undefined && headers !== null && headers === this.lastHeaders) fields = this.lastFields!;
    else {
      fields = headerFields(headers);
      if (
        headers !== undefined &&
        headers !== null &&
        !Array.isArray(headers) &&
        !(headers instanceof Headers) &&
        Object.isFrozen(headers)
      ) {
        this.lastHeaders = headers;
        this.lastFields = fields;
      }
    }
    const { host, accept, acceptEncoding, userAgent, connection } = fields;
    const reusable = init.keepalive !== false && !(connection !== undefined && CLOSE_TOKEN.test(connection));
    let head = `${method} ${target} HTTP/1.1\r\nHost: ${host ?? authority}\r\n${fields.written}`;
    if (init.validators !== undefined) head += validatorLines(init.validators, fields);
    if (!userAgent) head += `User-Agent: ${DEFAULT_USER_AGENT}\r\n`;
    if (!accept) head += "Accept: */*\r\n";
    if (!acceptEncoding && init.decompress !== false) head += `Accept-Encoding: ${ACCEPT_ENCODING}\r\n`;
    if (connection === undefined) head += reusable ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
    head += "\r\n";
    // Header values may hold Latin-1 bytes; an ASCII head (the usual one) is written as it is.
    return { target: server, head: NON_ASCII.test(head) ? Buffer.from(head, "latin1") : head, isHead: method === "HEAD", reusable };
  }

  /** Where a request goes: made once per authority (and TLS options) and kept. */
  private target(https: boolean, authority: string, tls: BunFetchRequestInitTLS | undefined): Target {
    const plain = !https || tls === undefined || (Object.keys(tls).length === 1 && tls.serverName !== undefined);
    const cacheKey = plain ? (https ? `https://${authority}|${tls?.serverName ?? ""}` : authority) : undefined;
    const known = cacheKey === undefined ? undefined : this.targets.get(cacheKey);
    if (known !== undefined) return known;
    const made = this.makeTarget(https, authority, tls);
    if (cacheKey !== undefined) {
      if (this.targets.size >= MAX_TARGETS) this.targets.clear();
      this.targets.set(cacheKey, made);
    }
    return made;
  }

  private makeTarget(https: boolean, authority: string, tls: BunFetchRequestInitTLS | undefined): Target {
    const bracketed = authority.startsWith("[");
    const close = bracketed ? authority.indexOf("]") : -1;
    const colon = bracketed ? (authority.charCodeAt(close + 1) === 58 ? close + 1 : -1) : authority.indexOf(":");
    const hostname = bracketed ? authority.slice(1, close) : colon < 0 ? authority : authority.slice(0, colon);
    // The address guard resolved the name already: a name here would be looked up again.
    if (bracketed ? close < 0 || !IPV6.test(hostname) : !IPV4.test(hostname))
      throw new TypeError(`http-client: ${authority} is not an IP address`);
    const port = colon < 0 ? (https ? 443 : 80) : Number(authority.slice(colon + 1));
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new TypeError(`http-client: invalid port in ${authority}`);
    if (!https)
      return { key: `http://${hostname}:${port}`, hostname, port, tls: undefined, checkServerIdentity: undefined, serverName: undefined };
    const { checkServerIdentity, servername, serverName: given, ...rest } = tls ?? {};
    const serverName = given ?? servername;
    let key = `https://${hostname}:${port}|${serverName ?? ""}`;
    // Other options (a CA, rejectUnauthorized, client certificates) are part of the key too.
    for (const name of Object.keys(rest).sort()) {
      const value = (rest as Record<string, unknown>)[name];
      if (value === undefined) continue;
      key += `|${name}=${this.idOf(value)}`;
    }
    if (checkServerIdentity !== undefined) key += `|checkServerIdentity=${this.idOf(checkServerIdentity)}`;
    const options: Bun.TLSOptions = { ...rest, rejectUnauthorized: rest.rejectUnauthorized ?? true } as Bun.TLSOptions;
    // A server name is sent as SNI and verified; without one, the certificate is verified against the IP.
    if (serverName !== undefined) options.serverName = serverName;
    return { key, hostname, port, tls: options, checkServerIdentity, serverName };
  }

  private idOf(value: unknown): number {
    let id = this.tlsIds.get(value);
    if (id === undefined) {
      id = this.tlsIds.size;
      this.tlsIds.set(value, id);
    }
    return id;
  }
}

/**
 * The request target (origin-form, RFC 9112 3.2.1) of a parsed URL: its path and query exactly as
 * serialised, an empty query included. `pathname + search` loses that one: URL.search is "" for
 * "/x?" as for "/x", and robots.txt tells them apart ("Disallow: /x$" matches only "/x").
 */
export function requestTarget(url: URL): string {
  const search = url.search;
  if (search !== "") return url.pathname + search;
  // No query or an empty one. Neither a path nor a query holds a raw "#" once serialised: the
  // first one in href starts the fragment (which `hash` leaves out when it is empty, "/x?#").
  const href = url.href;
  const hash = href.indexOf("#");
  return href.charCodeAt((hash < 0 ? href.length : hash) - 1) === 63 ? `${url.pathname}?` : url.pathname;
}

/**
 * A serialised http(s) URL with an IP literal host and nothing the URL parser would change (no dot
 * segment, no "%2e"), but for "'" in a query: the parser writes it as "%27", and the crawler
 * requests a URL as it is listed (RFC 3986 allows "'" there).
 */
const PLAIN_URL =
  /^https?:\/\/(?:\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[[0-9a-f:.]+\])(?::\d{1,5})?(?!.*(?:\/\.\.?(?:[/?]|$)|%2[eE]))\/[!$%&'()*+,\-./0-9:;=?@A-Z[\]^_a-z|~]*$/;
const NON_ASCII = /[^\0-\x7f]/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const IPV6 = /^[0-9a-fA-F:.]+$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[\0\r\n]|[^\0-\xff]/;
const CLOSE_TOKEN = /(^|[\s,])close($|[\s,])/i;
/** Targets kept (one per site and port a crawl visits); past this, forgotten and made again. */
const MAX_TARGETS = 1024;
