// Option `auth`: every shape the contract refuses, with its exact message (and never a value in
// it), the limits at their edges, and the one redaction.
import { describe, expect, test } from "bun:test";
import { parseCrawlOptions, redactCrawlOptions } from "../../src/crawler/options.ts";
import { AUTH_SHAPE_MESSAGE, parseCrawlAuth, redactAuth } from "../../src/crawler/auth.ts";

const SHAPE = "auth must be an object with basic, headers or cookies.";
const message = (auth: unknown) => {
  const parsed = parseCrawlOptions({ auth }, { maxPagesCap: 500, hostConcurrency: 4 });
  return parsed.ok ? undefined : parsed.message;
};
const SECRET = "s3cr3t-Value-42";

describe("parseCrawlAuth", () => {
  test("the contract's messages", () => {
    expect(AUTH_SHAPE_MESSAGE).toBe(SHAPE);
  });

  test("each part alone and all three together are accepted as sent", () => {
    const basic = { username: "preview", password: SECRET };
    const headers = { "X-Preview-Token": SECRET, "User-Agent": "custom" };
    const cookies = { session: SECRET, theme: "" };
    for (const auth of [{ basic }, { headers }, { cookies }, { basic, headers, cookies }, { headers: {} }]) {
      expect(parseCrawlOptions({ auth }, { maxPagesCap: 500, hostConcurrency: 4 })).toMatchObject({ ok: true, options: { auth } });
    }
    expect(parseCrawlAuth({ basic: { username: "", password: "" } })).toEqual({
      ok: true,
      auth: { basic: { username: "", password: "" } },
    });
  });

  test("no auth: the option is absent", () => {
    const parsed = parseCrawlOptions({}, { maxPagesCap: 500, hostConcurrency: 4 });
    expect(parsed.ok && "auth" in parsed.options).toBe(false);
  });

  test("a forbidden or malformed header name: auth.headers: <Name> cannot be set.", () => {
    const names = [
      "Host",
      "host",
      "Content-Length",
      "Transfer-Encoding",
      "Connection",
      "Upgrade",
      "TE",
      "te",
      "Cookie",
      "COOKIE",
      "Authorization",
      "Proxy-Authorization",
      "proxy-connection",
      "Proxy-Anything",
      "Bad Name",
      "X-Ünïcode",
      "Colon:",
    ];
    for (const name of names) expect(message({ headers: { [name]: SECRET } })).toBe(`auth.headers: ${name} cannot be set.`);
    // The first bad name of several is named.
    expect(message({ headers: { "X-Ok": "1", Host: "x" } })).toBe("auth.headers: Host cannot be set.");
  });

  test("every other bad shape: the one message, which holds no value", () => {
    const long = "a".repeat(4097);
    const bad: unknown[] = [
      null,
      "Basic abc",
      42,
      true,
      [],
      [{ basic: { username: "u", password: "p" } }],
      {},
      { bearer: SECRET },
      { basic: { username: "u", password: "p" }, extra: 1 },
      { basic: null },
      { basic: "u:p" },
      { basic: { username: "u" } },
      { basic: { password: SECRET } },
      { basic: { username: 1, password: SECRET } },
      { basic: { username: "u", password: 1 } },
      { basic: { username: "u", password: SECRET, realm: "r" } },
      { basic: { username: "a:b", password: SECRET } },
      { basic: { username: "u\n", password: SECRET } },
      { basic: { username: "u", password: `${SECRET}\r\n` } },
      { basic: { username: long, password: SECRET } },
      { basic: { username: "u", password: long } },
      { headers: null },
      { headers: [] },
      { headers: "X-Token: 1" },
      { headers: { "X-Token": 1 } },
      { headers: { "X-Token": null } },
      { headers: { "X-Token": `${SECRET}\r\nHost: evil` } },
      { headers: { "X-Token": `${SECRET}\n` } },
      { headers: { "X-Token": `${SECRET}\0` } },
      { headers: { "X-Token": "é" } },
      { headers: { "X-Token": long } },
      { headers: { "": SECRET } },
      { headers: { [`X-${long}`]: SECRET } },
      { headers: { "X-Token": SECRET, "x-token": SECRET } },
      { headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, "v"])) },
      { cookies: null },
      { cookies: [] },
      { cookies: "a=b" },
      { cookies: { session: 1 } },
      { cookies: { session: `${SECRET}; admin=1` } },
      { cookies: { session: `${SECRET} x` } },
      { cookies: { session: `${SECRET}\r\n` } },
      { cookies: { "bad name": SECRET } },
      { cookies: { "a=b": SECRET } },
      { cookies: { "": SECRET } },
      { cookies: { session: long } },
      { cookies: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`c${i}`, "v"])) },
    ];
    for (const auth of bad) {
      const text = message(auth);
      expect(text).toBe(SHAPE);
    }
  });

  test("limits at their edges: 20 headers, 50 cookies, 4 KiB names and values", () => {
    const edge = "a".repeat(4096);
    const headers = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`X-H${i}`, edge]));
    const cookies = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [i === 0 ? edge : `c${i}`, edge]));
    expect(message({ headers, cookies, basic: { username: edge, password: edge } })).toBeUndefined();
    expect(message({ headers: { [`X-${"a".repeat(4094)}`]: "v" } })).toBeUndefined();
  });
});

describe("redaction", () => {
  test("passwords, header values and cookie values read ***; names and the username stay", () => {
    const auth = { basic: { username: "preview", password: SECRET }, headers: { "X-Token": SECRET }, cookies: { session: SECRET, b: "" } };
    expect(redactAuth(auth)).toEqual({
      basic: { username: "preview", password: "***" },
      headers: { "X-Token": "***" },
      cookies: { session: "***", b: "***" },
    });
    // The input is left as it was: the crawl still needs it.
    expect(auth.headers["X-Token"]).toBe(SECRET);
    expect(redactAuth({ headers: { "X-A": SECRET } })).toEqual({ headers: { "X-A": "***" } });
  });

  test("redactCrawlOptions: auth redacted, the other options untouched; no auth, the same object", () => {
    const parsed = parseCrawlOptions({ max_pages: 7, auth: { cookies: { s: SECRET } } }, { maxPagesCap: 500, hostConcurrency: 4 });
    if (!parsed.ok) throw new Error(parsed.message);
    const shown = redactCrawlOptions(parsed.options);
    expect(shown).toMatchObject({ max_pages: 7, auth: { cookies: { s: "***" } } });
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    const plain = parseCrawlOptions({}, { maxPagesCap: 500, hostConcurrency: 4 });
    if (!plain.ok) throw new Error(plain.message);
    expect(redactCrawlOptions(plain.options)).toBe(plain.options);
  });
});
