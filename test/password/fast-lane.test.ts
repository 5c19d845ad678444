// The GET /api.php fast lane against the app it stands in for: for the same request, the same
// status, header names and values, and body (errors byte for byte; for a password, everything
// but the password itself), and nothing answered but a GET of exactly /api.php.
import { describe, expect, test } from "bun:test";
import { FALLBACK_ORIGIN } from "../../src/http/entry.ts";
import { passwordFastLane } from "../../src/password/fast-lane.ts";
import { testApp } from "../support/app.ts";

const { app } = testApp();

const CLASSES = ["uppercase", "lowercase", "numbers", "symbols"] as const;

/** Every combination of the four classes as `true`/`false`, the all-false one included. */
const combinations = Array.from(
  { length: 16 },
  (_, mask) => `?length=12&${CLASSES.map((name, bit) => `${name}=${mask & (1 << bit) ? "true" : "false"}`).join("&")}`,
);

const QUERIES = [
  "",
  "?",
  "?length=8",
  "?length=16",
  "?length=128",
  "?length=0",
  "?length=3",
  "?length=129",
  "?length=4096",
  "?length=abc",
  "?length=12.5",
  "?length=1e1",
  "?length=-12",
  "?length=+12",
  "?length=%2012",
  "?length=%20",
  "?length=",
  "?length",
  "?exclude=%zz",
  "?length=%zz",
  "?length=9&length=20",
  "?length=20&length=",
  "?uppercase=false&uppercase=true",
  "?uppercase=",
  "?symbols=maybe",
  "?symbols=+true",
  "?uppercase=TRUE&lowercase=False&numbers=1&symbols=0",
  "?exclude_similar=true",
  "?exclude_similar=0&length=10",
  "?exclude_similar=yes",
  "?exclude=abcdef&exclude_similar=1",
  "?exclude=",
  "?exclude=0123456789&uppercase=0&lowercase=0&symbols=0",
  `?exclude=${"a".repeat(129)}`,
  `?exclude=${"a".repeat(128)}`,
  `?exclude=${encodeURIComponent("äöü😀ABC")}`,
  `?${encodeURIComponent("ünïcode")}=1&length=${encodeURIComponent("１２")}`,
  "?length=20&unknown=1&foo",
  "?length=20#fragment",
  `?${"padding=x&".repeat(4000)}length=40`,
  ...combinations,
  // Minimums, symbol_set, count, passphrases, and their errors.
  "?min_symbols=12",
  "?length=128&min_numbers=100&min_uppercase=10",
  "?length=8&min_symbols=6",
  "?min_numbers=0",
  "?numbers=0&min_numbers=2",
  `?symbol_set=${encodeURIComponent("\"'\\`")}&exclude=%22`,
  "?symbol_set=aa",
  "?count=100",
  "?count=3&min_lowercase=5&type=password",
  "?count=101",
  "?type=PASSWORD",
  "?type=passphrase",
  "?type=passphrase&words=20&separator=%20&capitalize=TRUE&include_number=1&count=7",
  "?type=passphrase&words=2",
  "?type=passphrase&separator=----",
  "?type=passphrase&length=3&symbols=maybe",
];

async function both(url: string) {
  const lane = passwordFastLane(new Request(url));
  expect(lane).toBeInstanceOf(Response);
  const elysia = await app.handle(new Request(url));
  return { lane: lane!, elysia };
}

describe("GET /api.php fast lane: the same answer as the app", () => {
  test.each(QUERIES.map((query) => [query.length > 80 ? `${query.slice(0, 60)}... (${query.length} chars)` : query || "(none)", query]))(
    "%s",
    async (_, query) => {
      const { lane, elysia } = await both(`http://localhost/api.php${query}`);
      expect(lane.status).toBe(elysia.status);
      expect([...lane.headers]).toEqual([...elysia.headers]);
      const [laneText, elysiaText] = [await lane.text(), await elysia.text()];
      if (elysia.status !== 200) {
        expect(laneText).toBe(elysiaText);
        return;
      }
      const [a, b] = [JSON.parse(laneText), JSON.parse(elysiaText)];
      expect(Object.keys(a)).toEqual(Object.keys(b));
      expect(a.parameters).toEqual(b.parameters);
      expect(Object.keys(a.parameters)).toEqual(Object.keys(b.parameters));
      expect(a.entropy_bits).toBe(b.entropy_bits);
      const passwords = (body: any): string[] => body.passwords ?? [body.password];
      expect(passwords(a)).toHaveLength(passwords(b).length);
      if (b.parameters.type === "passphrase") {
        // Phrases differ in length from draw to draw; each answer's lengths are its own.
        expect(a.lengths ?? [a.length]).toEqual(passwords(a).map((p) => p.length));
        return;
      }
      expect(a.length).toBe(b.length);
      for (const [i, password] of passwords(a).entries()) expect([...password]).toHaveLength([...passwords(b)[i]!].length);
      // The same bytes but the passwords' own: JSON escapes " and \ with one more character each.
      const escaped = (body: any) => passwords(body).reduce((sum, p) => sum + p.replace(/[^"\\]/g, "").length, 0);
      expect(laneText.length - escaped(a)).toBe(elysiaText.length - escaped(b));
    },
  );

  test("the headers are the app's: CORS, no-store and the JSON type, nothing else", async () => {
    const { lane } = await both("http://localhost/api.php?length=3");
    expect(Object.fromEntries(lane.headers)).toEqual({
      "access-control-allow-origin": "*",
      "access-control-expose-headers":
        "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Retry-After, X-Request-Id",
      "cache-control": "no-store",
      "content-type": "application/json;charset=utf-8",
    });
  });

  test("each answer has its own headers: what the log wrapper adds to one is not in the next", () => {
    const first = passwordFastLane(new Request("http://localhost/api.php"))!;
    first.headers.set("X-Request-Id", "first");
    first.headers.set("Connection", "close");
    const second = passwordFastLane(new Request("http://localhost/api.php"))!;
    expect(second.headers.has("x-request-id")).toBe(false);
    expect(second.headers.has("connection")).toBe(false);
  });

  test("a URL rewritten by routableRequest (odd or missing Host) is answered too", async () => {
    const { lane, elysia } = await both(`${FALLBACK_ORIGIN}/api.php?length=3`);
    expect(lane.status).toBe(400);
    expect(await lane.text()).toBe(await elysia.text());
  });
});

describe("GET /api.php fast lane: everything else is the app's", () => {
  test.each([
    ["HEAD", "/api.php"],
    ["POST", "/api.php"],
    ["POST", "/api.php?length=20"],
    ["OPTIONS", "/api.php"],
    ["PUT", "/api.php"],
    ["DELETE", "/api.php"],
    ["GET", "/api.php/"],
    ["GET", "/api.php/?length=20"],
    ["GET", "/api.phpx"],
    ["GET", "/api.php.bak?length=20"],
    ["GET", "/API.php"],
    ["GET", "/api%2Ephp"],
    ["GET", "/api.php#fragment"],
    ["GET", "//api.php"],
    ["GET", "/x/api.php"],
    ["GET", "/healthz"],
    ["GET", "/"],
  ])("%s %s", (method, path) => {
    const request = new Request(`http://localhost${path}`, { method, body: method === "POST" ? "length=20" : undefined });
    expect(passwordFastLane(request)).toBeUndefined();
  });
});
