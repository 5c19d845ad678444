// Thousands of malformed URLs, bodies and headers against dist/genapi: every answer is JSON and a
// 4xx (or a 200 for a password request whose junk parameters are ignored), never a 5xx, and the
// server is alive afterwards. Inputs come from a seeded generator, so a failure is reproducible.
// No generated URL is crawlable: each is malformed or names a private IP literal (refused without
// DNS or traffic), so nothing leaves the machine.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createKey, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";

const SEED = 20261121;
const ROUNDS = 1500;

function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = mulberry32(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const int = (max: number) => Math.floor(random() * max);
const junk = (length: number) => Array.from({ length }, () => String.fromCharCode(int(0x2fff))).join("");
const bytes = (length: number) => Uint8Array.from({ length }, () => int(256));

const badUrls = () =>
  pick([
    () => junk(int(40)),
    () => `ftp://example.com/${junk(5)}`,
    () => `http://user:${junk(3)}@example.com/`,
    () => `http:///${junk(8)}`,
    () => `//example.com/${junk(4)}`,
    () => `javascript:alert(${int(9)})`,
    () => `http://example.com/${"a".repeat(2049)}`,
    () => `http://10.${int(256)}.${int(256)}.${int(256)}/`,
    () => `http://192.168.${int(256)}.${int(256)}:${1024 + int(60000)}/`,
    () => `http://[fd00::${int(65535).toString(16)}]/`,
    () => `http://169.254.169.254/latest/meta-data/`,
    () => `http://[::ffff:10.0.0.${int(256)}]/`,
    () => `https://127.0.0.1:${int(65536)}/${junk(3)}`,
    () => `http://100.${64 + int(64)}.0.1/`,
    () => ` http://example.com/`,
    () => `http://exa mple.com/`,
    () => `http://[::1/`,
    () => int(1000) as unknown as string,
    () => null as unknown as string,
    () => [`http://example.com/`] as unknown as string,
  ])();

const badBodies = (): string | Uint8Array =>
  pick([
    () => bytes(int(200)),
    () => junk(int(100)),
    () => `{"url": ${JSON.stringify(badUrls())}`,
    () => JSON.stringify({ url: badUrls() }),
    () => "[".repeat(5000) + "]".repeat(5000),
    () => JSON.stringify({ url: { toString: "http://example.com/" } }),
    () => "x".repeat(17 * 1024),
    () => "",
    () => "null",
    () => '"http://example.com/"',
  ])();

let server: RunningBinary;
let key: string;
beforeAll(async () => {
  const dbPath = join(tempDir(), "genapi.db");
  key = await createKey(dbPath, "--daily-limit", "1000000");
  server = await startBinary({ dbPath });
});
afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

async function expectJson4xx(res: Response, allowOk: boolean, what: string) {
  const text = await res.text();
  const ok = allowOk ? res.status === 200 || (res.status >= 400 && res.status < 500) : res.status >= 400 && res.status < 500;
  if (!ok) throw new Error(`${what}: status ${res.status} ${text.slice(0, 200)}`);
  const body = JSON.parse(text);
  expect(typeof body.success).toBe("boolean");
}

describe("dist/genapi under malformed input", () => {
  test(`${ROUNDS} malformed sitemap requests: a JSON 4xx each time`, async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const headers: Record<string, string> = {
        "content-type": pick([
          "application/json",
          "text/plain",
          "multipart/form-data; boundary=x",
          "application/x-www-form-urlencoded",
          junk(5).replace(/[^\x20-\x7e]/g, ""),
        ]),
        "x-api-key": pick([key, key, key, "", `genapi_${junk(10).replace(/[^\x21-\x7e]/g, "a")}`, `${key.slice(0, -1)}Z`]),
        [`x-${int(1e6)}`]: "v".repeat(int(4000)),
      };
      if (random() < 0.1) headers["x-forwarded-for"] = junk(20).replace(/[^\x20-\x7e]/g, ",");
      const res = await fetch(`${server.url}/api/generate`, { method: "POST", headers, body: badBodies() });
      await expectJson4xx(res, false, `sitemap round ${i}`);
    }
  });

  test(`${ROUNDS} malformed password requests: JSON, never a 5xx`, async () => {
    const names = ["length", "uppercase", "lowercase", "numbers", "symbols", "exclude", "exclude_similar", junk(3)];
    for (let i = 0; i < ROUNDS; i++) {
      const query = new URLSearchParams();
      for (let j = int(5); j > 0; j--) query.append(pick(names), pick([junk(int(10)), String(int(300) - 50), "TRUE", "", "1e2", "0x10"]));
      const post = random() < 0.5;
      const res = await fetch(`${server.url}/api.php?${query}`, {
        method: post ? "POST" : "GET",
        headers: post
          ? {
              "content-type": pick([
                "application/json",
                "application/x-www-form-urlencoded",
                "multipart/form-data; boundary=zz",
                "text/plain",
              ]),
            }
          : {},
        body: post ? badBodies() : undefined,
      });
      await expectJson4xx(res, true, `password round ${i}`);
    }
  });

  test("the server is alive and healthy afterwards", async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect(((await (await fetch(`${server.url}/api.php`)).json()) as any).success).toBe(true);
    expect(server.proc.exitCode).toBeNull();
    expect(server.stderr()).not.toContain("unhandled");
  });
});
