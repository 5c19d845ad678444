#!/usr/bin/env bun
// The executable's entry point: `genapi <command>`.
import { runCli } from "./cli.ts";

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
process.exit(code);
