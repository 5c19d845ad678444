// The outside tools: wrk (load generator), nginx (the crawl benchmarks' site server) and the peers
// genapi's crawler is compared with. The full run installs what is missing (Debian packages with
// apt-get, the npm peer into a directory outside the project); the smoke run never installs and
// reports a missing tool as "not installed" (without nginx, the site is served by fixtures/static-server.ts).
import { existsSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, which } from "./proc.ts";

/** The peers' install, kept between runs; one per user (another user's would be unwritable). */
export const PEERS_DIR = `/tmp/genapi-bench-peers-${process.getuid?.() ?? "user"}`;
const SITEMAP_GENERATOR = "sitemap-generator-cli@7.5.0";
/** Debian packages and the command each one brings (nginx-light: a small nginx build, enough for static files). */
const DEBIAN = { wrk: "wrk", linkchecker: "linkchecker", wget2: "wget2", "nginx-light": "nginx" } as const;
type DebianPackage = keyof typeof DEBIAN;

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
  /** The crawl benchmarks' site server (scripts/bench/fixtures/site-server.ts). */
  nginx: Tool;
  sitemapGenerator: Tool;
}

export function prepareTools(install: boolean, log: (line: string) => void): Tools {
  const absent = (Object.keys(DEBIAN) as DebianPackage[]).filter((pkg) => command(DEBIAN[pkg]) === undefined);
  let aptNote: string | undefined;
  if (install && absent.length > 0) {
    if (process.getuid?.() !== 0) aptNote = "not installed (installing needs root)";
    else {
      try {
        log(`installing ${absent.join(", ")} from Debian's packages`);
        // nginx's package starts a system nginx on port 80 where services may start (no policy-rc.d
        // says otherwise); the bench never uses it: it runs its own, on loopback, with its own config.
        run(["apt-get", "update"]);
        run(["apt-get", "install", "-y", "--no-install-recommends", ...absent], {
          env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
        });
      } catch (error) {
        aptNote = `apt-get install failed: ${(error as Error).message}`;
      }
    }
  }
  const debian = (pkg: DebianPackage): Tool => {
    const name = DEBIAN[pkg];
    const path = command(name);
    if (path === undefined) return { name, note: aptNote ?? "not installed" };
    // The package that owns the command (nginx-light's nginx comes from the "nginx" package); a
    // command installed otherwise is reported as such.
    try {
      const owner = run(["dpkg-query", "-S", realpathSync(path)]).split(":")[0]!;
      // biome-ignore lint/suspicious/noTemplateCurlyInString: ${Version} is dpkg-query's --showformat field, not a template
      const version = run(["dpkg-query", "-W", "-f=${Version}", owner]);
      return { name, argv: [path], version: `${name} ${version} (Debian${pkg === name ? "" : ` ${pkg}`})` };
    } catch {
      return { name, argv: [path], version: `${name} at ${path} (not from a Debian package)` };
    }
  };
  return {
    wrk: debian("wrk"),
    linkchecker: debian("linkchecker"),
    wget2: debian("wget2"),
    nginx: debian("nginx-light"),
    sitemapGenerator: sitemapGenerator(install, log),
  };
}

/** A command on PATH, or in /usr/sbin where Debian puts nginx (not on a non-root user's PATH). */
function command(name: string): string | undefined {
  return which(name) ?? ["/usr/sbin", "/sbin"].map((dir) => join(dir, name)).find((path) => existsSync(path));
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
