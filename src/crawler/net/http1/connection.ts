// One HTTP/1.1 connection: writes a request, reads its response (the head through head.ts, then the
// body by its framing) and hands it over as a ClientAnswer (answer.ts).
//
// A body that ends within `bufferBytes` is handed over whole (the bytes as they came off the
// socket: no stream, no copy); a longer one as a stream that pauses the socket while its reader is
// behind, and whose cancel closes the connection.
import type { Socket, SocketHandler } from "bun";
import { ClientAnswer } from "./answer.ts";
import { contentCodings, decodeStream, decodeSync, erroredStream } from "./decode.ts";
import { decodeError, HttpClientError, headersTooLarge, malformed } from "./errors.ts";
import { type FinalHead, Framing, headEnd, parseResponseHead, trimOws } from "./head.ts";
import type { HttpClientOptions } from "./options.ts";
import type { Target } from "./request.ts";

/** Interim (1xx) responses skipped before giving up: a server could send them forever. */
const MAX_INTERIM = 16;
/** A chunk-size line with its extensions. */
const MAX_CHUNK_LINE = 4096;
/** A stream body pauses the socket past this many unread bytes. */
const STREAM_HIGH_WATER = 256 * 1024;
/** Statuses `new Response` refuses a body for: their answers have none. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** What `new Response` accepts as statusText. */
const VALID_REASON = /^[\t\x20-\x7e\x80-\xff]*$/;

/** What a connection needs of the pool it belongs to (pool.ts). */
export interface ConnectionPool {
  readonly options: Required<HttpClientOptions>;
  /** Starts `pending` on an idle connection of its key (when `mayReuse`), else on a new one. */
  dispatch(pending: Pending, mayReuse: boolean): void;
  /** Calls `connection.afterPoll()` once the event loop has polled the sockets. */
  afterPoll(connection: Connection): void;
  release(connection: Connection): void;
  distrust(key: string): void;
  forget(connection: Connection): void;
}

/** One request, possibly sent twice (a reused connection that the server had closed). */
export class Pending {
  retried = false;
  /** The promise is settled: an answer was handed over, or it was rejected. */
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
    readonly resolve: (res: ClientAnswer) => void,
    readonly reject: (err: unknown) => void,
  ) {}

  succeed(res: ClientAnswer): void {
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
  /** Bytes kept until the body ends (then handed over as they are) or passes bufferBytes. */
  Buffer,
  /** Bytes go to the answer's stream. */
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

export class Connection {
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
  /** Its head, once read. */
  private head: FinalHead | null = null;
  private keepAlive = false;
  private encodings: string[] | null = null;
  private remaining = 0;
  private chunk = Chunk.Size;
  private sink = Sink.Buffer;
  private parts: Uint8Array[] = [];
  private size = 0;
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;

  constructor(
    private readonly pool: ConnectionPool,
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
    this.head = null;
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
      const final = this.startResponse(data, start, end);
      if (final === null) return -1;
      // A final response: its body starts here. The rest of `chunk`, as an offset into it.
      if (final) return chunk.byteLength - (data.byteLength - end);
      if (++this.interim > MAX_INTERIM) return this.protocolError(malformed("too many interim responses"));
      start = end;
      scanFrom = start;
    }
  }

  /**
   * One header section, `data[start..end)`. True for a final response (set up for its body), false
   * for an interim one (skipped), null when the response failed.
   */
  private startResponse(data: Buffer, start: number, end: number): boolean | null {
    const pending = this.pending!;
    const head = parseResponseHead(data, start, end, pending.isHead);
    if (head.kind === "error") {
      this.fail(head.error, false);
      return null;
    }
    if (head.kind === "interim") return false;
    if (head.encoding !== null && pending.decode) {
      const codings = contentCodings(head.encoding);
      if (codings instanceof HttpClientError) {
        this.fail(codings, false);
        return null;
      }
      this.encodings = codings;
    }
    this.head = head;
    this.keepAlive = head.keepAlive && pending.reusable;
    this.remaining = head.length;
    if (head.framing === Framing.Chunked) this.chunk = Chunk.Size;
    this.phase = Phase.Body;
    if (NULL_BODY.has(head.status)) {
      this.sink = Sink.Discard;
      pending.succeed(this.answer(null));
    }
    if (head.framing === Framing.None || (head.framing === Framing.Length && this.remaining === 0)) this.bodyEnd();
    return true;
  }

  private answer(body: Uint8Array | ReadableStream<Uint8Array> | null): ClientAnswer {
    const head = this.head!;
    return new ClientAnswer(head.status, VALID_REASON.test(head.reason) ? head.reason : "", head.headers, body);
  }

  /** Feeds body bytes from `chunk[at..]` through the framing. */
  private readBody(chunk: Buffer, at: number): void {
    const length = chunk.byteLength;
    switch (this.head!.framing) {
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

  /** The body passed bufferBytes: the answer gets a stream that starts with what was read. */
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
    this.pending!.succeed(this.answer(this.encodings === null ? raw : decodeStream(raw, this.encodings, parts[0])));
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
    // The connection goes back before the answer is made: a caller that awaits the answer
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
    pending.succeed(this.answer(body));
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
    if (this.pending !== null && this.phase === Phase.Body && this.head!.framing === Framing.Close && error === undefined) {
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

function trimCr(line: string): string {
  return line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line;
}

/** The last `n` bytes of `pieces` (fewer when there are fewer). */
function lastBytes(pieces: Buffer[], n: number): Buffer {
  const last = pieces[pieces.length - 1]!;
  if (last.byteLength >= n || pieces.length === 1) return last.subarray(Math.max(0, last.byteLength - n));
  const joined = Buffer.concat(pieces.slice(-n));
  return joined.subarray(Math.max(0, joined.byteLength - n));
}

/** A chunk-size line's size (extensions ignored); -1 when it is not hex or too large. */
function chunkSize(line: string): number {
  const semicolon = line.indexOf(";");
  const digits = trimOws(trimCr(semicolon < 0 ? line : line.slice(0, semicolon)));
  if (!/^[0-9a-fA-F]{1,13}$/.test(digits.replace(/^0+(?=.)/, ""))) return -1;
  return parseInt(digits, 16);
}

/** `chunks` (of `size` bytes in all) as one array; a single chunk as it is. */
export function concatBytes(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
