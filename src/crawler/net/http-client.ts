// The crawler's HTTP/1.1 client: GET requests over Bun.connect, written and parsed on the JS thread.
//
// Bun's fetch hands every request to its "HTTP Client" thread and every response back; each
// hand-off is a cross-thread wake-up, and in a crawl of the bench site that thread cost 0.056-0.075
// ms a page on top of the JS thread's work, whatever the page's size. Here the request is written
// and the response parsed where the crawl runs. Connections are kept alive per (scheme, IP address
// and port, TLS options). A body that ends within `bufferBytes` is handed over whole as a
// BufferedResponse (the bytes as they came off the socket: no stream, no copy); a longer one as a
// stream that pauses the socket while its reader is behind, and whose cancel closes the connection.
// A connection is reused only when nothing arrived on it after its last response: the request is
// written once the event loop has polled its socket (Pool.afterPoll), so bytes a server sent past a
// response (a body longer than its Content-Length, a 204's body) end the connection instead of
// answering the next request. Bytes sent after the next request was written are its answer: HTTP/1.1
// cannot tell them apart. So a server seen sending bytes nobody asked for is not trusted with a
// kept-alive connection again (its key's connections close after each response, DISTRUSTED_KEYS
// remembered at most): late stray bytes then have no next request to be taken for.
//
// It is a drop-in for guarded-fetch.ts's `Send` with the semantics the crawler had from fetch
// (redirect "manual", decompress, proxy false, tls.serverName): the URL's host is the IP literal the
// address guard checked, and a name is refused (no lookup can happen here, so no rebinding);
// headers go as given (Host included); redirects are returned, never followed; gzip, deflate and br
// bodies are decoded as they are read, so that a reader's cap on decoded bytes stops a bomb early;
// TLS is verified against `tls.serverName` (else the IP) with `tls.ca` and `rejectUnauthorized`
// honoured. Not supported: request bodies and methods other than GET and HEAD (callbacks POST with
// fetch), HTTP/2, proxies, Response.url (left empty), transfer codings other than chunked.
import type { Socket, SocketHandler } from "bun";
import { BODY_IN_MEMORY, concatBytes } from "./body.ts";

/** A protocol or connection failure; `code` is what describeFailure (request.ts) reads. */
export class HttpClientError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = "HttpClientError";
  }
}

export interface HttpClientOptions {
  /** Idle connections kept per (scheme, address, TLS options); more are closed. The crawl's concurrency. */
  maxIdlePerKey?: number;
  /** Idle connections kept in all. */
  maxIdle?: number;
  /** An idle connection is closed after this long. */
  idleTimeoutMs?: number;
  /** The status line and header fields of one response, interim ones included. */
  maxHeaderBytes?: number;
  /**
   * A body is read up to this many bytes (before decoding) before the Response is handed over:
   * one that ends within it becomes `new Response(bytes)`, a longer one a stream that starts
   * with them.
   */
  bufferBytes?: number;
  /** A body within bufferBytes is decoded at once when it decodes to at most this many bytes, else as a stream. */
  maxSyncDecodedBytes?: number;
}

export interface HttpClient {
  /** fetch's signature (GET and HEAD only): a `Send` for createGuardedFetch. */
  send: (input: string, init?: BunFetchRequestInit) => Promise<Response>;
  /** Closes the idle connections; connections in use close when their response ends. */
  close(): void;
  /** Connections opened since the client was made, and idle ones now (for tests and benchmarks). */
  stats(): { opened: number; idle: number };
}

const DEFAULTS: Required<HttpClientOptions> = {
  maxIdlePerKey: 8,
  maxIdle: 256,
  idleTimeoutMs: 4_000,
  maxHeaderBytes: 64 * 1024,
  bufferBytes: 256 * 1024,
  maxSyncDecodedBytes: 1024 * 1024,
};

/** Interim (1xx) responses skipped before giving up: a server could send them forever. */
const MAX_INTERIM = 16;
/** A chunk-size line with its extensions. */
const MAX_CHUNK_LINE = 4096;
/** Keys (scheme, address and port, TLS options) whose server sent stray bytes, remembered at most: they get no kept-alive connection. */
const DISTRUSTED_KEYS = 1024;
/** A stream body pauses the socket past this many unread bytes. */
const STREAM_HIGH_WATER = 256 * 1024;
const ACCEPT_ENCODING = "gzip, deflate, br";
/** What fetch sends when the caller names no User-Agent. */
const DEFAULT_USER_AGENT = `Bun/${Bun.version}`;
/** Statuses `new Response` refuses a body for. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const pool = new Pool({ ...DEFAULTS, ...options });
  return {
    send: (input, init) => pool.send(input, init ?? {}),
    close: () => pool.closeIdle(),
    stats: () => ({ opened: pool.opened, idle: pool.idleCount }),
  };
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Target {
  /** The pool key: scheme, address, port, TLS options (and the identity of any CA, certificate...). */
  key: string;
  hostname: string;
  port: number;
  tls: Bun.TLSOptions | undefined;
  checkServerIdentity: BunFetchRequestInitTLS["checkServerIdentity"];
  serverName: string | undefined;
}

/** One request, possibly sent twice (a reused connection that the server had closed). */
class Pending {
  retried = false;
  /** The promise is settled: a Response was handed over, or it was rejected. */
  settled = false;
  connection: Connection | null = null;
  onAbort: (() => void) | null = null;

  constructor(
    readonly target: Target,
    /** The request line and header section: ASCII as a string, else Latin-1 bytes. */
    readonly head: string | Buffer,
    readonly isHead: boolean,
    readonly decode: boolean,
    readonly reusable: boolean,
    readonly signal: AbortSignal | null,
    readonly resolve: (res: Response) => void,
    readonly reject: (err: unknown) => void,
  ) {}

  succeed(res: Response): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(res);
  }

  fail(err: unknown): void {
    this.detachSignal();
    if (this.settled) return;
    this.settled = true;
    this.reject(err);
  }

  detachSignal(): void {
    if (this.onAbort !== null) {
      this.signal!.removeEventListener("abort", this.onAbort);
      this.onAbort = null;
    }
  }
}

