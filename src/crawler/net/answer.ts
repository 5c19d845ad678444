// What the crawl reads of an answer to one request: its status, its header fields by name, and its
// body. The crawler's client answers with its own object (http1/answer.ts: no Response and no
// Headers a page); a WHATWG Response has every member named here too, so fetch, and tests' senders
// that answer with `new Response(...)`, fit where an Answer is asked for.
// The interfaces are declared beside the client's answer (http1/answer.ts), which the readers' arrows reach downwards.
export type { Answer, AnswerFields } from "./http1/answer.ts";
