// A browser's own EventSource watches a job on the compiled executable: headless Chromium opens
// GET /api/jobs/<id>/events (the key as ?api_key=, since EventSource cannot send headers) and
// receives progress events, then one done event with the final job. Skipped, with the reason,
// where Debian's chromium cannot be had.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createKey, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { launchChromium, type Browser } from "../support/chromium.ts";
import { program } from "../support/requires.ts";
import { createJob, generatedSite, json, type GeneratedSite } from "../jobs/support.ts";

const chromium = program(import.meta.path, "chromium");

describe.skipIf(chromium === null)("a job watched by a browser's EventSource", () => {
  let server: RunningBinary;
  let browser: Browser;
  let site: GeneratedSite;
  let key: string;

  beforeAll(async () => {
    site = generatedSite(300, { fanout: 4, delayMs: 100 });
    const dbPath = join(tempDir(), "genapi.db");
    key = await createKey(dbPath);
    server = await startBinary({ dbPath, args: ["--allow-private-targets"] });
    browser = await launchChromium(chromium!);
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await site?.stop();
  });

  test("progress events while it runs, then one done with the final job", async () => {
    const id = (await json(await createJob(server, key, { url: `${site.url}/` }))).data.id;
    const page = browser.page;
    await page.send("Page.navigate", { url: `${server.url}/healthz` });
    await page.waitFor("document.readyState === 'complete'", "the page to load");
    const seen = await page.evaluate<{ type: string; status: string; pages: number }[]>(`new Promise((resolve, reject) => {
      const events = [];
      const source = new EventSource(${JSON.stringify(`/api/jobs/${id}/events?api_key=${encodeURIComponent(key)}`)});
      const record = (type) => (event) => {
        const job = JSON.parse(event.data);
        events.push({ type, status: job.status, pages: job.progress.pages_crawled, listed: job.result ? job.result.url_count : null });
        if (type === "done") { source.close(); resolve(events); }
      };
      source.addEventListener("progress", record("progress"));
      source.addEventListener("done", record("done"));
      setTimeout(() => { source.close(); reject(new Error("no done event within 30 s: " + JSON.stringify(events))); }, 30000);
    })`);
    const types = seen.map((e) => e.type);
    expect(types.filter((t) => t === "progress").length).toBeGreaterThanOrEqual(2);
    expect(types.at(-1)).toBe("done");
    expect(types.filter((t) => t === "done").length).toBe(1);
    expect(seen.at(-1)).toMatchObject({ status: "succeeded", listed: 300 });
  }, 40_000);
});
