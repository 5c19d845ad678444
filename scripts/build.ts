// Builds the single executable dist/genapi (or --outfile PATH, --target bun-linux-x64-baseline, ...).
// Identifiers are never minified: Elysia reads handler source at run time. The executable reads
// neither .env, bunfig.toml, tsconfig.json nor package.json from the directory it starts in.
// It carries JavaScriptCore bytecode beside the source: start-up 100 -> 55 ms (BENCHMARKS.md,
// section 4), 5 MB larger; the source stays in, so Function.prototype.toString still answers.
// --no-bytecode leaves it out (release.sh does for targets this machine cannot run to check).
// Split into chunks (--splitting): src/main.ts decides whether `crawl` and `serve` start again
// without the JIT's top tier (src/commands/ftl.ts) before it imports the program, and in one bundle
// that first image loaded the whole program's 1.5 MB for nothing: 48-70 ms to its execve, 17 ms
// with the program in a chunk of its own (`genapi serve` to its first 200: 150 -> 111 ms on a slow
// machine, against 120 before the restart).
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    outfile: { type: "string", default: "dist/genapi" },
    target: { type: "string" },
    bytecode: { type: "boolean", default: true },
  },
  allowNegative: true,
});

export const buildArgs = [
  "build",
  "--compile",
  "--minify-whitespace",
  "--minify-syntax",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  "--no-compile-autoload-tsconfig",
  "--no-compile-autoload-package-json",
  "--splitting",
  // Bytecode builds default to CommonJS, which has no top-level await (src/main.ts uses it).
  ...(values.bytecode ? ["--bytecode", "--format=esm"] : []),
  ...(values.target ? [`--target=${values.target}`] : []),
  `--outfile=${values.outfile}`,
  "src/main.ts",
];

const root = new URL("..", import.meta.url).pathname;
const proc = Bun.spawnSync([process.execPath, ...buildArgs], { cwd: root, stdout: "inherit", stderr: "inherit" });
process.exit(proc.exitCode ?? 1);
