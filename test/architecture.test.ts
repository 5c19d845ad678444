// The layout's rules, read from src/'s imports (scripts/import-graph.ts): each fails when a change
// breaks the map a newcomer reads the code by.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { circles, folderEdges, folderShares, importsInto, readImportGraph } from "../scripts/import-graph.ts";

const graph = readImportGraph(join(import.meta.dir, "../src"));

describe("src/ imports", () => {
  test("no file imports itself back through others", () => {
    expect(circles(graph.edges.keys(), (f) => graph.edges.get(f) ?? [])).toEqual([]);
  });

  // A folder and its subfolder count as two folders: the crawler's engine (src/crawler/) uses its
  // subfolders, so none of them may use it back; src/db/'s backends use its shared store.ts and rows.ts,
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
