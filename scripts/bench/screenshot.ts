// Renders BENCHMARKS.md (tables and SVG charts) in headless Chromium to a PNG, to check that the
// charts read well where people read them: `bun scripts/bench/screenshot.ts [REPORT] [PNG]`
// (defaults: BENCHMARKS.md, test/artifacts/benchmarks.png). The Markdown is the report's own
// small subset (headings, tables, lists, images, code), turned into HTML here with no package.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { run, which } from "./proc.ts";
import { ROOT } from "./servers.ts";

const report = resolve(Bun.argv[2] ?? join(ROOT, "BENCHMARKS.md"));
const png = resolve(Bun.argv[3] ?? join(ROOT, "test/artifacts/benchmarks.png"));
const chromium = which("chromium") ?? which("chromium-browser");
if (chromium === undefined) throw new Error("chromium is not installed");

// The HTML goes beside the PNG (test/artifacts is git-ignored); its <base> points the charts'
// relative paths at the report's directory.
const html = join(dirname(png), "benchmarks.html");
mkdirSync(dirname(png), { recursive: true });
writeFileSync(html, page(readFileSync(report, "utf8"), `file://${dirname(report)}/`));
const height = Number(process.env.SCREENSHOT_HEIGHT ?? 6000);
run([
  chromium,
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--hide-scrollbars",
  `--window-size=1100,${height}`,
  `--screenshot=${png}`,
  `file://${html}`,
]);
console.log(png);

function page(markdown: string, base: string): string {
  const out: string[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("```")) {
      const code: string[] = [];
      while (++i < lines.length && !lines[i]!.startsWith("```")) code.push(lines[i]!);
      out.push(`<pre>${esc(code.join("\n"))}</pre>`);
    } else if (/^#{1,6} /.test(line)) {
      const level = line.indexOf(" ");
      out.push(`<h${level}>${inline(line.slice(level + 1))}</h${level}>`);
    } else if (line.startsWith("|")) {
      const rows: string[][] = [];
      for (; i < lines.length && lines[i]!.startsWith("|"); i++)
        rows.push(
          lines[i]!.slice(1, -1)
            .split(" | ")
            .map((c) => c.trim().replace(/^\|\s*/, "")),
        );
      i--;
      const [head, , ...body] = rows;
      out.push(
        `<table><tr>${head!.map((c) => `<th>${inline(c)}</th>`).join("")}</tr>${body.map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join("")}</tr>`).join("")}</table>`,
      );
    } else if (line.startsWith("- ")) {
      const items: string[] = [];
      for (; i < lines.length && lines[i]!.startsWith("- "); i++) items.push(`<li>${inline(lines[i]!.slice(2))}</li>`);
      i--;
      out.push(`<ul>${items.join("")}</ul>`);
    } else if (line.trim() !== "") out.push(`<p>${inline(line)}</p>`);
  }
  return `<!doctype html><meta charset="utf-8"><base href="${esc(base)}"><style>body{font:14px -apple-system,'Segoe UI',Helvetica,Arial,sans-serif;max-width:1040px;margin:16px auto;color:#1f2328}table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d0d7de;padding:3px 8px;font-size:12px}img{margin:4px 8px 4px 0;border:1px solid #d0d7de}code{font-size:12px;background:#f6f8fa}li,p{font-size:12px}</style>${out.join("\n")}`;
}

function inline(text: string): string {
  return esc(text)
    .replace(/!\[([^\]]*)\]\(([^)]+)\)/g, '<img alt="$1" src="$2">')
    .replace(/\[([^\]]+)\]\(([^)]+)\)/g, '<a href="$2">$1</a>')
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<b>$1</b>")
    .replace(/_([^_]+)_/g, "<i>$1</i>");
}

function esc(text: string): string {
  return text.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!);
}
