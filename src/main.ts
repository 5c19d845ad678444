#!/usr/bin/env bun
// The executable's entry point: `genapi <command>`.
import { restartWithoutFtl } from "./commands/ftl.ts";

const args = process.argv.slice(2);
restartWithoutFtl(args);
// Loaded after the restart above, so that a command started again does not load the whole
// program twice (scripts/build.ts puts it in a chunk of its own).
const { runCli } = await import("./cli.ts");
const code = await runCli(args, {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
process.exit(code);
