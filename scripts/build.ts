// Builds the single executable dist/genapi (or --outfile PATH, --target bun-linux-x64-baseline, ...).
// Identifiers are never minified: Elysia reads handler source at run time. The executable reads
// neither .env, bunfig.toml, tsconfig.json nor package.json from the directory it starts in.
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    outfile: { type: "string", default: "dist/genapi" },
    target: { type: "string" },
    bytecode: { type: "boolean", default: false },
  },
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
  // Bytecode builds default to CommonJS, which has no top-level await (src/main.ts uses it).
  ...(values.bytecode ? ["--bytecode", "--format=esm"] : []),
  ...(values.target ? [`--target=${values.target}`] : []),
  `--outfile=${values.outfile}`,
  "src/main.ts",
];

const root = new URL("..", import.meta.url).pathname;
const proc = Bun.spawnSync([process.execPath, ...buildArgs], { cwd: root, stdout: "inherit", stderr: "inherit" });
process.exit(proc.exitCode ?? 1);