class Pool {
  opened = 0;
  idleCount = 0;
  private readonly idle = new Map<string, Connection[]>();
  private sweeper: Timer | null = null;
  /** Identities of TLS option values (a CA, a client certificate) for the pool key. */
  private readonly tlsIds = new Map<unknown, number>();
  private readonly targets = new Map<string, Target>();
  /** Connections taken from the pool, waiting for a poll before their request is written. */
  private reserved: Connection[] = [];
  /** Keys whose server sent bytes nobody asked for: their connections are not kept (insertion order: oldest first). */
  private readonly distrusted = new Set<string>();
  private polling = false;

  constructor(readonly options: Required<HttpClientOptions>) {}

  send(input: string, init: BunFetchRequestInit): Promise<Response> {
    let prepared: { target: Target; head: string | Buffer; isHead: boolean; reusable: boolean };
    try {
      prepared = this.prepare(input, init);
    } catch (err) {
      return Promise.reject(err);
    }
    const signal = init.signal ?? null;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Response>((resolve, reject) => {
      const { target, head, isHead, reusable } = prepared;
      const pending = new Pending(target, head, isHead, init.decompress !== false, reusable, signal, resolve, reject);
      if (signal !== null) {
        pending.onAbort = () => {
          pending.onAbort = null;
          const reason = signal.reason;
          const connection = pending.connection;
          if (connection !== null) connection.abort(pending, reason);
          pending.fail(reason);
        };
        signal.addEventListener("abort", pending.onAbort, { once: true });
      }
      this.dispatch(pending, true);
    });
  }

  /** Starts `pending` on an idle connection of its key, else on a new one. */
  dispatch(pending: Pending, mayReuse: boolean): void {
    const connection = (mayReuse && this.take(pending.target.key)) || this.connect(pending.target);
    connection.start(pending);
  }

