import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import Ajv from "ajv";
import { parsePassphraseOptions, parsePasswordOptions } from "../../src/password/params.ts";
import { passwordRoutes } from "../../src/password/routes.ts";

const app = new Elysia().use(passwordRoutes);

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const SYMBOLS = "!#$%&()*+,-./:;<=>?@[]^_{|}~";
const CLASSES = { uppercase: UPPER, lowercase: LOWER, numbers: DIGITS, symbols: SYMBOLS } as const;
type ClassName = keyof typeof CLASSES;
const NAMES = Object.keys(CLASSES) as ClassName[];

const LENGTH_ERROR = "length must be an integer from 8 to 128.";
const NO_CLASS = "At least one character type (uppercase, lowercase, numbers, symbols) must be selected.";

interface Answer {
  status: number;
  contentType: string | null;
  body: any;
}

async function call(request: Request): Promise<Answer> {
  const response = await app.handle(request);
  return { status: response.status, contentType: response.headers.get("content-type"), body: await response.json() };
}
const get = (query = "") => call(new Request(`http://localhost/api.php${query}`));
const post = (body: RequestInit["body"], contentType?: string, query = "") =>
  call(
    new Request(`http://localhost/api.php${query}`, {
      method: "POST",
      body,
      headers: contentType ? { "content-type": contentType } : {},
    }),
  );
const postJson = (value: unknown, query = "") => post(JSON.stringify(value), "application/json", query);

function classesIn(password: string): Set<ClassName> {
  const found = new Set<ClassName>();
  for (const ch of password) {
    const name = NAMES.find((n) => CLASSES[n].includes(ch));
    if (!name) throw new Error(`character ${JSON.stringify(ch)} is in no class`);
    found.add(name);
  }
  return found;
}

const expectError = (answer: Answer, status: number, error: string) => {
  expect({ status: answer.status, body: answer.body }).toEqual({ status, body: { success: false, error } });
};

