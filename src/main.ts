#!/usr/bin/env bun
// The executable's entry point: `genapi <command>`.
import { crawlWithoutFtl } from "./commands/ftl.ts";

const args = process.argv.slice(2);
const env = crawlWithoutFtl(args, process.env, Bun.isStandaloneExecutable);
if (env !== undefined) {
  // Does not return when it succeeds. When it fails (the executable moved or deleted since it
  // started), the crawl runs here as it is: the same sitemap, with the FTL's compiles.
  try {
    process.execve?.(process.execPath, [process.argv0, ...args], env);
  } catch {}
}
// Loaded after the decision above, so that a crawl started again does not evaluate the whole
// program twice.
const { runCli } = await import("./cli.ts");
const code = await runCli(args, {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
process.exit(code);
