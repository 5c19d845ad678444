// The layout's rules, read from src/'s imports (scripts/import-graph.ts): each fails when a change
// breaks the map a newcomer reads the code by.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { circles, folderEdges, folderShares, importsInto, readImportGraph } from "../scripts/import-graph.ts";

const graph = readImportGraph(join(import.meta.dir, "../src"));

describe("src/ imports", () => {
  test("no file imports itself back through others", () => {
    expect(circles(graph.edges.keys(), (f) => graph.edges.get(f) ?? [])).toEqual([]);
  });

  // A folder and its subfolder count as two folders: the crawler's engine (src/crawler/) uses its
  // subfolders, so none of them may use it back; src/db/'s backends use its shared src/db/store.ts and src/db/rows.ts,
  // so src/db/ itself may not pick a backend (src/open-store.ts does).
  test("arrows point down: no two folders import each other, directly or around a circle", () => {
    const folders = folderEdges(graph);
    expect(circles(folders.keys(), (f) => folders.get(f) ?? [])).toEqual([]);
  });

  test("callers reach the crawler through src/crawler/index.ts only", () => {
    const inner = [...importsInto(graph, "crawler")].filter(([, targets]) => targets.some((t) => t !== "crawler/index.ts"));
    expect(inner).toEqual([]);
  });

  test("no folder's own files hold a quarter of src/", () => {
    const largest = folderShares(graph)[0]!;
    expect(largest.share).toBeLessThan(0.25);
  });
});

describe("src/ conventions", () => {
  const sources = [...graph.lines.keys()].map((file) => ({ file, text: readFileSync(join(import.meta.dir, "../src", file), "utf8") }));

  test("every Error subclass sets its name", () => {
    const unnamed: string[] = [];
    for (const { file, text } of sources) {
      for (const match of text.matchAll(/class (\w+) extends \w*Error\b[^{]*\{/g)) {
        // The class body up to its closing brace at the start of a line.
        const body = text.slice(match.index!, text.indexOf("\n}", match.index!));
        if (!new RegExp(`name = "${match[1]}"`).test(body)) unnamed.push(`${file}: ${match[1]}`);
      }
    }
    expect(unnamed).toEqual([]);
  });

  test("nothing writes to the console: output goes through the injected log and io", () => {
    const writers = sources.filter(({ text }) => /\bconsole\.(log|error|warn|info|debug)\(/.test(text)).map(({ file }) => file);
    expect(writers).toEqual([]);
  });
});

// What a comment names must be in this repository: a file renamed or a note moved leaves no comment
// pointing at nothing, and a comment says the fact rather than where it was once discussed.
describe("comments", () => {
  const root = join(import.meta.dir, "..");
  const files = ["src", "scripts", "test"].flatMap((dir) =>
    [...new Bun.Glob("**/*.ts").scanSync({ cwd: join(root, dir) })].map((file) => `${dir}/${file}`),
  );
  const commentsOf = new Map(files.map((file) => [file, comments(readFileSync(join(root, file), "utf8"))]));

  test("every file a comment names exists: relative to the repository, src/, or the comment's folder or one above it", () => {
    const missing: string[] = [];
    for (const [file, found] of commentsOf) {
      for (const { line, text } of found) {
        for (const [name] of text.matchAll(/(?<![\w./-])[\w.-]+(?:\/[\w.-]+)*\.ts\b/g)) {
          const bases = [root, join(root, "src")];
          for (let dir = dirname(file); dir !== "."; dir = dirname(dir)) bases.push(join(root, dir));
          if (!bases.some((base) => existsSync(join(base, name)))) missing.push(`${file}:${line}: ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  test("no comment in src/ points outside the repository (a seed, a round, an issue)", () => {
    const pointers: string[] = [];
    for (const [file, found] of commentsOf) {
      if (!file.startsWith("src/")) continue;
      for (const { line, text } of found) {
        const match = /\bseed 0\d*|\bround[- ]\d+|\bissue \d+/i.exec(text);
        if (match) pointers.push(`${file}:${line}: ${match[0]}`);
      }
    }
    expect(pointers).toEqual([]);
  });
});

/**
 * The comments of a TypeScript source, each with the line it starts on: a scanner that skips string,
 * template and regular-expression literals so that `//` inside them is not taken for a comment.
 */
function comments(source: string): { line: number; text: string }[] {
  const found: { line: number; text: string }[] = [];
  const lineAt = (index: number) => source.slice(0, index).split("\n").length;
  // A `/` starts a regular expression where an operand is expected: after these, or a keyword.
  const beforeOperand = /(?:^|[(,=:[!&|?{};+\-*%<>~^]|\b(?:return|typeof|case|in|of|delete|void|throw|new|yield|await))\s*$/;
  const templates: number[] = []; // brace depth at which each open template's `${` began
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      const end = source.indexOf("\n", i);
      const stop = end === -1 ? source.length : end;
      found.push({ line: lineAt(i), text: source.slice(i + 2, stop) });
      i = stop;
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end === -1 ? source.length : end;
      found.push({ line: lineAt(i), text: source.slice(i + 2, stop) });
      i = stop + 1;
    } else if (c === '"' || c === "'") {
      for (i++; i < source.length && source[i] !== c && source[i] !== "\n"; i++) if (source[i] === "\\") i++;
    } else if (c === "`" || (c === "}" && templates.at(-1) === depth)) {
      if (c === "}") templates.pop();
      for (i++; i < source.length && source[i] !== "`"; i++) {
        if (source[i] === "\\") i++;
        else if (source[i] === "$" && source[i + 1] === "{") {
          templates.push(++depth);
          i++;
          break;
        }
      }
    } else if (c === "/" && beforeOperand.test(source.slice(Math.max(0, i - 20), i))) {
      let inClass = false;
      for (i++; i < source.length && source[i] !== "\n"; i++) {
        const r = source[i];
        if (r === "\\") i++;
        else if (r === "[") inClass = true;
        else if (r === "]") inClass = false;
        else if (r === "/" && !inClass) break;
      }
    } else if (c === "{") depth++;
    else if (c === "}") depth--;
  }
  return found;
}
