// A rendered page's fingerprint and own date come from its DOM: text and a date a script writes
// count, the script itself does not. Real Chromium (skipped, saying why, where there is none); the
// sandbox is off only because tests run as root.
import { afterAll, expect, test } from "bun:test";
import {
  Browser,
  createCrawlNetwork,
  defaultCrawlLimits,
  defaultCrawlOptions,
  NO_HISTORY,
  runCrawl,
  type SitemapEntry,
} from "../../src/crawler/index.ts";
import { RememberingState } from "../support/remembering-state.ts";
import { program } from "../support/requires.ts";

const chromium = program(import.meta.path, "chromium");

let token = 0;
/** A page whose main text and modified time exist only once its script has run; the script changes on every answer. */
const scripted = (text: string) => `<!doctype html><html><head><title>Same</title></head><body><main></main>
  <a href="/a">a</a> <a href="/b">b</a> <a href="/c">c</a><script>
  const nonce = "${token++}";
  document.querySelector("main").textContent = ${JSON.stringify(text)};
  const meta = document.createElement("meta");
  meta.setAttribute("property", "article:modified_time");
  meta.setAttribute("content", "2026-03-05T10:15:00+01:00");
  document.head.append(meta);
</script></body></html>`;
const site = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const path = new URL(req.url).pathname;
    const body: Record<string, string> = {
      "/": scripted("Rendered text"),
      "/a": scripted("Rendered text"),
      // The same text in the HTML itself, no script: the same fingerprint.
      "/b": `<!doctype html><html><head><title>Same</title></head><body><main>Rendered text</main></body></html>`,
      "/c": scripted("Other text"),
    };
    if (path === "/robots.txt") return new Response("User-agent: *\nAllow: /\n");
    const html = body[path];
    return html === undefined
      ? new Response("not found", { status: 404 })
      : new Response(html, { headers: { "content-type": "text/html" } });
  },
});
const browser =
  chromium === null ? null : new Browser({ executable: chromium, tabs: 2, noSandbox: process.getuid?.() === 0, log: () => {} });

afterAll(async () => {
  await browser?.close();
  site.stop(true);
});

test.skipIf(chromium === null)(
  "rendered pages: the fingerprint of the DOM's main text and the date a script wrote into the DOM",
  async () => {
    const state = new RememberingState();
    await runCrawl(
      `http://127.0.0.1:${site.port}/`,
      state,
      { ...defaultCrawlLimits, maxPages: 10 },
      {
        fetch: createCrawlNetwork({ policy: { allowPrivate: true, allowTargets: [] } }),
        now: Date.now,
        userAgent: "genapi/0.1.0",
        renderer: { browser: browser!, timeoutMs: 10_000 },
      },
      { crawl: { ...defaultCrawlOptions(10), render: "always" }, history: NO_HISTORY },
    );
    const entries: Record<string, SitemapEntry & { fingerprint?: string | null }> = {};
    for await (const entry of state.entries())
      entries[new URL(entry.loc).pathname] = { ...entry, fingerprint: state.memories.get(entry.loc)?.fingerprint };
    expect(Object.keys(entries).sort()).toEqual(["/", "/a", "/b", "/c"]);
    // "/" and "/a" differ only in their scripts' nonce; "/b" holds the same text without a script.
    expect(entries["/a"]!.fingerprint).toBe(entries["/"]!.fingerprint!);
    expect(entries["/b"]!.fingerprint).toBe(entries["/"]!.fingerprint!);
    expect(entries["/c"]!.fingerprint).not.toBe(entries["/"]!.fingerprint!);
    expect(entries["/a"]!.lastmod).toBe("2026-03-05T09:15:00Z");
    // A site's run dates a new page without a date of its own by when it read it.
    expect(Date.now() - Date.parse(entries["/b"]!.lastmod!)).toBeLessThan(60_000);
  },
  60_000,
);
