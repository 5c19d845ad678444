// Renders docs/genapi-crawl.png, the README's picture of `genapi crawl` at a terminal: the real
// executable crawls a generated loopback site inside a pseudo-terminal (util-linux script(1)), a
// frame of its progress line half-way and its final summary are taken from what it wrote, and
// headless Chromium draws them as a terminal.
//
//   bun scripts/build.ts --outfile /tmp/genapi && bun scripts/crawl-screenshot.ts /tmp/genapi
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const binary = Bun.argv[2] ?? "dist/genapi";
const out = join(import.meta.dir, "../docs/genapi-crawl.png");
const PAGES = 6_000;
const FAN = 40;

// A site generated on the fly, a little slow per page so the crawl lasts a few seconds.
const site = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const match = /^\/(?:docs\/(\d+))?$/.exec(new URL(req.url).pathname);
    const i = match ? Number(match[1] ?? 0) : NaN;
    if (!(i < PAGES)) return new Response("not found", { status: 404 });
    await Bun.sleep(10);
    let links = "";
    for (let j = i * FAN + 1; j <= i * FAN + FAN && j < PAGES; j++) links += `<a href="/docs/${j}">${j}</a>`;
    return new Response(`<html><body>${links}</body></html>`, { headers: { "content-type": "text/html" } });
  },
});
const url = `http://127.0.0.1:${site.port}/`;
const dir = mkdtempSync(join(tmpdir(), "genapi-shot-"));
const command = `genapi crawl ${url} --output sitemap.xml`;
const proc = Bun.spawn(["script", "-qfec", `stty cols 100; '${binary}' crawl ${url} --output sitemap.xml`, "/dev/null"], {
  cwd: dir,
  stdin: "ignore",
  stdout: "pipe",
  env: { ...process.env, TERM: "xterm" },
});
const screen = await new Response(proc.stdout).text();
await proc.exited;
site.stop(true);

const frames = screen.split("\r\x1b[2K").map((frame) => frame.replace(/\r?\n$/, ""));
const progress = frames.slice(1, -1);
const middle = progress[Math.floor(progress.length / 2)] ?? "";
const summary = frames.at(-1)!.trim();
console.log(`${progress.length} progress frames; middle: ${middle}\nsummary: ${summary}`);

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
const terminal = (title: string, lines: string[]) => `
  <figure><figcaption>${title}</figcaption><pre>${lines.map(escapeHtml).join("\n")}</pre></figure>`;
const html = `<!doctype html><meta charset="utf-8"><style>
  body { margin: 0; padding: 16px; background: #fff; font: 14px/1.4 sans-serif; width: 868px; }
  figure { margin: 0 0 14px; }
  figcaption { color: #555; margin-bottom: 4px; }
  pre { margin: 0; padding: 12px 14px; background: #1e1e1e; color: #ddd; border-radius: 6px;
        font: 13px/1.5 "DejaVu Sans Mono", monospace; white-space: pre; }
</style>
${terminal("while it crawls: one line on stderr, redrawn in place up to 10 times a second", [`$ ${command}`, middle])}
${terminal("when it ends: the line is erased and one summary line stays", [`$ ${command}`, summary, "$"])}`;
const page = join(dir, "shot.html");
writeFileSync(page, html);
const chromium = Bun.spawnSync(
  [
    "chromium",
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    `--screenshot=${out}`,
    "--window-size=900,270",
    `file://${page}`,
  ],
  { stdout: "pipe", stderr: "pipe" },
);
if (chromium.exitCode !== 0) throw new Error(`chromium failed: ${chromium.stderr.toString()}`);
console.log(`wrote ${out}`);
