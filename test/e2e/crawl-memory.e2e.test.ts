// --max-crawls hostile crawls at once, every page 3.3 MB of nested <noscript>
// (or of unclosed <b>, which costs the HTML parser as much per level), must keep the executable
// under 256 MB peak RSS and bring it back near its idle level afterwards.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createKey, generate, startBinary, tempDir, type RunningBinary } from "../support/binary.ts";
import { serveSite, type Site } from "../support/site.ts";

const MAX_CRAWLS = 4;
const PAGES = 40;
const NESTS = { noscript: "<noscript>", bold: "<b>" };

/** VmHWM (peak) and VmRSS (now) of a process, in MiB. */
function memory(pid: number): { peak: number; rss: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]);
  return { peak: kib("VmHWM") / 1024, rss: kib("VmRSS") / 1024 };
}

let site: Site;
let server: RunningBinary;
let key: string;
beforeAll(async () => {
  // 3.3 MB of nested tags after a few links: each page links on to the next ones.
  const routes: Record<string, Response> = {};
  for (const [site, tag] of Object.entries(NESTS)) {
    const nest = tag.repeat(Math.floor(3_300_000 / tag.length));
    for (let i = 0; i < PAGES; i++) {
      const links = [1, 2, 3].map((d) => `<a href="/${site}/${(i + d) % PAGES}">next</a>`).join("");
      routes[`/${site}/${i}`] = new Response(`<!doctype html><title>${i}</title>${links}${nest}`, {
        headers: { "content-type": "text/html" },
      });
    }
  }
  routes["/small"] = new Response("<!doctype html><title>small</title>", { headers: { "content-type": "text/html" } });
  site = await serveSite(routes);
  const dbPath = join(tempDir(), "genapi.db");
  key = await createKey(dbPath, "--daily-limit", "100");
  server = await startBinary({ dbPath, args: ["--allow-private-targets", "--max-crawls", String(MAX_CRAWLS)] });
});
afterAll(async () => {
  await server.stop();
  await site.stop();
});

test.each(Object.keys(NESTS))(
  `${MAX_CRAWLS} concurrent crawls of 3.3 MB pages of nested %s tags stay under 256 MB and give the memory back`,
  async (nest) => {
    const pid = server.proc.pid;
    // Warm up the code paths with a one-page crawl, so "idle" is the idle of a server that has crawled.
    expect((await generate(server, key, `${site.url}/small`)).status).toBe(200);
    const idle = memory(pid);
    const responses = await Promise.all(Array.from({ length: MAX_CRAWLS }, () => generate(server, key, `${site.url}/${nest}/0`)));
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as any[];
    expect(responses.map((r) => r.status)).toEqual(Array(MAX_CRAWLS).fill(200));
    for (const { data } of bodies) expect(data.url_count).toBe(PAGES);
    const during = memory(pid);
    await Bun.sleep(3_000);
    const after = memory(pid);
    console.log(
      `genapi memory (${nest}): idle ${idle.rss.toFixed(1)} MiB; peak so far (VmHWM) ${during.peak.toFixed(1)} MiB; ` +
        `right after ${during.rss.toFixed(1)} MiB; 3 s later ${after.rss.toFixed(1)} MiB`,
    );
    expect(during.peak).toBeLessThan(256);
    expect(after.rss - idle.rss).toBeLessThan(40);
  },
  120_000,
);
