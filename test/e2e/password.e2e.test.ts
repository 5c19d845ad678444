// /api.php answered by the compiled executable itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startBinary, type RunningBinary } from "../support/binary.ts";

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
    await Bun.sleep(50);
    const line = genapi.stdout.map((l) => JSON.parse(l)).find((l) => l.request_id === requestId);
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
      for (let i = 0; i < 50; i++) {
        const line = genapi.stdout.find((l) => l.includes(`"request_id":"${id}"`));
        if (line) return JSON.parse(line);
        await Bun.sleep(20);
      }
      throw new Error(`no log line for request ${id}`);
    };
    const headersOf = (res: Response) => [...res.headers].filter(([name]) => name !== "date" && name !== "x-request-id");
    for (const query of ["?length=20&symbols=false", "?length=3", "?length=20&length=9&exclude=%zz"]) {
      const init = { headers: { "user-agent": "e2e-lane" } };
      const lane = await fetch(`${genapi.url}/api.php${query}`, init);
      const app = await fetch(`${genapi.url}/api.php/${query}`, init);
      expect(lane.status).toBe(app.status);
      expect(headersOf(lane)).toEqual(headersOf(app));
      const [laneBody, appBody] = [(await lane.json()) as any, (await app.json()) as any];
      if (app.status === 200)
        expect({ ...laneBody, password: laneBody.password.length }).toEqual({ ...appBody, password: appBody.password.length });
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