  private prepare(input: string, init: BunFetchRequestInit) {
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

    let host: string | undefined;
    let accept = false;
    let acceptEncoding = false;
    let userAgent = false;
    let connection: string | undefined;
    let fields = "";
    const headers = init.headers;
    if (headers !== undefined && headers !== null) {
      const pairs = headers instanceof Headers ? [...headers] : Array.isArray(headers) ? headers : null;
      const names = pairs === null ? Object.keys(headers) : null;
      const count = pairs === null ? names!.length : pairs.length;
      for (let i = 0; i < count; i++) {
        const name = pairs === null ? names![i]! : String(pairs[i]![0]);
        const value = String(pairs === null ? (headers as Record<string, string>)[name] : pairs[i]![1]);
        if (!TOKEN.test(name)) throw new TypeError(`http-client: invalid header name ${JSON.stringify(name)}`);
        if (BAD_VALUE.test(value)) throw new TypeError(`http-client: invalid value for header ${name}`);
        const lower = name.length === 4 || name.length === 6 || name.length === 10 || name.length === 15 ? name.toLowerCase() : "";
        if (lower === "host") {
          host = value;
          continue;
        }
        if (lower === "accept") accept = true;
        else if (lower === "user-agent") userAgent = true;
        else if (lower === "accept-encoding") acceptEncoding = true;
        else if (lower === "connection") connection = value;
        fields += `${name}: ${value}\r\n`;
      }
    }
    const reusable = init.keepalive !== false && !(connection !== undefined && CLOSE_TOKEN.test(connection));
    let head = `${method} ${target} HTTP/1.1\r\nHost: ${host ?? authority}\r\n${fields}`;
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

  private connect(target: Target): Connection {
    this.opened++;
    return new Connection(this, target);
  }

  private take(key: string): Connection | undefined {
    const list = this.idle.get(key);
    if (list === undefined) return undefined;
    const connection = list.pop();
    if (list.length === 0) this.idle.delete(key);
    if (connection !== undefined) this.idleCount--;
    return connection;
  }

  /** A connection whose response ended cleanly: kept for its key, or closed when there are enough (or its server is distrusted). */
  release(connection: Connection): void {
    const key = connection.target.key;
    let list = this.idle.get(key);
    if (this.distrusted.has(key)) {
      connection.close();
      return;
    }
    if ((list !== undefined && list.length >= this.options.maxIdlePerKey) || this.idleCount >= this.options.maxIdle) {
      connection.close();
      return;
    }
    if (list === undefined) {
      list = [];
      this.idle.set(key, list);
    }
    connection.idleSince = performance.now();
    list.push(connection);
    this.idleCount++;
    if (this.sweeper === null) {
      this.sweeper = setInterval(() => this.sweep(), Math.max(100, this.options.idleTimeoutMs / 4));
      this.sweeper.unref();
    }
  }

  /**
   * Writes the request of each connection taken from the pool once the event loop has polled the
   * sockets since it was taken. Bytes already sent on an idle connection when it is reused may
   * still wait in the kernel, their data event not run yet (the caller reuses it in the very turn
   * the last response ended): written at once, the request would get them as its answer. Two
   * setImmediate hops put a poll in between (one runs before the next poll, one scheduled from it
   * after); the data event then finds the connection not Busy and closes it (onData). One pair of
   * hops serves every connection taken in the same turn.
   */
  afterPoll(connection: Connection): void {
    this.reserved.push(connection);
    if (this.polling) return;
    this.polling = true;
    setImmediate(this.startPoll);
  }

  private readonly startPoll = (): void => {
    const batch = this.reserved;
    this.reserved = [];
    this.polling = false;
    setImmediate(() => {
      for (const connection of batch) connection.afterPoll();
    });
  };

  /** The server behind `key` sent stray bytes: no connection of it is kept alive from now on. */
  distrust(key: string): void {
    if (this.distrusted.has(key)) return;
    if (this.distrusted.size >= DISTRUSTED_KEYS) this.distrusted.delete(this.distrusted.values().next().value!);
    this.distrusted.add(key);
    for (const connection of [...(this.idle.get(key) ?? [])]) connection.close();
  }

  /** An idle connection that closed or misbehaved. */
  forget(connection: Connection): void {
    const list = this.idle.get(connection.target.key);
    const at = list?.indexOf(connection) ?? -1;
    if (at < 0) return;
    list!.splice(at, 1);
    if (list!.length === 0) this.idle.delete(connection.target.key);
    this.idleCount--;
  }

  private sweep(): void {
    const before = performance.now() - this.options.idleTimeoutMs;
    for (const list of [...this.idle.values()]) {
      // Oldest first: the list is a stack.
      while (list.length > 0 && list[0]!.idleSince <= before) {
        const oldest = list[0]!;
        oldest.close();
        if (list[0] === oldest) list.shift();
      }
    }
    if (this.idleCount === 0 && this.sweeper !== null) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  closeIdle(): void {
    for (const list of [...this.idle.values()]) {
      while (list.length > 0) {
        const oldest = list[0]!;
        oldest.close();
        if (list[0] === oldest) list.shift();
      }
    }
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

// ---------------------------------------------------------------------------------------------
// Connections and response parsing

const enum State {
  Connecting,
  Busy,
  Idle,
  /** Taken from the pool for a request not written yet: waiting for a poll of its socket (Pool.afterPoll). */
  Reserved,
  Closed,
}

const enum Phase {
  /** Waiting for (the rest of) a status line and header section. */
  Head,
  Body,
  /** The response has ended; the connection is released or closed. */
  Done,
}

const enum Framing {
  None,
  Length,
  Chunked,
  /** Until the server closes the connection. */
  Close,
}

const enum Chunk {
  Size,
  Data,
  /** The CRLF after a chunk's data. */
  DataEnd,
  /** Its LF, after the CR. */
  DataEndLf,
  Trailer,
}

const enum Sink {
  /** Bytes kept until the body ends (then `new Response(bytes)`) or passes bufferBytes. */
  Buffer,
  /** Bytes go to the Response's stream. */
  Stream,
  /** Nothing is handed over: a 205's (which has no body), a cancelled stream's. */
  Discard,
}

const handlers: SocketHandler<Connection> = {
  open: (socket) => socket.data.onOpen(socket),
  handshake: (socket, success, error) => socket.data.onHandshake(socket, success, error),
  data: (socket, chunk) => socket.data.onData(chunk as unknown as Buffer),
  drain: (socket) => socket.data.onDrain(),
  end: (socket) => socket.data.onEof(undefined),
  close: (socket, error) => socket.data.onEof(error),
  error: (socket, error) => socket.data.onError(error),
  connectError: (socket, error) => socket.data.onError(error),
};

class Connection {
  state = State.Connecting;
  socket: Socket<Connection> | null = null;
  /** Responses read to their end on this connection. */
  served = 0;
  idleSince = 0;
  private pending: Pending | null = null;
  private unsent: Buffer | null = null;
  private paused = false;

  // The current response.
  private phase = Phase.Head;
  /** Pieces of an unfinished header section (or chunk-size line, or trailer line), joined once it ends. */
  private partial: Buffer[] | null = null;
  private partialLength = 0;
  private headBytes = 0;
  private interim = 0;
  private gotBytes = false;
  private status = 0;
  private statusText = "";
  private headers: Headers | null = null;
  private keepAlive = false;
  private encodings: string[] | null = null;
  private framing = Framing.None;
  private remaining = 0;
  private chunk = Chunk.Size;
  private sink = Sink.Buffer;
  private parts: Uint8Array[] = [];
  private size = 0;
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;

  constructor(
    private readonly pool: Pool,
    readonly target: Target,
  ) {
    try {
      Bun.connect<Connection>({
        hostname: target.hostname,
        port: target.port,
        tls: target.tls,
        data: this,
        socket: handlers,
      }).catch((err: unknown) => this.onError(err as Error));
    } catch (err) {
      // Options Bun refuses (a malformed CA, say): the request fails like a refused connection.
      queueMicrotask(() => this.onError(err as Error));
    }
  }

  start(pending: Pending): void {
    this.pending = pending;
    pending.connection = this;
    this.phase = Phase.Head;
    this.partial = null;
    this.partialLength = 0;
    this.headBytes = 0;
    this.interim = 0;
    this.gotBytes = false;
    this.headers = null;
    this.encodings = null;
    this.sink = Sink.Buffer;
    this.parts = [];
    this.size = 0;
    this.controller = null;
    if (this.state === State.Idle) {
      this.state = State.Reserved;
      this.socket!.ref();
      this.pool.afterPoll(this);
    }
    // A new connection writes once it is open (and, for TLS, verified).
  }

  /**
   * The event loop has polled the sockets since this idle connection was taken: the request is
   * written, unless something arrived on it meanwhile (or it closed). Bytes that came between two
   * responses are nobody's answer; the connection is gone and the request goes on another one.
   */
  afterPoll(): void {
    const pending = this.pending;
    if (this.state === State.Reserved) {
      this.state = State.Busy;
      this.write(pending!.head);
      return;
    }
    // Closed meanwhile (stray bytes, the server's close or an error); an abort took the request away.
    if (pending === null) return;
    this.pending = null;
    pending.connection = null;
    this.pool.dispatch(pending, true);
  }

  onOpen(socket: Socket<Connection>): void {
    this.socket = socket;
    if (this.state === State.Closed) {
      socket.terminate();
      return;
    }
    if (this.target.tls === undefined) this.ready();
  }

  onHandshake(socket: Socket<Connection>, success: boolean, error: Error | null): void {
    if (this.state !== State.Connecting) return;
    this.socket = socket;
    if (!success && this.target.tls!.rejectUnauthorized !== false) {
      this.fail(error ?? new HttpClientError("TLS handshake failed", "ERR_TLS_HANDSHAKE"), true);
      return;
    }
    const check = this.target.checkServerIdentity;
    if (check !== undefined && this.target.tls!.rejectUnauthorized !== false) {
      const refused = check(this.target.serverName ?? this.target.hostname, socket.getPeerCertificate());
      if (refused) {
        this.fail(refused, true);
        return;
      }
    }
    this.ready();
  }

  private ready(): void {
    this.state = State.Busy;
    if (this.pending !== null) this.write(this.pending.head);
  }

  private write(data: string | Buffer): void {
    const written = this.socket!.write(data);
    // What the socket did not take is written on drain.
    if (written < (typeof data === "string" ? data.length : data.byteLength)) {
      this.unsent = (typeof data === "string" ? Buffer.from(data, "latin1") : data).subarray(Math.max(0, written));
    }
  }

  onDrain(): void {
    const unsent = this.unsent;
    if (unsent === null || this.state !== State.Busy) return;
    this.unsent = null;
    this.write(unsent);
  }

  onData(chunk: Buffer): void {
    if (this.state !== State.Busy || this.pending === null || this.phase === Phase.Done) {
      // Bytes nobody asked for (a second response, a stray byte on an idle connection or on one taken
      // from the pool whose request is not written yet: afterPoll then sends the request elsewhere).
      this.pool.distrust(this.target.key);
      this.destroy();
      return;
    }
    this.gotBytes = true;
    let at = 0;
    if (this.phase === Phase.Head) {
      at = this.readHead(chunk);
      if (at < 0) return;
    }
    if (this.phase === Phase.Body) this.readBody(chunk, at);
    else if ((this.phase as Phase) === Phase.Done && at < chunk.byteLength) {
      this.pool.distrust(this.target.key);
      this.destroy();
    }
  }

  /** Parses header sections from `chunk`; the offset of the body's first byte, or -1 when there is none yet. */
  private readHead(chunk: Buffer): number {
    const max = this.pool.options.maxHeaderBytes;
    let data = chunk;
    let scanFrom = 0;
    if (this.partial !== null) {
      // What came before is joined to this chunk only when the section can end in it: a head sent
      // a byte at a time costs its length, not its length squared.
      if (headEnd(Buffer.concat([lastBytes(this.partial, 3), chunk]), 0) < 0) {
        if (this.headBytes + this.partialLength + chunk.byteLength > max) return this.protocolError(headersTooLarge(max));
        this.keep(chunk);
        return -1;
      }
      scanFrom = Math.max(0, this.partialLength - 3);
      data = this.joinKept(chunk);
    }
    let start = 0;
    for (;;) {
      const end = headEnd(data, Math.max(start, scanFrom));
      if (end < 0) {
        if (this.headBytes + data.byteLength - start > max) return this.protocolError(headersTooLarge(max));
        this.keep(data.subarray(start));
        return -1;
      }
      this.headBytes += end - start;
      if (this.headBytes > max) return this.protocolError(headersTooLarge(max));
      const final = this.parseHead(data.toString("latin1", start, end));
      if (final === null) return -1;
      // A final response: its body starts here. The rest of `chunk`, as an offset into it.
      if (final) return chunk.byteLength - (data.byteLength - end);
      if (++this.interim > MAX_INTERIM) return this.protocolError(malformed("too many interim responses"));
      start = end;
      scanFrom = start;
    }
  }

  /**
   * One header section (with its blank line). True for a final response (set up for its body),
   * false for an interim one (skipped), null when the response failed.
   */
  private parseHead(text: string): boolean | null {
    // `text` ends with the blank line. Lines end in CRLF or LF; fields are sliced out of it in place.
    const length = text.length;
    const statusEnd = text.indexOf("\n");
    const statusLine = text.slice(0, text.charCodeAt(statusEnd - 1) === 13 ? statusEnd - 1 : statusEnd);
    const match = STATUS_LINE.exec(statusLine);
    if (match === null) {
      this.fail(malformed(`invalid status line ${JSON.stringify(statusLine.slice(0, 64))}`), false);
      return null;
    }
    const status = Number(match[2]);
    if (status === 101) {
      this.fail(malformed("unexpected 101 Switching Protocols"), false);
      return null;
    }
    if (status < 100 || status > 599) {
      this.fail(malformed(`invalid status ${status}`), false);
      return null;
    }
    if (status < 200) return false;

    const headers = new Headers();
    const http10 = match[1] === "0";
    let keepAlive = !http10;
    let lengths: string[] | null = null;
    let transfer: string | null = null;
    let encoding: string | null = null;
    let last = "";
    try {
      for (let at = statusEnd + 1; at < length; ) {
        const lf = text.indexOf("\n", at);
        const next = lf < 0 ? length : lf + 1;
        let end = lf < 0 ? length : lf;
        if (end > at && text.charCodeAt(end - 1) === 13) end--;
        if (end === at) {
          at = next;
          continue;
        }
        const first = text.charCodeAt(at);
        // obs-fold (RFC 9112 5.2): the line continues the previous field's value, and is read as
        // part of it below: framing and decoding follow the value the Response's headers show.
        const folded = first === 32 || first === 9;
        let name: string;
        let value: string;
        if (folded) {
          if (last === "") throw malformed("folded line without a field");
          name = last;
          value = trimOws(text.slice(at, end));
          headers.set(name, `${headers.get(name)} ${value}`);
        } else {
          const colon = text.indexOf(":", at);
          if (colon <= at || colon >= end) throw malformed("header line without a name");
          name = text.slice(at, colon);
          let from = colon + 1;
          let to = end;
          while (from < to && (text.charCodeAt(from) === 32 || text.charCodeAt(from) === 9)) from++;
          while (to > from && (text.charCodeAt(to - 1) === 32 || text.charCodeAt(to - 1) === 9)) to--;
          value = text.slice(from, to);
          headers.append(name, value);
          last = name;
        }
        at = next;
        const separator = folded ? " " : ", ";
        switch (name.length) {
          case 10:
            if (name.toLowerCase() === "connection") {
              const tokens = value.toLowerCase();
              if (hasToken(tokens, "close")) keepAlive = false;
              else if (http10 && hasToken(tokens, "keep-alive")) keepAlive = true;
            }
            break;
          case 14:
            if (name.toLowerCase() === "content-length") {
              if (folded) lengths![lengths!.length - 1] += ` ${value}`;
              else {
                lengths ??= [];
                lengths.push(value);
              }
            }
            break;
          case 16:
            if (name.toLowerCase() === "content-encoding") encoding = encoding === null ? value : `${encoding}${separator}${value}`;
            break;
          case 17:
            if (name.toLowerCase() === "transfer-encoding") transfer = transfer === null ? value : `${transfer}${separator}${value}`;
            break;
        }
      }
    } catch (err) {
      // Headers throws a TypeError for a name that is not a token or a value with NUL or CR.
      this.fail(err instanceof HttpClientError ? err : malformed("invalid header field"), false);
      return null;
    }

    this.status = status;
    this.statusText = match[3] ?? "";
    this.headers = headers;
    this.keepAlive = keepAlive && this.pending!.reusable;
    const pending = this.pending!;
    const noBody = pending.isHead || status === 204 || status === 304;
    if (noBody) this.framing = Framing.None;
    else if (transfer !== null) {
      const codings = transfer
        .toLowerCase()
        .split(",")
        .map(trimOws)
        .filter((c) => c !== "" && c !== "identity");
      if (codings.length === 0) this.framing = Framing.Close;
      else if (codings.length === 1 && codings[0] === "chunked") this.framing = Framing.Chunked;
      else {
        this.fail(new HttpClientError(`unsupported transfer coding ${JSON.stringify(transfer)}`, "ERR_HTTP_UNSUPPORTED_ENCODING"), false);
        return null;
      }
      this.chunk = Chunk.Size;
      // RFC 9112 6.1: both framings at once may be an attempt at request smuggling: not reused.
      if (lengths !== null || http10) this.keepAlive = false;
      // Transfer-Encoding overrides it (RFC 9112 6.3): left in, it would tell a reader (readCapped)
      // that an endless body is short.
      if (lengths !== null) headers.delete("content-length");
    } else if (lengths !== null) {
      const length = contentLength(lengths);
      if (length < 0) {
        this.fail(malformed(`invalid Content-Length ${JSON.stringify(lengths.join(", ").slice(0, 64))}`), false);
        return null;
      }
      this.framing = Framing.Length;
      this.remaining = length;
    } else {
      this.framing = Framing.Close;
      this.keepAlive = false;
    }

    if (encoding !== null && pending.decode && !noBody) {
      const codings = encoding
        .toLowerCase()
        .split(",")
        .map(trimOws)
        .filter((c) => c !== "" && c !== "identity");
      for (const coding of codings) {
        if (!DECODERS.has(coding)) {
          this.fail(new HttpClientError(`unsupported content encoding ${JSON.stringify(coding)}`, "ERR_HTTP_UNSUPPORTED_ENCODING"), false);
          return null;
        }
      }
      if (codings.length > 0) this.encodings = codings;
    }

    if (status === 205 && !(this.framing === Framing.Length && this.remaining === 0)) {
      // A 205 has no content (RFC 9110 15.3.6): one that comes anyway is not read (it may never
      // end), and the connection, not knowing where the next response starts, is closed.
      this.framing = Framing.None;
      this.keepAlive = false;
    }

    this.phase = Phase.Body;
    if (NULL_BODY.has(status)) {
      this.sink = Sink.Discard;
      pending.succeed(new Response(null, this.init()));
    }
    if (this.framing === Framing.None || (this.framing === Framing.Length && this.remaining === 0)) this.bodyEnd();
    return true;
  }

  private init(): ResponseInit {
    return { status: this.status, statusText: VALID_REASON.test(this.statusText) ? this.statusText : "", headers: this.headers! };
  }

  /** Feeds body bytes from `chunk[at..]` through the framing. */
  private readBody(chunk: Buffer, at: number): void {
    const length = chunk.byteLength;
    switch (this.framing) {
      case Framing.Length: {
        const take = Math.min(this.remaining, length - at);
        if (take > 0) {
          this.remaining -= take;
          this.bodyBytes(new Uint8Array(chunk.buffer, chunk.byteOffset + at, take));
        }
        if (this.remaining === 0 && this.phase === Phase.Body) {
          // More than the response: the server sent something it was not asked for.
          if (at + take < length) {
            this.keepAlive = false;
            this.pool.distrust(this.target.key);
          }
          this.bodyEnd();
        }
        return;
      }
      case Framing.Close:
        if (at < length) this.bodyBytes(new Uint8Array(chunk.buffer, chunk.byteOffset + at, length - at));
        return;
      case Framing.Chunked:
        this.readChunked(chunk, at);
        return;
      case Framing.None:
        // A body after a response that has none (204, 304, a 205's, HEAD's): nobody asked for it.
        if (at < length) {
          this.pool.distrust(this.target.key);
          this.destroy();
        }
        return;
    }
  }

  private readChunked(input: Buffer, offset: number): void {
    const max = this.pool.options.maxHeaderBytes;
    let data = input;
    let at = offset;
    if (this.partial !== null) {
      // The rest of a chunk-size or trailer line: joined once its end has come.
      if (input.indexOf(10, offset) < 0) {
        const pending = this.partialLength + input.byteLength - offset;
        if (this.chunk === Chunk.Size && pending > MAX_CHUNK_LINE) return void this.bodyError(malformed("chunk-size line too long"));
        if (this.chunk === Chunk.Trailer && this.headBytes + pending > max) return void this.bodyError(headersTooLarge(max));
        this.keep(input.subarray(offset));
        return;
      }
      data = this.joinKept(input.subarray(offset));
      at = 0;
    }
    // The chunks' data in this read is handed on as one piece: a body in 1-byte chunks would
    // otherwise cost an array (and a stream read, and a place in readCapped's list) per byte.
    const run: Uint8Array[] = [];
    const ended = this.readChunks(data, at, run);
    if (this.phase !== Phase.Body) return;
    if (run.length > 0)
      this.bodyBytes(
        concatBytes(
          run,
          run.reduce((sum, piece) => sum + piece.byteLength, 0),
        ),
      );
    if (ended) this.bodyEnd();
  }

  /** Parses chunks from `data[at..]`, their data into `run`; true when the body ended in it. */
  private readChunks(data: Buffer, at: number, run: Uint8Array[]): boolean {
    const max = this.pool.options.maxHeaderBytes;
    const length = data.byteLength;
    while (at < length) {
      switch (this.chunk) {
        case Chunk.Size: {
          const lf = data.indexOf(10, at);
          if (lf < 0) {
            if (length - at > MAX_CHUNK_LINE) return this.chunkError(malformed("chunk-size line too long"));
            this.keep(data.subarray(at));
            return false;
          }
          if (lf - at > MAX_CHUNK_LINE) return this.chunkError(malformed("chunk-size line too long"));
          const size = chunkSize(data.toString("latin1", at, lf));
          if (size < 0) return this.chunkError(malformed("invalid chunk size"));
          at = lf + 1;
          if (size === 0) {
            this.chunk = Chunk.Trailer;
            this.headBytes = 0;
          } else {
            this.chunk = Chunk.Data;
            this.remaining = size;
          }
          break;
        }
        case Chunk.Data: {
          const take = Math.min(this.remaining, length - at);
          this.remaining -= take;
          run.push(new Uint8Array(data.buffer, data.byteOffset + at, take));
          at += take;
          if (this.remaining === 0) this.chunk = Chunk.DataEnd;
          break;
        }
        case Chunk.DataEnd: {
          // CRLF, or a bare LF.
          if (data[at] === 13) {
            at++;
            this.chunk = Chunk.DataEndLf;
            break;
          }
          if (data[at] !== 10) return this.chunkError(malformed("chunk data not followed by CRLF"));
          at++;
          this.chunk = Chunk.Size;
          break;
        }
        case Chunk.DataEndLf: {
          if (data[at] !== 10) return this.chunkError(malformed("chunk data not followed by CRLF"));
          at++;
          this.chunk = Chunk.Size;
          break;
        }
        case Chunk.Trailer: {
          // Trailer fields are ignored; the section ends at an empty line.
          const lf = data.indexOf(10, at);
          if (lf < 0) {
            if (this.headBytes + length - at > max) return this.chunkError(headersTooLarge(max));
            this.keep(data.subarray(at));
            return false;
          }
          this.headBytes += lf + 1 - at;
          if (this.headBytes > max) return this.chunkError(headersTooLarge(max));
          const empty = lf === at || (lf === at + 1 && data[at] === 13);
          at = lf + 1;
          if (empty) {
            if (at < length) this.keepAlive = false;
            return true;
          }
          break;
        }
      }
    }
    return false;
  }

  /** A malformed chunked body: false for readChunks. */
  private chunkError(err: Error): boolean {
    this.bodyError(err);
    return false;
  }

  /** Keeps a piece of an unfinished head or line until the rest arrives. */
  private keep(piece: Buffer): void {
    this.partial ??= [];
    this.partial.push(piece);
    this.partialLength += piece.byteLength;
  }

  /** What was kept, then `rest`, as one Buffer; nothing is kept afterwards. */
  private joinKept(rest: Buffer): Buffer {
    const joined = Buffer.concat([...this.partial!, rest]);
    this.partial = null;
    this.partialLength = 0;
    return joined;
  }

  private bodyBytes(bytes: Uint8Array): void {
    switch (this.sink) {
      case Sink.Buffer:
        this.parts.push(bytes);
        this.size += bytes.byteLength;
        if (this.size > this.pool.options.bufferBytes) this.toStream();
        return;
      case Sink.Stream: {
        const controller = this.controller!;
        controller.enqueue(bytes);
        if (!this.paused && controller.desiredSize !== null && controller.desiredSize <= 0) {
          this.paused = true;
          this.socket!.pause();
        }
        return;
      }
      case Sink.Discard:
        return;
    }
  }

  /** The body passed bufferBytes: the Response gets a stream that starts with what was read. */
  private toStream(): void {
    const parts = this.parts;
    this.parts = [];
    this.sink = Sink.Stream;
    const raw = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
          for (const part of parts) controller.enqueue(part);
        },
        pull: () => {
          if (this.paused) {
            this.paused = false;
            this.socket?.resume();
          }
        },
        cancel: () => {
          // A body read no further: the rest would have to be read before the connection could serve again.
          if (this.sink === Sink.Stream && this.phase === Phase.Body) {
            this.sink = Sink.Discard;
            this.pending?.detachSignal();
            this.pending = null;
            this.destroy();
          }
        },
      },
      { highWaterMark: STREAM_HIGH_WATER, size: (chunk) => chunk?.byteLength ?? 0 },
    );
    this.pending!.succeed(new Response(this.encodings === null ? raw : decodeStream(raw, this.encodings, parts[0]), this.init()));
  }

  private bodyEnd(): void {
    const pending = this.pending!;
    this.phase = Phase.Done;
    this.served++;
    pending.detachSignal();
    const sink = this.sink;
    const parts = this.parts;
    this.parts = [];
    if (sink === Sink.Stream) this.controller!.close();
    // The body's last bytes may have paused the socket (its reader was behind). A closed stream is
    // never pulled again, so nothing else would resume it: the next response on this connection
    // would never be read, and bytes arriving while it is idle never seen.
    if (this.paused) {
      this.paused = false;
      this.socket!.resume();
    }
    // The connection goes back before the Response is made: a caller that awaits the Response
    // and sends again finds it idle.
    this.pending = null;
    pending.connection = null;
    // A server that answered before the whole request was written leaves the rest of it unsent:
    // the next request on this connection would follow a partial one.
    if (this.keepAlive && this.state === State.Busy && this.unsent === null) {
      this.state = State.Idle;
      this.socket!.unref();
      this.pool.release(this);
    } else this.close();
    // The parts are plain Uint8Array views, not the socket's Buffers.
    if (sink === Sink.Buffer) this.deliver(pending, concatBytes(parts, this.size));
  }

  /** A whole body: decoded at once when it is small, else through a stream. */
  private deliver(pending: Pending, bytes: Uint8Array): void {
    let body: Uint8Array | ReadableStream<Uint8Array> = bytes;
    const encodings = this.encodings;
    if (encodings !== null && bytes.byteLength > 0) {
      try {
        body = decodeSync(bytes, encodings, this.pool.options.maxSyncDecodedBytes);
      } catch (err) {
        const raw = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(bytes);
            controller.close();
          },
        });
        // Too large to decode at once: as a stream, which the reader may stop early. A corrupt
        // body: the stream fails when read, as fetch's would.
        body =
          (err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE"
            ? decodeStream(raw, encodings, bytes)
            : erroredStream(decodeError(err));
      }
    }
    pending.succeed(body instanceof Uint8Array ? new BufferedResponse(body, this.init()).asResponse() : new Response(body, this.init()));
  }

  private bodyError(err: Error): void {
    if (this.sink === Sink.Stream && this.phase === Phase.Body) this.controller!.error(err);
    this.phase = Phase.Done;
    this.fail(err, false);
  }

  /** A protocol error while reading a header section: -1 for readHead. */
  private protocolError(err: Error): number {
    this.fail(err, false);
    return -1;
  }

  /**
   * The request failed: retried once on a new connection when a reused one failed before any
   * byte of the response (the server had closed it meanwhile), else rejected (or its body errored).
   */
  private fail(err: unknown, connecting: boolean): void {
    const pending = this.pending;
    this.pending = null;
    this.destroy();
    if (pending === null) return;
    pending.connection = null;
    if (this.sink === Sink.Stream && this.phase === Phase.Body) {
      this.phase = Phase.Done;
      this.controller!.error(err);
    }
    if (!connecting && !this.gotBytes && this.served > 0 && !pending.retried && !pending.settled) {
      pending.retried = true;
      this.pool.dispatch(pending, false);
      return;
    }
    pending.fail(err);
  }

  onEof(error: Error | undefined): void {
    if (this.state === State.Closed) return;
    if (this.state === State.Idle) {
      this.pool.forget(this);
      this.state = State.Closed;
      return;
    }
    // Closed by the server before the request was written: afterPoll sends it elsewhere.
    if (this.state === State.Reserved) {
      this.destroy();
      return;
    }
    // A close with an error (a reset) cuts the body short (RFC 9112 8): it falls through to the failure.
    if (this.pending !== null && this.phase === Phase.Body && this.framing === Framing.Close && error === undefined) {
      this.keepAlive = false;
      this.bodyEnd();
      return;
    }
    if (this.pending === null) {
      this.state = State.Closed;
      return;
    }
    const cause = error === undefined ? "" : `: ${error.message}`;
    const err =
      this.phase === Phase.Head
        ? new HttpClientError(`connection closed before a response${cause}`, "ECONNRESET")
        : new HttpClientError(`connection closed before the end of the response${cause}`, "ECONNRESET");
    if (this.phase === Phase.Body) this.bodyError(err);
    else this.fail(err, this.state === State.Connecting);
  }

  onError(error: Error): void {
    if (this.state === State.Closed && this.pending === null) return;
    if (this.state === State.Idle || this.state === State.Reserved) {
      this.destroy();
      return;
    }
    if (this.phase === Phase.Body && this.pending !== null) {
      this.bodyError(error);
      return;
    }
    this.fail(error, this.state === State.Connecting);
  }

  /** The request's signal aborted: the connection cannot finish this response. */
  abort(pending: Pending, reason: unknown): void {
    if (this.pending !== pending) return;
    this.pending = null;
    pending.connection = null;
    if (this.sink === Sink.Stream && this.phase === Phase.Body) this.controller!.error(reason);
    this.phase = Phase.Done;
    this.destroy();
  }

  /** A clean close: an idle connection no longer wanted, or a response after which it cannot serve. */
  close(): void {
    if (this.state === State.Idle) this.pool.forget(this);
    if (this.state === State.Closed) return;
    this.state = State.Closed;
    this.socket?.end();
  }

  /** An abrupt close: the connection is in an unknown state. */
  private destroy(): void {
    if (this.state === State.Idle) this.pool.forget(this);
    if (this.state === State.Closed) return;
    this.state = State.Closed;
    this.socket?.terminate();
  }
}

