// The reference reading of HTTP/1.x response heads for head.fuzz.test.ts: Node's own parser (llhttp,
// strict: no lenient flags), the way Node's http client drives it. Run by `node`, not Bun: reads a
// JSON array of cases ({ head: base64, isHead }) on stdin and writes one JSON array of readings.
//
// A reading is { error } (llhttp's code) or what llhttp made of the head: status, the fields as
// [name, value] pairs, keepAlive (should_keep_alive) and the framing, which llhttp does not report
// and is found by probing fresh parsers: a message complete at the head has none; one completed by
// "0\r\n\r\n" with no body bytes is chunked; one completed by n bytes of body has Content-Length n;
// one that ends only with the connection is close-delimited.
"use strict";
const { HTTPParser } = require("_http_common");

const MAX_HEADER = 64 * 1024;
/** Body bytes offered to find a Content-Length (more: "length-beyond-probe"). */
const PROBE = 1 << 20;
const PROBE_BYTES = Buffer.alloc(PROBE, 120);
const CHUNKED_END = Buffer.from("0\r\n\r\n");

/** One parse of `bytes` then `more`; `eof` ends the connection after them. */
function run(bytes, more, isHead, eof) {
  const parser = new HTTPParser();
  parser.initialize(HTTPParser.RESPONSE, {}, MAX_HEADER, HTTPParser.kLenientNone);
  const out = { head: null, complete: false, body: 0, error: null };
  let pending = [];
  parser[HTTPParser.kOnHeaders] = (headers) => {
    pending = pending.concat(headers);
  };
  parser[HTTPParser.kOnHeadersComplete] = (major, minor, headers, _method, _url, status, reason, upgrade, keepAlive) => {
    if (out.head !== null) return 0;
    out.head = { version: `${major}.${minor}`, status, reason, headers: pending.concat(headers ?? []), keepAlive, upgrade };
    // Node's client skips the body of a response to HEAD, and of a 304 (lib/_http_client.js).
    return isHead || status === 304 ? 1 : 0;
  };
  parser[HTTPParser.kOnBody] = (chunk) => {
    if (!out.complete) out.body += chunk.length;
  };
  parser[HTTPParser.kOnMessageComplete] = () => {
    out.complete = true;
  };
  const done = () => out.complete && out.head !== null && out.head.status >= 200;
  let result = parser.execute(bytes);
  if (!(result instanceof Error) && more !== null && !done()) result = parser.execute(more);
  if (result instanceof Error) out.error = result.code;
  else if (eof && !done()) {
    const end = parser.finish();
    if (end instanceof Error) out.error = end.code;
  }
  parser.close?.();
  return out;
}

function read(bytes, isHead) {
  const first = run(bytes, null, isHead, false);
  if (first.error !== null && first.head === null) return { error: first.error };
  if (first.head === null) return { error: "INCOMPLETE" };
  const head = first.head;
  const pairs = [];
  for (let i = 0; i < head.headers.length; i += 2) pairs.push([head.headers[i], head.headers[i + 1]]);
  const reading = { status: head.status, reason: head.reason, version: head.version, headers: pairs, keepAlive: head.keepAlive, upgrade: head.upgrade };
  if (head.status < 200) return { ...reading, framing: "interim" };
  if (first.error !== null) return { error: first.error };
  if (first.complete) return { ...reading, framing: "none" };
  const chunked = run(bytes, CHUNKED_END, isHead, false);
  if (chunked.complete && chunked.body === 0 && chunked.error === null) return { ...reading, framing: "chunked" };
  const sized = run(bytes, PROBE_BYTES, isHead, false);
  if (sized.complete) return { ...reading, framing: "length", length: sized.body };
  if (sized.error !== null) return { error: sized.error };
  const closed = run(bytes, PROBE_BYTES, isHead, true);
  if (closed.complete && closed.error === null) return { ...reading, framing: "close" };
  return { ...reading, framing: sized.body === PROBE ? "length-beyond-probe" : "unknown" };
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (part) => {
  input += part;
});
process.stdin.on("end", () => {
  const cases = JSON.parse(input);
  const readings = cases.map((c) => read(Buffer.from(c.head, "base64"), c.isHead));
  process.stdout.write(JSON.stringify(readings));
});
