// parseResponseHead (src/crawler/net/http1/head.ts) on single heads: framing and keep-alive where the
// fuzz test (head.fuzz.test.ts) found genapi reading a head otherwise than RFC 9112 and llhttp do.
import { describe, expect, test } from "bun:test";
import { Framing, parseResponseHead, type ResponseHead } from "../../../../src/crawler/net/http1/head.ts";

function parse(head: string, isHead = false): ResponseHead {
  const bytes = Buffer.from(head, "latin1");
  return parseResponseHead(bytes, 0, bytes.byteLength, isHead);
}

function framing(head: ResponseHead): { framing?: Framing; keepAlive?: boolean; error?: string } {
  if (head.kind === "error") return { error: head.error.code };
  if (head.kind === "interim") return {};
  return { framing: head.framing, keepAlive: head.keepAlive };
}

describe("parseResponseHead", () => {
  test("chunked is the framing only when it is the last transfer coding: 'chunked, identity' is refused like 'chunked, gzip'", () => {
    for (const te of ["chunked, identity", "chunked,identity"]) {
      expect({ te, read: framing(parse(`HTTP/1.1 200 OK\r\nTransfer-Encoding: ${te}\r\n\r\n`)) }).toEqual({
        te,
        read: { error: "ERR_HTTP_UNSUPPORTED_ENCODING" },
      });
    }
    expect(framing(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n"))).toEqual({
      error: "ERR_HTTP_UNSUPPORTED_ENCODING",
    });
    expect(framing(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, chunked\r\n\r\n"))).toEqual({
      framing: Framing.Chunked,
      keepAlive: true,
    });
    expect(framing(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n"))).toEqual({ framing: Framing.Close, keepAlive: false });
  });

  test("an HTTP/1.0 connection with 'close' in one Connection field is not kept alive by 'keep-alive' in a later one", () => {
    const head = "HTTP/1.0 200 OK\r\nConnection: close\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n";
    expect(framing(parse(head))).toEqual({ framing: Framing.Length, keepAlive: false });
    expect(framing(parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"))).toEqual({
      framing: Framing.Length,
      keepAlive: true,
    });
  });
});

describe("parseResponseHead: obs-fold", () => {
  test("a folded Set-Cookie continues its own field: the Set-Cookie fields before it stay apart", () => {
    const head = parse("HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n c\r\nContent-Length: 0\r\n\r\n");
    expect(head.kind === "final" ? head.headers.getSetCookie() : head).toEqual(["a=1", "b=2 c"]);
  });

  test("keep-alive follows the folded value: 'keep-alive' continued by ' more' is no keep-alive token", () => {
    const head = parse("HTTP/1.0 200 OK\r\nConnection: foo, keep-alive\r\n more\r\nContent-Length: 0\r\n\r\n");
    expect(framing(head)).toEqual({ framing: Framing.Length, keepAlive: false });
    expect(head.kind === "final" ? head.headers.get("connection") : head).toBe("foo, keep-alive more");
  });
});