/** A bare CR is invalid (RFC 9112 2.2): in the reason it would hide the fields after it from the framing. */
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: ([^\r]*))?$/;
/** What `new Response` accepts as statusText. */
const VALID_REASON = /^[\t\x20-\x7e\x80-\xff]*$/;

function trimCr(line: string): string {
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

/** Strips spaces and tabs (HTTP's optional whitespace) from both ends. */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function hasToken(list: string, token: string): boolean {
  return list.split(",").some((t) => trimOws(t) === token);
}

/**
 * The offset just past the blank line that ends a header section, searched from `from`, or -1.
 * Lines end in CRLF or a bare LF: the section ends at the first LF followed by LF or CRLF.
 */
function headEnd(data: Uint8Array, from: number): number {
  for (let lf = data.indexOf(10, from); lf >= 0; lf = data.indexOf(10, lf + 1)) {
    const next = data[lf + 1];
    if (next === 10) return lf + 2;
    if (next === 13 && data[lf + 2] === 10) return lf + 3;
  }
  return -1;
}

/** The last `n` bytes of `pieces` (fewer when there are fewer). */
function lastBytes(pieces: Buffer[], n: number): Buffer {
  const last = pieces[pieces.length - 1]!;
  if (last.byteLength >= n || pieces.length === 1) return last.subarray(Math.max(0, last.byteLength - n));
  const joined = Buffer.concat(pieces.slice(-n));
  return joined.subarray(Math.max(0, joined.byteLength - n));
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

/** A chunk-size line's size (extensions ignored); -1 when it is not hex or too large. */
function chunkSize(line: string): number {
  const semicolon = line.indexOf(";");
  const digits = trimOws(trimCr(semicolon < 0 ? line : line.slice(0, semicolon)));
  if (!/^[0-9a-fA-F]{1,13}$/.test(digits.replace(/^0+(?=.)/, ""))) return -1;
  return parseInt(digits, 16);
}

function malformed(what: string): HttpClientError {
  return new HttpClientError(`malformed HTTP response (${what})`, "ERR_HTTP_MALFORMED");
}

function headersTooLarge(max: number): HttpClientError {
  return new HttpClientError(`HTTP response header section larger than ${max} bytes`, "ERR_HTTP_HEADERS_TOO_LARGE");
}

function decodeError(err: unknown): HttpClientError {
  return new HttpClientError(`cannot decode the response body (${(err as Error).message})`, "ERR_HTTP_DECODE");
}

function erroredStream(err: unknown): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.error(err);
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Content-Encoding

type Format = "gzip" | "deflate" | "deflate-raw" | "brotli";

const DECODERS = new Set(["gzip", "x-gzip", "deflate", "br"]);

/**
 * The decompression format of one coding. "deflate" is meant to be zlib-wrapped (RFC 9110 8.4.1.2)
 * but some servers send raw deflate: the first bytes tell (a zlib header is a multiple of 31).
 */
function formatOf(coding: string, first: Uint8Array | undefined): Format {
  if (coding === "br") return "brotli";
  if (coding === "deflate") {
    const zlibHeader =
      first !== undefined && first.byteLength >= 2 && (first[0]! & 0x0f) === 8 && ((first[0]! << 8) | first[1]!) % 31 === 0;
    return zlibHeader || first === undefined ? "deflate" : "deflate-raw";
  }
  return "gzip";
}

// node:zlib takes ~9 ms to load: start-up leaves it until a page first arrives encoded.
let zlibModule: typeof import("node:zlib") | undefined;

/** Decodes at once, the last coding applied first; throws ERR_BUFFER_TOO_LARGE past `max` bytes. */
function decodeSync(bytes: Uint8Array, encodings: string[], max: number): Uint8Array {
  zlibModule ??= require("node:zlib") as typeof import("node:zlib");
  const zlib = zlibModule;
  let out = bytes;
  for (let i = encodings.length - 1; i >= 0; i--) {
    const options = { maxOutputLength: max };
    switch (formatOf(encodings[i]!, out)) {
      case "gzip":
        out = zlib.gunzipSync(out, options);
        break;
      case "deflate":
        out = zlib.inflateSync(out, options);
        break;
      case "deflate-raw":
        out = zlib.inflateRawSync(out, options);
        break;
      case "brotli":
        out = zlib.brotliDecompressSync(out, options);
        break;
    }
  }
  return out;
}

/** Decodes as the reader reads: a gzip bomb costs what is read of it, not what it would expand to. */
function decodeStream(raw: ReadableStream<Uint8Array>, encodings: string[], first: Uint8Array | undefined): ReadableStream<Uint8Array> {
  let stream = raw;
  for (let i = encodings.length - 1; i >= 0; i--) {
    const format = formatOf(encodings[i]!, i === encodings.length - 1 ? first : undefined);
    stream = stream.pipeThrough(new DecompressionStream(format as "gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>);
  }
  return stream;
}

// ---------------------------------------------------------------------------------------------
// Responses

/** What BufferedResponse keeps of Response's own members. */
interface ResponseFields {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly bodyUsed: boolean;
}

/**
 * A Response whose whole body is in memory already. `new Response(bytes)` copies the bytes (about
 * 10 µs a page in a crawl, most of it page faults on fresh memory); this one hands them over as they
 * are: `bytes()` resolves with them, `body` is a stream of them made when first asked for. The rest
 * (status, headers, ok, ...) is Response's own.
 */
export class BufferedResponse extends (Response as unknown as new (body: null, init: ResponseInit) => ResponseFields) {
  /** readCapped takes the bytes at once rather than through a stream. */
  readonly [BODY_IN_MEMORY] = true;
  #bytes: Uint8Array | null;
  #used = false;
  #stream: ReadableStream<Uint8Array> | null = null;

  constructor(bytes: Uint8Array, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
  }

  /** The body as a stream: from then on every read goes through it. */
  #body(): ReadableStream<Uint8Array> {
    if (this.#stream === null) {
      const bytes = this.#bytes;
      this.#bytes = null;
      this.#stream = new ReadableStream<Uint8Array>({
        start(controller) {
          if (bytes !== null && bytes.byteLength > 0) controller.enqueue(bytes);
          controller.close();
        },
      });
      // A body consumed before anyone asked for the stream: the stream is read already.
      if (this.#used) void this.#stream.getReader().read();
    }
    return this.#stream;
  }

  #take(): Promise<Uint8Array> {
    if (this.#stream !== null) return new Response(this.#stream).bytes();
    if (this.#used) return Promise.reject(new TypeError("Body already used"));
    this.#used = true;
    const bytes = this.#bytes!;
    this.#bytes = null;
    return Promise.resolve(bytes);
  }

  bytes(): Promise<Uint8Array> {
    return this.#take();
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.#take();
    return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
      ? (bytes.buffer as ArrayBuffer)
      : (Uint8Array.prototype.slice.call(bytes).buffer as ArrayBuffer);
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.#take());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async blob(): Promise<Blob> {
    return new Blob([(await this.#take()) as Uint8Array<ArrayBuffer>], { type: this.headers.get("content-type") ?? "" });
  }

  async formData(): Promise<unknown> {
    return new Response((await this.#take()) as Uint8Array<ArrayBuffer>, { headers: this.headers }).formData();
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError("Body already used");
    const init = { status: this.status, statusText: this.statusText, headers: new Headers(this.headers) };
    if (this.#stream === null) return new BufferedResponse(Uint8Array.prototype.slice.call(this.#bytes!), init).asResponse();
    const [mine, theirs] = this.#stream.tee();
    this.#stream = mine;
    return new Response(theirs, init);
  }

  /** This, as the Response it is (TypeScript sees the base class without its body methods). */
  asResponse(): Response {
    return this as unknown as Response;
  }

  static {
    // `body` and `bodyUsed` are accessors on Response.prototype; TypeScript knows them as fields.
    Object.defineProperty(BufferedResponse.prototype, "body", {
      get(this: BufferedResponse) {
        return this.#body();
      },
      configurable: true,
    });
    Object.defineProperty(BufferedResponse.prototype, "bodyUsed", {
      get(this: BufferedResponse) {
        return this.#stream === null ? this.#used : this.#used || this.#stream.locked;
      },
      configurable: true,
    });
  }
}
