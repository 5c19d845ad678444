// ClientAnswer (src/crawler/net/http1/answer.ts), the client's answer in place of a Response: its body
// is read, taken, streamed and dropped as a Response's was, through src/crawler/net/body.ts as the crawl reads it,
// and toResponse gives fetch's signature the Response the client gave before.
import { describe, expect, test } from "bun:test";
import { discardBody, readCapped } from "../../../../src/crawler/net/body.ts";
import { BufferedResponse } from "../../../../src/crawler/net/http-client.ts";
import { ClientAnswer, toResponse } from "../../../../src/crawler/net/http1/answer.ts";
import { FieldList } from "../../../../src/crawler/net/http1/fields.ts";
import { chunkStream } from "../../../support/streams.ts";

const never = new AbortController().signal;

function fields(pairs: [string, string][] = [["Content-Type", "text/plain"]]): FieldList {
  const list = new FieldList();
  for (const [name, value] of pairs) list.append(name, value);
  return list;
}

describe("ClientAnswer, a body in memory", () => {
  test("taken once as the bytes received (no copy); then used, as a Response's body", async () => {
    const bytes = new TextEncoder().encode("hello");
    const answer = new ClientAnswer(200, "OK", fields(), bytes);
    expect(answer.bodyUsed).toBe(false);
    const read = await readCapped(answer, 100, never);
    expect(read).toEqual({ bytes, overflow: false });
    expect(read.bytes).toBe(bytes);
    expect(answer.bodyUsed).toBe(true);
    expect(answer.takeNow()).toBeNull();
    await expect(answer.bytes()).rejects.toThrow("Body already used");
  });

  test("over the cap: the first bytes, marked", async () => {
    const answer = new ClientAnswer(200, "OK", fields(), new TextEncoder().encode("abcdefgh"));
    const { bytes, overflow } = await readCapped(answer, 3, never);
    expect([new TextDecoder().decode(bytes), overflow]).toEqual(["abc", true]);
  });

  test("a stream on demand: the bytes once, and the body used from then on", async () => {
    const answer = new ClientAnswer(200, "OK", fields(), new TextEncoder().encode("hello"));
    const reader = answer.body!.getReader();
    expect(answer.bodyUsed).toBe(true);
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("hello");
    expect((await reader.read()).done).toBe(true);
    expect(answer.takeNow()).toBeNull();
  });

  test("no body (a 304): body null, read as empty", async () => {
    const answer = new ClientAnswer(304, "Not Modified", fields([["ETag", '"v2"']]), null);
    expect(answer.body).toBeNull();
    expect(await readCapped(answer, 100, never)).toEqual({ bytes: new Uint8Array(0), overflow: false });
    expect(answer.headers.get("etag")).toBe('"v2"');
  });

  test("discarded unread: dropped without a stream made, and used", async () => {
    const answer = new ClientAnswer(301, "Moved", fields([["Location", "/next"]]), new TextEncoder().encode("moved"));
    discardBody(answer);
    expect(answer.bodyUsed).toBe(true);
    expect(answer.takeNow()).toBeNull();
  });
});

describe("ClientAnswer, a streamed body", () => {
  test("read through its stream, to the cap; what is left cancelled", async () => {
    const { stream, state } = chunkStream(["abc", "def", "ghi"]);
    const answer = new ClientAnswer(200, "OK", fields(), stream);
    expect(answer.takeNow()).toBeNull();
    const { bytes, overflow } = await readCapped(answer, 4, never);
    expect([new TextDecoder().decode(bytes), overflow, state.cancelled]).toEqual(["abcd", true, true]);
  });

  test("bytes() reads it whole; discarded unread, it is cancelled (the connection is freed)", async () => {
    const whole = new ClientAnswer(200, "OK", fields(), chunkStream(["ab", "cd"]).stream);
    expect(new TextDecoder().decode(await whole.bytes())).toBe("abcd");
    const { stream, state } = chunkStream(["ab"]);
    discardBody(new ClientAnswer(200, "OK", fields(), stream));
    await Promise.resolve();
    expect(state.cancelled).toBe(true);
  });
});

describe("toResponse: the Response fetch's signature gives", () => {
  test("a body in memory is a BufferedResponse of the same bytes, status and fields", async () => {
    const res = toResponse(
      new ClientAnswer(
        201,
        "Created",
        fields([
          ["X-A", "1"],
          ["x-a", "2"],
        ]),
        new TextEncoder().encode("hi"),
      ),
    );
    expect(res).toBeInstanceOf(BufferedResponse);
    expect([res.status, res.statusText, res.headers.get("x-a"), await res.text()]).toEqual([201, "Created", "1, 2", "hi"]);
  });

  test("no body: a Response with none; a stream: a Response of that stream", async () => {
    const none = toResponse(new ClientAnswer(204, "", fields(), null));
    expect([none.status, none.body]).toEqual([204, null]);
    const streamed = toResponse(new ClientAnswer(200, "OK", fields(), chunkStream(["x", "y"]).stream));
    expect(streamed).not.toBeInstanceOf(BufferedResponse);
    expect(await streamed.text()).toBe("xy");
  });
});
