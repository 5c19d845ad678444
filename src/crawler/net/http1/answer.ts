// The client's answer to one request: status, fields (fields.ts) and body, with none of a WHATWG
// Response's machinery. A crawl makes one a page; a Response and its Headers cost a construction in
// the engine and a call into it for every field appended and read (`Response`, `Headers`, `append`,
// `get`: 4-5 % of a crawl's JS-thread samples, notes/bench-profile.md section 16). Where a Response
// is asked for (HttpClient.send, fetch's signature) `toResponse` makes one at that edge. A page's
// answer parsed, made and read as a crawl reads it: 3.39-4.07 µs with a Response and its Headers,
// 2.42-2.79 µs with this and fields.ts (medians of 5 alternating runs of 7 x 50,000, load ~2.8).
//
// A body that ended within the client's buffer is held as its bytes, handed over without a copy and
// taken by readCapped without a promise (`takeNow`); a longer one is the connection's stream.
import { BufferedResponse } from "./buffered-response.ts";
import { FieldList } from "./fields.ts";

/** An answer's header fields, as the crawl reads them (a Headers has these members too). */
export interface AnswerFields {
  /** The field's values joined with ", " (every field of that name, case-insensitive), or null when absent. */
  get(name: string): string | null;
  /** Each field once, as Headers gives them: lower-cased names in order, repeated fields joined, Set-Cookie fields apart and last. */
  forEach(callback: (value: string, name: string) => void): void;
}

/** One request's answer (Response's members the crawl reads). */
export interface Answer {
  readonly status: number;
  readonly statusText: string;
  readonly headers: AnswerFields;
  /** The body as a stream; null when the answer has none (a 204, 304, ...). Asking for it makes it the way to read the body. */
  readonly body: ReadableStream<Uint8Array> | null;
  readonly bodyUsed: boolean;
  bytes(): Promise<Uint8Array>;
}

const EMPTY = new Uint8Array(0);

export class ClientAnswer implements Answer {
  /** The bytes of a body in memory, until taken or turned into a stream. */
  private held: Uint8Array | null;
  private stream: ReadableStream<Uint8Array> | null;
  private used = false;
  /** The body came whole (or there is none): no stream to wait on. */
  readonly inMemory: boolean;
  /** False for an answer without a body (a 204, 304, ...): its `body` is null, as a Response's. */
  readonly hasBody: boolean;

  constructor(
    readonly status: number,
    readonly statusText: string,
    readonly headers: AnswerFields,
    given: Uint8Array | ReadableStream<Uint8Array> | null,
  ) {
    this.hasBody = given !== null;
    if (given instanceof ReadableStream) {
      this.held = null;
      this.stream = given;
      this.inMemory = false;
    } else {
      this.held = given;
      this.stream = null;
      this.inMemory = true;
    }
  }

  /** The body as a stream: from then on every read goes through it. Null for an answer without a body. */
  get body(): ReadableStream<Uint8Array> | null {
    if (!this.hasBody) return null;
    if (this.stream === null) {
      const bytes = this.held;
      this.held = null;
      this.stream = new ReadableStream<Uint8Array>({
        start(controller) {
          if (bytes !== null && bytes.byteLength > 0) controller.enqueue(bytes);
          controller.close();
        },
      });
      // A body taken before anyone asked for the stream: the stream is read already.
      if (this.used) void this.stream.getReader().read();
    }
    return this.stream;
  }

  get bodyUsed(): boolean {
    return this.stream === null ? this.used : this.used || this.stream.locked;
  }

  bytes(): Promise<Uint8Array> {
    if (this.stream !== null) {
      if (this.stream.locked) return Promise.reject(new TypeError("Body already used"));
      this.used = true;
      return new Response(this.stream).bytes();
    }
    const now = this.takeNow();
    return now === null ? Promise.reject(new TypeError("Body already used")) : Promise.resolve(now);
  }

  /**
   * The body's bytes at once, as `bytes()` would resolve with them, when it is in memory, unread and
   * nobody asked for its stream; else null (read it through `bytes()`).
   */
  takeNow(): Uint8Array | null {
    if (this.stream !== null || this.used) return null;
    this.used = true;
    const bytes = this.held ?? EMPTY;
    this.held = null;
    return bytes;
  }

  /** Drops a body nobody will read: its bytes, or its stream cancelled (which frees the connection). */
  discard(): void {
    if (this.stream === null) {
      this.used = true;
      this.held = null;
    } else if (!this.stream.locked) void this.stream.cancel().catch(() => {});
  }
}

/** A new answer as a Response (fetch's signature): a BufferedResponse for a body in memory, the same stream else. */
export function toResponse(answer: ClientAnswer): Response {
  const fields = answer.headers;
  const headers = fields instanceof FieldList ? fields.toHeaders() : new Headers();
  if (!(fields instanceof FieldList)) {
    fields.forEach((value, name) => {
      headers.append(name, value);
    });
  }
  const init = { status: answer.status, statusText: answer.statusText, headers };
  if (!answer.hasBody) return new Response(null, init);
  if (!answer.inMemory) return new Response(answer.body, init);
  // Made as the answer arrives: its body is unread.
  return new BufferedResponse(answer.takeNow()!, init).asResponse();
}
