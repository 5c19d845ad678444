// The crawler's HTTP/1.1 client: GET requests over Bun.connect, written and parsed on the JS thread.
//
// Bun's fetch hands every request to its "HTTP Client" thread and every response back; each
// hand-off is a cross-thread wake-up, and in a crawl of the bench site that thread cost 0.056-0.075
// ms a page on top of the JS thread's work, whatever the page's size. Here the request is written
// and the response parsed where the crawl runs. In a crawl of the bench site (10,000 pages,
// `bun --cpu-prof`, 2026-11-27) the client is about a fifth of the JS thread: reading a response
// (onData: head, body, the answer) 10.5-11 % of the samples, the request's socket write 8.6-10 %
// (the kernel's send), `send` and `prepare` 2.5-3.5 % (notes/bench-profile.md section 16).
//
// `answer` is guarded-fetch.ts's `Send` for a crawl: it answers with a ClientAnswer (http1/answer.ts,
// status, fields and body without a Response and a Headers a page); `send` is the same request with
// fetch's signature, the answer made a Response. Both have the semantics the crawler had from fetch
// (redirect "manual", decompress, proxy false, tls.serverName): the URL's host is the IP literal the
// address guard checked, and a name is refused (no lookup can happen here, so no rebinding);
// headers go as given (Host included); redirects are returned, never followed; gzip, deflate and br
// bodies are decoded as they are read, so that a reader's cap on decoded bytes stops a bomb early;
// TLS is verified against `tls.serverName` (else the IP) with `tls.ca` and `rejectUnauthorized`
// honoured. Not supported: request bodies and methods other than GET and HEAD (callbacks POST with
// fetch), HTTP/2, proxies, Response.url (left empty), transfer codings other than chunked.
//
// This file is its one way in; the parts are in http1/: http1/pool.ts (connections kept per
// target), http1/request.ts (targets and request heads), http1/connection.ts (a request's exchange
// and its body's framing), http1/head.ts (the response head, a pure parser), http1/decode.ts
// (Content-Encoding), http1/fields.ts (the header fields), http1/answer.ts,
// http1/buffered-response.ts, http1/errors.ts and http1/options.ts.
import { settlesOnAbort } from "./abort.ts";
import { type ClientAnswer, toResponse } from "./http1/answer.ts";
import { DEFAULTS, type HttpClientOptions } from "./http1/options.ts";
import { Pool } from "./http1/pool.ts";
import type { ClientInit } from "./http1/request.ts";

export { ClientAnswer } from "./http1/answer.ts";
export { BufferedResponse } from "./http1/buffered-response.ts";
export { HttpClientError } from "./http1/errors.ts";
export type { HttpClientOptions } from "./http1/options.ts";
export { type ClientInit, requestTarget, type Validators } from "./http1/request.ts";

export interface HttpClient {
  /** A request (GET and HEAD only) answered with the client's own answer: the crawl's `Send`. */
  answer: (input: string, init?: ClientInit) => Promise<ClientAnswer>;
  /** fetch's signature (GET and HEAD only): the same request, its answer a Response. */
  send: (input: string, init?: ClientInit) => Promise<Response>;
  /** Closes the idle connections; connections in use close when their response ends. */
  close(): void;
  /** Connections opened since the client was made, and idle ones now (for tests and benchmarks). */
  stats(): { opened: number; idle: number };
}

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const pool = new Pool({ ...DEFAULTS, ...options });
  return {
    // The pool rejects a request with its signal's reason as the signal aborts (Pool.send's
    // listener): its callers need no race of their own (abort.ts).
    answer: settlesOnAbort((input: string, init?: ClientInit) => pool.send(input, init ?? {})),
    send: settlesOnAbort((input: string, init?: ClientInit) => pool.send(input, init ?? {}).then(toResponse)),
    close: () => pool.closeIdle(),
    stats: () => ({ opened: pool.opened, idle: pool.idleCount }),
  };
}
