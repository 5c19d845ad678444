// Messages and comments that send a reader to a README section ("see README 'Requirements'"), and
// the README's own links to its sections (#benchmarks), name sections that exist.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "../..");
const readme = readFileSync(join(root, "README.md"), "utf8");

/** The README's headings outside code blocks. */
function headings(): string[] {
  let fenced = false;
  const found: string[] = [];
  for (const line of readme.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) found.push(line.replace(/^#+ /, "").trim());
  }
  return found;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

test("every README section named in scripts, sources, deploy files and CI exists", () => {
  const named: { file: string; section: string }[] = [];
  for (const file of ["scripts", "src", "deploy", ".ci"].flatMap((dir) => files(join(root, dir)))) {
    for (const match of readFileSync(file, "utf8").matchAll(/README(?:'s)? (?:section )?['"“]([^'"”]+)['"”]/g)) {
      named.push({ file: file.slice(root.length + 1), section: match[1]! });
    }
  }
  expect(named.length).toBeGreaterThan(0);
  const sections = headings();
  expect(named.filter(({ section }) => !sections.includes(section))).toEqual([]);
});

test("every link of the README to one of its own sections has a target", () => {
  const anchors = new Set(headings().map(anchor));
  const links = [...readme.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
  expect(links.length).toBeGreaterThan(0);
  expect(links.filter((link) => !anchors.has(link))).toEqual([]);
});
