#!/usr/bin/env node
// Makes a fresh clone runnable with only Node.js and npm: installs the dependencies (Bun among
// them, from the npm registry) when they are missing, and finishes Bun's install when npm skipped
// its postinstall script (npm 11 blocks install scripts unless approved).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// SCARF_ANALYTICS=false: swagger-ui-dist's @scarf/scarf reports installs to a third party unless told
// not to (package.json's scarfSettings says so too, for a plain `npm install`).
const run = (cmd, args) =>
  execFileSync(cmd, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, SCARF_ANALYTICS: "false" } });
const bunWorks = () => spawnSync(join(root, "node_modules/.bin/bun"), ["--version"], { stdio: "ignore" }).status === 0;

function installed() {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
  return names.every((name) => existsSync(join(root, "node_modules", name, "package.json")));
}

if (!installed()) {
  const lock = existsSync(join(root, "package-lock.json"));
  console.error(`genapi: installing dependencies (npm ${lock ? "ci" : "install"})`);
  run("npm", [lock ? "ci" : "install", "--no-audit", "--no-fund"]);
}
if (!bunWorks()) {
  console.error("genapi: finishing the Bun install (node node_modules/bun/install.js)");
  run("node", [join(root, "node_modules/bun/install.js")]);
  if (!bunWorks()) {
    console.error("genapi: Bun does not run on this machine after install; see README 'Requirements'");
    process.exit(1);
  }
}
