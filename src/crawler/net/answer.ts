// What the crawl reads of an answer to one request: its status, its header fields by name, and its
// body. The crawler's client answers with its own object (http1/answer.ts: no Response and no
// Headers a page); a WHATWG Response has every member named here too, so fetch, and tests' senders
// that answer with `new Response(...)`, fit where an Answer is asked for.

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