describe("GET /api.php", () => {
  test("defaults: 16 characters of all four classes, seed fields in order plus entropy_bits", async () => {
    const { status, contentType, body } = await get();
    expect(status).toBe(200);
    expect(contentType).toStartWith("application/json");
    expect(Object.keys(body)).toEqual(["success", "password", "length", "parameters", "entropy_bits"]);
    expect(body).toMatchObject({
      success: true,
      length: 16,
      parameters: { requested_length: 16, uppercase: true, lowercase: true, numbers: true, symbols: true },
      entropy_bits: 103.61,
    });
    expect(Object.keys(body.parameters)).toEqual(["requested_length", "uppercase", "lowercase", "numbers", "symbols"]);
    expect(body.password).toHaveLength(16);
    expect(classesIn(body.password)).toEqual(new Set(NAMES));
  });

  test("every one of the 15 class combinations: only selected classes, each at least once", async () => {
    for (let mask = 1; mask < 16; mask++) {
      const selected = NAMES.filter((_, bit) => mask & (1 << bit));
      const query = NAMES.map((name) => `${name}=${selected.includes(name) ? "true" : "false"}`).join("&");
      // Length 8 leaves little room: a generator that does not enforce every class misses one
      // often (digits are absent from 8 of 90 characters 39% of the time), so 20 tries catch it.
      for (let i = 0; i < 20; i++) {
        const { status, body } = await get(`?length=8&${query}`);
        expect(status).toBe(200);
        expect(body.password).toHaveLength(8);
        expect(classesIn(body.password)).toEqual(new Set(selected));
        expect(body.parameters).toEqual({
          requested_length: 8,
          uppercase: selected.includes("uppercase"),
          lowercase: selected.includes("lowercase"),
          numbers: selected.includes("numbers"),
          symbols: selected.includes("symbols"),
        });
      }
    }
  });

  test("length boundaries: 7 and 129 are refused, 8 and 128 work", async () => {
    expectError(await get("?length=7"), 400, LENGTH_ERROR);
    expectError(await get("?length=129"), 400, LENGTH_ERROR);
    for (const length of [8, 128]) {
      const { status, body } = await get(`?length=${length}`);
      expect(status).toBe(200);
      expect(body.password).toHaveLength(length);
      expect(body.length).toBe(length);
      expect(body.parameters.requested_length).toBe(length);
    }
  });

  test("symbols are exactly the 28 of the contract", async () => {
    const seen = new Set<string>();
    // 40 * 128 draws: a symbol never drawn has probability 28 * (27/28)^5120 < 1e-79.
    for (let i = 0; i < 40; i++) {
      const { body } = await get("?length=128&uppercase=0&lowercase=0&numbers=0");
      for (const ch of body.password) seen.add(ch);
    }
    expect([...seen].sort().join("")).toBe([...SYMBOLS].sort().join(""));
  });

  test("every error text, with status 400", async () => {
    const cases: [string, string][] = [
      ["?length=abc", LENGTH_ERROR],
      ["?length=16.0", LENGTH_ERROR],
      ["?length=1e1", LENGTH_ERROR],
      ["?length=%2016", LENGTH_ERROR],
      ["?length=", LENGTH_ERROR],
      ["?uppercase=yes", "uppercase must be one of: true, false, 1, 0."],
      ["?lowercase=", "lowercase must be one of: true, false, 1, 0."],
      ["?numbers=2", "numbers must be one of: true, false, 1, 0."],
      ["?symbols=no", "symbols must be one of: true, false, 1, 0."],
      ["?exclude_similar=on", "exclude_similar must be one of: true, false, 1, 0."],
      [`?exclude=${"x".repeat(129)}`, "exclude must be at most 128 characters."],
      ["?uppercase=false&lowercase=0&numbers=FALSE&symbols=0", NO_CLASS],
      ["?exclude=0123456789", "exclude leaves no characters for numbers."],
      [`?exclude=${encodeURIComponent(SYMBOLS)}`, "exclude leaves no characters for symbols."],
      [`?exclude=${UPPER}${LOWER}`, "exclude leaves no characters for uppercase."],
    ];
    for (const [query, error] of cases) expectError(await get(query), 400, error);
  });

  test("booleans are case-insensitive", async () => {
    const { status, body } = await get("?uppercase=TRUE&lowercase=False&numbers=1&symbols=0");
    expect(status).toBe(200);
    expect(body.parameters).toMatchObject({ uppercase: true, lowercase: false, numbers: true, symbols: false });
    expect(body.password).toMatch(/^[A-Z0-9]{16}$/);
  });

  test("a repeated parameter takes its last value, unknown parameters are ignored", async () => {
    const { status, body } = await get("?length=200&length=12&foo=bar&Length=3");
    expect(status).toBe(200);
    expect(body.password).toHaveLength(12);
    expect(Object.keys(body.parameters)).toEqual(["requested_length", "uppercase", "lowercase", "numbers", "symbols"]);
  });

  test("exclude_similar and exclude are echoed only when sent, and applied", async () => {
    const { body } = await get(`?length=128&exclude_similar=1&exclude=${encodeURIComponent("ab#")}`);
    expect(body.parameters).toEqual({
      requested_length: 128,
      uppercase: true,
      lowercase: true,
      numbers: true,
      symbols: true,
      exclude_similar: true,
      exclude: "ab#",
    });
    expect(body.password).not.toMatch(/[0O1lI|ab#]/);
  });

  test("a plus in the query string is a space, as in form encoding", async () => {
    const { body } = await get("?exclude=a+b");
    expect(body.parameters.exclude).toBe("a b");
  });
});

describe("POST /api.php", () => {
  test("urlencoded body", async () => {
    const { status, body } = await post(
      new URLSearchParams({ length: "20", symbols: "false", numbers: "0" }),
      "application/x-www-form-urlencoded",
    );
    expect(status).toBe(200);
    expect(body.password).toMatch(/^[A-Za-z]{20}$/);
    expect(body.parameters).toEqual({ requested_length: 20, uppercase: true, lowercase: true, numbers: false, symbols: false });
  });

  test("multipart body from FormData", async () => {
    const form = new FormData();
    form.append("length", "9");
    form.append("uppercase", "0");
    form.append("lowercase", "0");
    const response = await app.handle(new Request("http://localhost/api.php", { method: "POST", body: form }));
    const body: any = await response.json();
    expect(response.status).toBe(200);
    expect(body.password).toHaveLength(9);
    expect(classesIn(body.password)).toEqual(new Set(["numbers", "symbols"]));
  });

  test("JSON body with JSON booleans, 1/0 and text", async () => {
    const { status, body } = await postJson({ length: 10, uppercase: false, lowercase: 0, numbers: "TRUE", symbols: true });
    expect(status).toBe(200);
    expect(body.password).toHaveLength(10);
    expect(classesIn(body.password)).toEqual(new Set(["numbers", "symbols"]));
    expect(body.parameters).toEqual({ requested_length: 10, uppercase: false, lowercase: false, numbers: true, symbols: true });
  });

  test("JSON type errors", async () => {
    expectError(await postJson({ length: 16.5 }), 400, LENGTH_ERROR);
    expectError(await postJson({ length: "16.0" }), 400, LENGTH_ERROR);
    expectError(await postJson({ length: true }), 400, LENGTH_ERROR);
    expectError(await postJson({ symbols: 2 }), 400, "symbols must be one of: true, false, 1, 0.");
    expectError(await postJson({ uppercase: null }), 400, "uppercase must be one of: true, false, 1, 0.");
    expectError(await postJson({ exclude: 5 }), 400, "exclude must be a string.");
    expectError(await postJson({ exclude: ["a"] }), 400, "exclude must be a string.");
  });

  test("the body wins over the query string; the query fills what the body leaves out", async () => {
    const { body } = await postJson({ symbols: true, exclude: "xyz" }, "?symbols=false&length=9&exclude=abc");
    expect(body.parameters).toMatchObject({ requested_length: 9, symbols: true, exclude: "xyz" });
    const form = await post(new URLSearchParams({ length: "30" }), "application/x-www-form-urlencoded", "?length=12&numbers=0");
    expect(form.body.password).toHaveLength(30);
    expect(form.body.parameters.numbers).toBe(false);
  });

  test("an empty body or another content type: the query string alone", async () => {
    for (const answer of [
      await post(null, undefined, "?length=11"),
      await post("", "application/json", "?length=11"),
      await post('{"length": 40}', "text/plain", "?length=11"),
    ]) {
      expect(answer.status).toBe(200);
      expect(answer.body.password).toHaveLength(11);
    }
  });

  test("body errors", async () => {
    expectError(await post('{"length": 12', "application/json"), 400, "Request body is not valid JSON.");
    for (const value of ["[1]", "12", '"x"', "null", "true"]) {
      expectError(await post(value, "application/json"), 400, "Request body must be a JSON object.");
    }
  });

  test("a body of 64 KiB is read; one byte more is 413", async () => {
    const padded = (size: number) => {
      const prefix = '{"length":"20","pad":"';
      return `${prefix}${"x".repeat(size - prefix.length - 2)}"}`;
    };
    const ok = await post(padded(64 * 1024), "application/json");
    expect(ok.status).toBe(200);
    expect(ok.body.password).toHaveLength(20);
    expectError(await post(padded(64 * 1024 + 1), "application/json"), 413, "Request body is larger than 64 KiB.");
  });

  test("an oversized body without Content-Length (streamed) is 413 too", async () => {
    const chunk = new TextEncoder().encode("x".repeat(16 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const request = new Request("http://localhost/api.php", {
      method: "POST",
      body: stream,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(request.headers.get("content-length")).toBeNull();
    expectError(await call(request), 413, "Request body is larger than 64 KiB.");
  });

  test("every validation error text arrives through POST as well", async () => {
    expectError(await postJson({ length: 7 }), 400, LENGTH_ERROR);
    expectError(await postJson({ uppercase: false, lowercase: false, numbers: false, symbols: false }), 400, NO_CLASS);
    expectError(await postJson({ exclude: "x".repeat(129) }), 400, "exclude must be at most 128 characters.");
    expectError(await postJson({ exclude: LOWER }), 400, "exclude leaves no characters for lowercase.");
  });
});

describe("OpenAPI", () => {
  test("both methods are documented with parameters, body, responses and the password tag", async () => {
    const documented = new Elysia().use(openapi({ exclude: { staticFile: false } })).use(passwordRoutes);
    const spec: any = await (await documented.handle(new Request("http://localhost/openapi/json"))).json();
    const path = spec.paths["/api.php"];
    for (const method of ["get", "post"]) {
      expect(path[method].tags).toEqual(["password"]);
      expect(path[method].summary).toBeString();
      expect(path[method].parameters.map((p: any) => p.name)).toEqual([
        "length",
        "uppercase",
        "lowercase",
        "numbers",
        "symbols",
        "exclude_similar",
        "exclude",
        "min_uppercase",
        "min_lowercase",
        "min_numbers",
        "min_symbols",
        "symbol_set",
        "count",
        "type",
        "words",
        "separator",
        "capitalize",
        "include_number",
      ]);
      for (const variant of path[method].responses["200"].content["application/json"].schema.anyOf) {
        expect(variant.properties.entropy_bits.type).toBe("number");
      }
      expect(path[method].responses["400"].content["application/json"].schema.properties.error.type).toBe("string");
    }
    expect(Object.keys(path.post.requestBody.content).sort()).toEqual([
      "application/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
    ]);
    expect(path.post.responses["413"]).toBeDefined();
  });
});

describe("OpenAPI: every parameter with its range, and patterns that accept what the server accepts", () => {
  const documented = new Elysia().use(openapi({ exclude: { staticFile: false } })).use(passwordRoutes);
  let spec: any;
  const ajv = new Ajv({ strict: false });
  const specOnce = async () => {
    spec ??= await (await documented.handle(new Request("http://localhost/openapi/json"))).json();
    return spec;
  };
  const parameter = async (name: string) => (await specOnce()).paths["/api.php"].get.parameters.find((p: any) => p.name === name);

  test("ranges of the new parameters", async () => {
    const ranges: Record<string, object> = {
      length: { type: "integer", minimum: 8, maximum: 128, default: 16 },
      min_uppercase: { type: "integer", minimum: 1, maximum: 128 },
      min_lowercase: { type: "integer", minimum: 1, maximum: 128 },
      min_numbers: { type: "integer", minimum: 1, maximum: 128 },
      min_symbols: { type: "integer", minimum: 1, maximum: 128 },
      symbol_set: { type: "string", minLength: 1, maxLength: 32 },
      count: { type: "integer", minimum: 1, maximum: 100, default: 1 },
      type: { type: "string", enum: ["password", "passphrase"], default: "password" },
      words: { type: "integer", minimum: 3, maximum: 20, default: 6 },
      separator: { type: "string", maxLength: 3, default: "-" },
      capitalize: { type: "string", default: "false" },
      include_number: { type: "string", default: "false" },
    };
    // Swagger UI lists a parameter's description and default but not its minimum and maximum, so
    // the description states the range in words.
    const inWords: Record<string, string> = {
      length: "8 to 128",
      min_uppercase: "1 to length",
      min_lowercase: "1 to length",
      min_numbers: "1 to length",
      min_symbols: "1 to length",
      symbol_set: "1 to 32 distinct ASCII punctuation",
      count: "1 to 100",
      type: "password, or passphrase",
      words: "3 to 20",
      separator: "0 to 3 printable ASCII",
      capitalize: "true, false, 1, 0 (any case)",
      include_number: "true, false, 1, 0 (any case)",
    };
    for (const [name, range] of Object.entries(ranges)) {
      const documentedParameter = await parameter(name);
      expect({ name, schema: documentedParameter.schema }).toMatchObject({ name, schema: range });
      expect(documentedParameter.description).toContain(inWords[name]!);
    }
    const json = (await specOnce()).paths["/api.php"].post.requestBody.content["application/json"].schema.properties;
    for (const name of Object.keys(ranges)) expect({ name, documented: json[name] !== undefined }).toEqual({ name, documented: true });
  });

  /** Every spelling of true and false in upper and lower case, 1, 0, and near misses. */
  const caseVariants = (word: string): string[] =>
    word.length === 0
      ? [""]
      : caseVariants(word.slice(1)).flatMap((rest) => [word[0]!.toLowerCase() + rest, word[0]!.toUpperCase() + rest]);
  const booleanCandidates = [
    ...caseVariants("true"),
    ...caseVariants("false"),
    "1",
    "0",
    "",
    "yes",
    "no",
    "on",
    "t",
    "f",
    "2",
    "01",
    "10",
    " true",
    "true ",
    "true\n",
    "truee",
    "ttrue",
    "fals",
    "1.0",
    "TRUE0",
    "true|false",
  ];

  test("the boolean text pattern accepts exactly what the parser accepts (any case), in the query and the JSON body", async () => {
    expect(booleanCandidates.filter((c) => /^[a-z]+$/i.test(c) && c.toLowerCase() === "true")).toHaveLength(16);
    const post = (await specOnce()).paths["/api.php"].post.requestBody.content["application/json"].schema.properties;
    for (const name of ["uppercase", "lowercase", "numbers", "symbols", "exclude_similar", "capitalize", "include_number"]) {
      const query = ajv.compile((await parameter(name)).schema);
      const body = ajv.compile(post[name]);
      const passphrase = name === "capitalize" || name === "include_number";
      for (const candidate of booleanCandidates) {
        const accepted = passphrase
          ? parsePassphraseOptions({ [name]: candidate }).ok
          : parsePasswordOptions({ [name]: candidate, uppercase: name === "uppercase" ? candidate : "1" }).ok;
        expect({ name, candidate, query: query(candidate), body: body(candidate) }).toEqual({
          name,
          candidate,
          query: accepted,
          body: accepted,
        });
      }
      // JSON booleans and the numbers 1 and 0 are documented for JSON bodies, as the parser takes them.
      for (const value of [true, false, 1, 0]) expect(body(value)).toBe(true);
      expect(body(2)).toBe(false);
    }
  });

  test("the symbol_set and separator patterns agree with the parser on every ASCII character and on lengths", async () => {
    const symbolSet = ajv.compile((await parameter("symbol_set")).schema);
    const separator = ajv.compile((await parameter("separator")).schema);
    const candidates: string[] = [];
    for (let code = 0; code < 128; code++) {
      const ch = String.fromCharCode(code);
      candidates.push(ch, ch + ch + ch, ch.repeat(4));
    }
    candidates.push("", "é", "😀", "!#$", "\"'\\`", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
    for (const candidate of candidates) {
      const setAccepted = parsePasswordOptions({ symbol_set: candidate }).ok;
      const separatorAccepted = parsePassphraseOptions({ separator: candidate }).ok;
      // The pattern cannot say "distinct": a repeated character is the one thing it lets through.
      const repeated = new Set(candidate).size < candidate.length;
      expect({ candidate, set: symbolSet(candidate) && !repeated, separator: separator(candidate) }).toEqual({
        candidate,
        set: setAccepted,
        separator: separatorAccepted,
      });
    }
  });
});

describe("round 3 options over HTTP", () => {
  test("every new error text, with status 400, through GET and POST (JSON)", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ min_symbols: "0" }, "min_symbols must be an integer from 1 to 16."],
      [{ length: "20", min_numbers: "21" }, "min_numbers must be an integer from 1 to 20."],
      [{ min_uppercase: "x" }, "min_uppercase must be an integer from 1 to 16."],
      [{ min_lowercase: "17" }, "min_lowercase must be an integer from 1 to 16."],
      [{ numbers: "false", min_numbers: "2" }, "min_numbers needs numbers=true."],
      [{ length: "8", min_symbols: "6" }, "The minimums add up to more than length."],
      [{ symbol_set: "abc" }, "symbol_set must be 1 to 32 distinct ASCII punctuation characters."],
      [{ symbol_set: "!!" }, "symbol_set must be 1 to 32 distinct ASCII punctuation characters."],
      [{ symbol_set: "" }, "symbol_set must be 1 to 32 distinct ASCII punctuation characters."],
      [{ count: "101" }, "count must be an integer from 1 to 100."],
      [{ count: "0" }, "count must be an integer from 1 to 100."],
      [{ type: "pin" }, "type must be one of: password, passphrase."],
      [{ type: "passphrase", words: "21" }, "words must be an integer from 3 to 20."],
      [{ type: "passphrase", words: "2" }, "words must be an integer from 3 to 20."],
      [{ type: "passphrase", separator: "----" }, "separator must be at most 3 printable ASCII characters."],
      [{ type: "passphrase", capitalize: "yes" }, "capitalize must be one of: true, false, 1, 0."],
      [{ type: "passphrase", include_number: "2" }, "include_number must be one of: true, false, 1, 0."],
      [{ symbol_set: "!", exclude: "!" }, "exclude leaves no characters for symbols."],
    ];
    for (const [fields, error] of cases) {
      const query = new URLSearchParams(fields as Record<string, string>).toString();
      expectError(await get(`?${query}`), 400, error);
      expectError(await postJson(fields), 400, error);
    }
    expectError(await postJson({ count: 2.5 }), 400, "count must be an integer from 1 to 100.");
    expectError(await postJson({ symbol_set: ["!"] }), 400, "symbol_set must be 1 to 32 distinct ASCII punctuation characters.");
    expectError(await postJson({ type: "passphrase", separator: 1 }), 400, "separator must be at most 3 printable ASCII characters.");
  });

  test("GET with minimums and count: `passwords`, each meeting the minimums", async () => {
    const { status, body } = await get("?length=12&min_symbols=8&min_numbers=2&count=3");
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(["success", "passwords", "length", "parameters", "entropy_bits"]);
    expect(body.passwords).toHaveLength(3);
    for (const password of body.passwords) {
      expect(password).toHaveLength(12);
      expect([...password].filter((ch: string) => SYMBOLS.includes(ch)).length).toBeGreaterThanOrEqual(8);
      expect([...password].filter((ch: string) => DIGITS.includes(ch)).length).toBeGreaterThanOrEqual(2);
    }
    expect(body.parameters).toEqual({
      requested_length: 12,
      uppercase: true,
      lowercase: true,
      numbers: true,
      symbols: true,
      min_numbers: 2,
      min_symbols: 8,
      count: 3,
    });
  });

  test("POST JSON and form: a passphrase with JSON integers and booleans, and a symbol set", async () => {
    const phrase = await postJson({ type: "passphrase", words: 4, separator: ".", capitalize: true, include_number: 1 });
    expect(phrase.status).toBe(200);
    expect(phrase.body.password).toMatch(/^([A-Z][a-z-]*[0-9]?\.){3}[A-Z][a-z-]*[0-9]?$/);
    expect(phrase.body.parameters).toEqual({ type: "passphrase", words: 4, separator: ".", capitalize: true, include_number: true });
    const form = await post(
      new URLSearchParams({ symbol_set: "@#", uppercase: "0", lowercase: "0", numbers: "0", length: "9" }),
      "application/x-www-form-urlencoded",
    );
    expect(form.body.password).toMatch(/^[@#]{9}$/);
    expect(form.body.entropy_bits).toBe(9); // 2^9 strings, each with a symbol
  });
});
