import { describe, expect, test } from "bun:test";
import { testApp } from "./support/app.ts";

describe("HTTP conventions shared by every route", () => {
  const { call } = testApp();

  test("unknown paths answer 404 JSON", async () => {
    const res = await call("/nope");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toEqual({ success: false, message: "Not found: /nope" });
  });

  test("a known path with another method answers 405 JSON with Allow", async () => {
    const res = await call("/api.php", { method: "PUT" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(await res.json()).toEqual({ success: false, error: "Method PUT is not allowed here; use GET, HEAD, POST." });
    const generate = await call("/api/generate", { method: "GET" });
    expect(generate.status).toBe(405);
    expect(generate.headers.get("allow")).toBe("POST");
    expect(((await generate.json()) as any).message).toContain("use POST");
  });

  test("every API response carries Cache-Control: no-store, errors included", async () => {
    for (const [path, init] of [
      ["/api.php", {}],
      ["/api.php?length=3", {}],
      ["/api/generate", { method: "POST" }],
      ["/nope", {}],
    ] as const) {
      const res = await call(path, init);
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
  });

  test("CORS: any origin, and preflights on both endpoints allow Content-Type and X-API-Key", async () => {
    const simple = await call("/api.php", { headers: { Origin: "https://app.example" } });
    expect(simple.headers.get("access-control-allow-origin")).toBe("*");
    for (const path of ["/api.php", "/api/generate"]) {
      const res = await call(path, {
        method: "OPTIONS",
        headers: {
          Origin: "https://app.example",
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "content-type, x-api-key",
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-headers")).toBe("Content-Type, X-API-Key");
      expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    }
  });

  test("rate-limit headers are exposed to browsers", async () => {
    const res = await call("/api/generate", { method: "POST", headers: { Origin: "https://app.example" } });
    const exposed = res.headers.get("access-control-expose-headers") ?? "";
    for (const name of [
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset",
      "RateLimit",
      "RateLimit-Policy",
      "Retry-After",
    ]) {
      expect(exposed).toContain(name);
    }
  });
});

describe("health", () => {
  test("/healthz answers 200 while serving", async () => {
    const res = await testApp().call("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  test("/readyz follows the database", async () => {
    expect((await testApp({}, { ready: () => true }).call("/readyz")).status).toBe(200);
    const down = await testApp({}, { ready: () => false }).call("/readyz");
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: "database unavailable" });
  });
});

describe("OpenAPI document and Swagger UI", () => {
  const { call } = testApp();

  test("/swagger/json lists both endpoints with their parameters, bodies, responses and the key scheme", async () => {
    const res = await call("/swagger/json");
    expect(res.status).toBe(200);
    const spec = (await res.json()) as any;
    expect(spec.info.title).toBe("genapi");
    expect(spec.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.keys(spec.paths["/api.php"]).sort()).toEqual(["get", "post"]);
    const names = spec.paths["/api.php"].get.parameters.map((p: { name: string }) => p.name).sort();
    expect(names).toEqual([
      "capitalize",
      "count",
      "exclude",
      "exclude_similar",
      "include_number",
      "length",
      "lowercase",
      "min_lowercase",
      "min_numbers",
      "min_symbols",
      "min_uppercase",
      "numbers",
      "separator",
      "symbol_set",
      "symbols",
      "type",
      "uppercase",
      "words",
    ]);
    const length = spec.paths["/api.php"].get.parameters.find((p: { name: string }) => p.name === "length");
    expect(length).toMatchObject({
      in: "query",
      description: "Password length: 8 to 128.",
      schema: { type: "integer", minimum: 8, maximum: 128, default: 16 },
    });
    const symbols = spec.paths["/api.php"].get.parameters.find((p: { name: string }) => p.name === "symbols");
    // Any case, as the server reads booleans: a pattern, not a lower-case enum.
    const pattern = new RegExp(symbols.schema.pattern);
    for (const accepted of ["true", "TRUE", "False", "1", "0"]) expect(pattern.test(accepted)).toBe(true);
    for (const refused of ["yes", "2", "truee", ""]) expect(pattern.test(refused)).toBe(false);
    expect(Object.keys(spec.paths["/api.php"].post.requestBody.content).sort()).toEqual([
      "application/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
    ]);
    const generate = spec.paths["/api/generate"].post;
    expect(generate.security).toEqual([{ ApiKeyAuth: [] }]);
    expect(generate.requestBody.content["application/json"].schema.required).toEqual(["url"]);
    expect(Object.keys(generate.responses).sort()).toEqual(["200", "400", "401", "413", "422", "429", "502", "503"]);
    expect(spec.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: "apiKey", in: "header", name: "X-API-Key" });
    expect(spec.paths["/swagger/assets/{name}"]).toBeUndefined();
  });

  test("/swagger loads its assets from this server, never a CDN", async () => {
    const html = await (await call("/swagger")).text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources.sort()).toEqual(["/swagger/assets/swagger-ui-bundle.js", "/swagger/assets/swagger-ui.css"]);
    expect(html).not.toMatch(/unpkg|jsdelivr|cdn\./);
    for (const source of sources) {
      const asset = await call(source!);
      expect(asset.status).toBe(200);
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
      expect(asset.headers.get("cache-control")).toBe("public, max-age=86400");
    }
  });
});
