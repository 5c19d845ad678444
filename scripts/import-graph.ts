// The import graph of src/: which file imports which, folded into folders. Prints (or returns) what
// a newcomer's map of the code depends on: import circles between files and between folders,
// imports that reach up into an enclosing folder, the largest folder's share of the lines, and
// which inner crawler files each caller imports. test/architecture.test.ts holds the rules.
//
//   bun scripts/import-graph.ts [SRC_DIR]
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export interface ImportGraph {
  /** Files relative to the source root, with their line counts. */
  lines: Map<string, number>;
  /** file -> the files it imports (relative imports that resolve inside the root). */
  edges: Map<string, Set<string>>;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.ts$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

export function readImportGraph(root: string): ImportGraph {
  const lines = new Map<string, number>();
  const edges = new Map<string, Set<string>>();
  for (const path of sourceFiles(root)) {
    const file = relative(root, path);
    const text = readFileSync(path, "utf8");
    lines.set(file, text.split("\n").length - (text.endsWith("\n") ? 1 : 0));
    const targets = new Set<string>();
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2]!;
      const target = relative(root, resolve(dirname(path), spec));
      if (!target.startsWith("..") && /\.ts$/.test(target)) targets.add(target);
    }
    edges.set(file, targets);
  }
  return { lines, edges };
}

/** The folder of a file ("." for the root's own files). */
export const folderOf = (file: string) => dirname(file);

/** Strongly connected components of more than one node (or a node importing itself): import circles. */
export function circles(nodes: Iterable<string>, next: (node: string) => Iterable<string>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indexOf.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const to of next(node)) {
      if (!indexOf.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, indexOf.get(to)!));
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: string[] = [];
      let top: string;
      do {
        top = stack.pop()!;
        onStack.delete(top);
        component.push(top);
      } while (top !== node);
      if (component.length > 1 || [...next(node)].includes(node)) found.push(component.sort());
    }
  };
  for (const node of nodes) if (!indexOf.has(node)) visit(node);
  return found;
}

/** Imports of a file in a folder's subtree from a file directly in an enclosing folder: arrows that run back up. */
export function upwardImports(graph: ImportGraph): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph.edges) {
    for (const target of targets) {
      const from = folderOf(file);
      const to = folderOf(target);
      // `to` encloses `from` (and is not the same folder): the importer sits below what it imports.
      if (to !== from && (to === "." || from.startsWith(`${to}/`))) out.push(`${file} -> ${target}`);
    }
  }
  return out.sort();
}

/** Folder -> the folders its files import (its own excluded). */
export function folderEdges(graph: ImportGraph): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const [file, targets] of graph.edges) {
    const from = folderOf(file);
    if (!out.has(from)) out.set(from, new Set());
    for (const target of targets) if (folderOf(target) !== from) out.get(from)!.add(folderOf(target));
  }
  return out;
}

/** Lines per top-level folder of the root (its own files count as "."), largest first. */
export function topFolderShares(graph: ImportGraph): { folder: string; lines: number; share: number }[] {
  const total = [...graph.lines.values()].reduce((a, b) => a + b, 0);
  const byTop = new Map<string, number>();
  for (const [file, n] of graph.lines) {
    const top = file.includes("/") ? file.slice(0, file.indexOf("/")) : ".";
    byTop.set(top, (byTop.get(top) ?? 0) + n);
  }
  return [...byTop].map(([folder, n]) => ({ folder, lines: n, share: n / total })).sort((a, b) => b.lines - a.lines);
}

/** Lines per folder, its own files only (a subfolder counts for itself), largest first. */
export function folderShares(graph: ImportGraph): { folder: string; lines: number; share: number }[] {
  const total = [...graph.lines.values()].reduce((a, b) => a + b, 0);
  const byFolder = new Map<string, number>();
  for (const [file, n] of graph.lines) byFolder.set(folderOf(file), (byFolder.get(folderOf(file)) ?? 0) + n);
  return [...byFolder].map(([folder, n]) => ({ folder, lines: n, share: n / total })).sort((a, b) => b.lines - a.lines);
}

/** For each file outside `library`, the files inside it that it imports. */
export function importsInto(graph: ImportGraph, library: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [file, targets] of graph.edges) {
    if (file.startsWith(`${library}/`)) continue;
    const inner = [...targets].filter((t) => t.startsWith(`${library}/`)).sort();
    if (inner.length > 0) out.set(file, inner);
  }
  return out;
}

if (import.meta.main) {
  const root = resolve(Bun.argv[2] ?? "src");
  const graph = readImportGraph(root);
  const fileCircles = circles(graph.edges.keys(), (f) => graph.edges.get(f) ?? []);
  const folders = folderEdges(graph);
  const folderCircles = circles(folders.keys(), (f) => folders.get(f) ?? []);
  const library = existsIn(graph, "crawler") ? "crawler" : "sitemap";
  console.log(`files: ${graph.lines.size}, lines: ${[...graph.lines.values()].reduce((a, b) => a + b, 0)}`);
  console.log(`file circles: ${fileCircles.length}`);
  for (const c of fileCircles) console.log(`  ${c.join(" <-> ")}`);
  console.log(`folder circles: ${folderCircles.length}`);
  for (const c of folderCircles) console.log(`  ${c.join(" <-> ")}`);
  const up = upwardImports(graph);
  console.log(`imports reaching up into an enclosing folder: ${up.length}`);
  for (const u of up) console.log(`  ${u}`);
  console.log("lines by folder (its own files):");
  for (const s of folderShares(graph))
    console.log(`  ${s.folder.padEnd(16)} ${String(s.lines).padStart(6)}  ${(s.share * 100).toFixed(1)}%`);
  console.log("lines by top-level folder (subfolders included):");
  for (const s of topFolderShares(graph))
    console.log(`  ${s.folder.padEnd(10)} ${String(s.lines).padStart(6)}  ${(s.share * 100).toFixed(1)}%`);
  console.log(`callers' imports into ${library}/:`);
  for (const [file, inner] of importsInto(graph, library))
    console.log(`  ${file}: ${inner.length} (${inner.map((i) => i.slice(library.length + 1)).join(", ")})`);
}

function existsIn(graph: ImportGraph, folder: string): boolean {
  for (const file of graph.lines.keys()) if (file.startsWith(`${folder}/`)) return true;
  return false;
}
