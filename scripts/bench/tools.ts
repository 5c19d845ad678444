// The outside tools: wrk (load generator) and the peers genapi's crawler is compared with. The full
// run installs what is missing (Debian packages with apt-get, the npm peer into a directory outside
// the project); the smoke run never installs and reports a missing tool as "not installed".
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, which } from "./proc.ts";

export const PEERS_DIR = "/tmp/genapi-bench-peers";
const SITEMAP_GENERATOR = "sitemap-generator-cli@7.5.0";
const DEBIAN = ["wrk", "linkchecker", "wget2"] as const;

export interface Tool {
  name: string;
  /** Base command; undefined when the tool is not installed. */
  argv?: string[];
  version?: string;
  note?: string;
}

export interface Tools {
  wrk: Tool;
  linkchecker: Tool;
  wget2: Tool;
  sitemapGenerator: Tool;
}

export function prepareTools(install: boolean, log: (line: string) => void): Tools {
  const absent = DEBIAN.filter((name) => which(name) === undefined);
  let aptNote: string | undefined;
  if (install && absent.length > 0) {
    if (process.getuid?.() !== 0) aptNote = "not installed (installing needs root)";
    else {
      try {
        log(`installing ${absent.join(", ")} from Debian's packages`);
        run(["apt-get", "update"]);
        run(["apt-get", "install", "-y", "--no-install-recommends", ...absent], {
          env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
        });
      } catch (error) {
        aptNote = `apt-get install failed: ${(error as Error).message}`;
      }
    }
  }
  const debian = (name: (typeof DEBIAN)[number]): Tool => {
    const path = which(name);
    if (path === undefined) return { name, note: aptNote ?? "not installed" };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ${Version} is dpkg-query's --showformat field, not a template
    const version = run(["dpkg-query", "-W", "-f=${Version}", name]);
    return { name, argv: [path], version: `${name} ${version} (Debian)` };
  };
  return {
    wrk: debian("wrk"),
    linkchecker: debian("linkchecker"),
    wget2: debian("wget2"),
    sitemapGenerator: sitemapGenerator(install, log),
  };
}

/**
 * The npm sitemap-generator-cli, run by Node with a preload that lowers simplecrawler's spawn
 * interval from 250 ms to 1 ms: the CLI has no flag for it, and at 250 ms it starts at most 4
 * requests a second whatever its --max-concurrency.
 */
function sitemapGenerator(install: boolean, log: (line: string) => void): Tool {
  const name = "sitemap-generator-cli";
  const cli = join(PEERS_DIR, "node_modules/sitemap-generator-cli/index.js");
  const node = which("node");
  if (node === undefined) return { name, note: "not installed (no node)" };
  if (!existsSync(cli) && install) {
    log(`installing ${SITEMAP_GENERATOR} into ${PEERS_DIR}`);
    try {
      run(["npm", "install", "--prefix", PEERS_DIR, "--no-audit", "--no-fund", SITEMAP_GENERATOR], { cwd: "/tmp" });
    } catch (error) {
      return { name, note: `npm install failed: ${(error as Error).message}` };
    }
  }
  if (!existsSync(cli)) return { name, note: "not installed" };
  const preload = join(PEERS_DIR, "unthrottle.cjs");
  writeFileSync(
    preload,
    `// Written by genapi's benchmark: simplecrawler spawns one request per interval (250 ms by default).
const Crawler = require(require.resolve("simplecrawler", { paths: [require.resolve("sitemap-generator")] }));
const start = Crawler.prototype.start;
Crawler.prototype.start = function () { this.interval = 1; return start.apply(this, arguments); };
`,
  );
  const { version } = JSON.parse(readFileSync(join(PEERS_DIR, "node_modules/sitemap-generator-cli/package.json"), "utf8")) as {
    version: string;
  };
  return { name, argv: [node, "--require", preload, cli], version: `${name} ${version} (npm) on Node.js ${run([node, "--version"])}` };
}
