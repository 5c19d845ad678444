// The OpenAPI document the compiled server serves passes `redocly lint` with the recommended
// rules and no error, so endpoints and fields other features add are linted too.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startBinary, tempDir, type RunningBinary } from "../support/binary.ts";

const REDOCLY = join(import.meta.dir, "../../node_modules/.bin/redocly");

interface Problem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
  location: { pointer: string }[];
}

describe("redocly lint of /swagger/json", () => {
  let server: RunningBinary;
  let document: Record<string, any>;
  beforeAll(async () => {
    server = await startBinary({ args: ["--free-daily-limit", "20"] });
    document = (await (await fetch(`${server.url}/swagger/json`)).json()) as Record<string, any>;
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
  });

  test("recommended rules: no error", async () => {
    const file = join(tempDir(), "openapi.json");
    writeFileSync(file, JSON.stringify(document));
    const proc = Bun.spawn([REDOCLY, "lint", "--extends", "recommended", "--format", "json", file], {
      cwd: tempDir(),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    const report = JSON.parse(out) as { problems: Problem[] };
    const errors = report.problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(code).toBe(0);
  }, 60_000);

  test("the open endpoints declare no security; the keyed ones the API key; events also take it as ?api_key=", () => {
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const open = !path.startsWith("/api/") || path === "/api.php";
        // A browser's EventSource cannot send headers: a validating proxy must let the query key through.
        const events = path === "/api/jobs/{id}/events";
        expect({ path, method, security: operation.security }).toEqual({
          path,
          method,
          security: open ? [] : events ? [{ ApiKeyAuth: [] }, { ApiKeyQuery: [] }] : [{ ApiKeyAuth: [] }],
        });
      }
    }
    expect(document.components.securitySchemes).toMatchObject({
      ApiKeyAuth: { type: "apiKey", in: "header", name: "X-API-Key" },
      ApiKeyQuery: { type: "apiKey", in: "query", name: "api_key" },
    });
  });

  test("the free tier stated is the configured one (--free-daily-limit 20)", () => {
    const text = JSON.stringify(document);
    expect(document.info.description).toContain("a free tier of 20 requests per client address per UTC day");
    expect(document.paths["/api/generate"].post.description).toContain("Free keys: 20 requests");
    expect(text.match(/\b5 requests per[^"]*/g)).toBeNull();
    expect(document.paths["/api/generate"].post.responses["429"].content["application/json"].example.message).toContain(
      "(20 requests per day)",
    );
    expect(document.paths["/api/jobs"].post.responses["429"].content["application/json"].example.message).toContain(
      "(20 requests per day)",
    );
    expect(document.info.contact).toBeDefined();
  });
});
