// Swagger UI as a person uses it: headless Chromium opens /swagger on the compiled executable,
// sees both endpoints, runs "Try it out" on GET /api.php and reads a password, with every request
// staying on loopback (the UI's assets are inside the executable). Leaves a screenshot in
// test/artifacts/swagger.png. Needs Debian's chromium; skipped with the reason when it cannot be had.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startBinary, type RunningBinary } from "../support/binary.ts";
import { launchChromium, type Browser } from "../support/chromium.ts";
import { program } from "../support/requires.ts";

const chromium = program(import.meta.path, "chromium");

const artifacts = join(import.meta.dir, "../artifacts");

/** The operations Swagger UI has rendered, as "METHOD /path". */
const RENDERED_OPERATIONS = `[...document.querySelectorAll(".opblock")].map((block) =>
  block.querySelector(".opblock-summary-method")?.textContent.trim() + " " +
  block.querySelector(".opblock-summary-path")?.getAttribute("data-path"))`;

const GET_PASSWORD_BLOCK = `[...document.querySelectorAll(".opblock.opblock-get")].find((block) =>
  block.querySelector(".opblock-summary-path")?.getAttribute("data-path") === "/api.php")`;

describe.skipIf(chromium === null)("Swagger UI in a browser", () => {
  let server: RunningBinary;
  let browser: Browser;

  beforeAll(async () => {
    server = await startBinary();
    browser = await launchChromium(chromium!);
  }, 20_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  test("renders both endpoints from embedded assets and runs GET /api.php with Try it out", async () => {
    const page = browser.page;
    await page.send("Network.enable");
    await page.send("Page.enable");
    await page.send("Page.navigate", { url: `${server.url}/swagger` });

    const operations = await page.waitFor<string[]>(
      `(() => { const ops = ${RENDERED_OPERATIONS}; return ops.includes("POST /api/generate") && ops.includes("GET /api.php") ? ops : null; })()`,
      "the operations to render",
    );
    expect(operations).toContain("GET /api.php");
    expect(operations).toContain("POST /api.php");
    expect(operations).toContain("POST /api/generate");
    // Every operation of the document is rendered: the job endpoints and /metrics too.
    const spec = (await (await fetch(`${server.url}/swagger/json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(spec.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ["get", "post", "put", "delete", "patch"].includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented).toContain("DELETE /api/jobs/{id}");
    expect([...operations].sort()).toEqual(documented.sort());

    await page.click(`${GET_PASSWORD_BLOCK}?.querySelector(".opblock-summary-control, .opblock-summary")`, "the GET /api.php summary");
    await page.click(`${GET_PASSWORD_BLOCK}?.querySelector("button.try-out__btn")`, 'the "Try it out" button');
    await page.click(`${GET_PASSWORD_BLOCK}?.querySelector("button.execute")`, 'the "Execute" button');
    const bodyText = await page.waitFor<string>(
      `${GET_PASSWORD_BLOCK}?.querySelector(".live-responses-table .response-col_description .highlight-code pre")?.textContent`,
      "the response body",
    );
    expect(bodyText).toContain('"success": true');
    const body = JSON.parse(bodyText) as { success: boolean; password: string; length: number };
    expect(body.success).toBe(true);
    expect(body.password).toHaveLength(body.length);
    expect(body.password.length).toBeGreaterThanOrEqual(8);

    const shot = (await page.send("Page.captureScreenshot", { format: "png" })) as { data: string };
    mkdirSync(artifacts, { recursive: true });
    writeFileSync(join(artifacts, "swagger.png"), Buffer.from(shot.data, "base64"));

    // Every request of the page went to this server: the page, its assets, the spec, the call.
    const requested = page.events
      .filter((event) => event.method === "Network.requestWillBeSent")
      .map((event) => (event.params.request as { url: string }).url)
      .filter((url) => !url.startsWith("data:") && !url.startsWith("blob:"));
    const paths = requested.map((url) => new URL(url).pathname);
    expect(paths).toContain("/swagger");
    expect(paths).toContain("/swagger/json");
    expect(paths).toContain("/api.php");
    expect(requested.filter((url) => new URL(url).origin !== server.url)).toEqual([]);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  }, 20_000);
});
