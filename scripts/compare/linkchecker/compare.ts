// genapi's broken external links against LinkChecker's `--check-extern` on a real site: the Cozy
// documentation (docs.cozy.io), whose built MkDocs HTML is committed to github.com/cozy/cozy.github.io
// (branch master; pinned below; AGPL-3.0, so it is fetched, not vendored: 493 pages, 2,354 files,
// 106 MB with images). Its pages link to 2,268 distinct external URLs on 173 other hosts.
//
// Nothing leaves loopback: the comparison runs inside `unshare -n -m` (a network namespace with only
// `lo`, and a mount namespace in which /etc/hosts and /etc/resolv.conf are bind-mounted copies).
// /etc/hosts maps docs.cozy.io and every host the site links to onto 127.0.0.1, where one nginx
// serves the site on https://docs.cozy.io and answers for every other host as standins.ts plans it
// (mostly 200, some 404/410/500/403, redirects, two hosts refusing HEAD with 405, one answering HEAD
// with 403, one host down, one whose name does not resolve, one with an untrusted certificate). TLS:
// a local CA signs the certificates; genapi gets it through NODE_EXTRA_CA_CERTS (Bun honours it for
// its TLS sockets: checked here, the site's own pages are fetched over https), LinkChecker through
// `sslverify` in its configuration file.
//
// Needs: root (unshare, mount, ports 80 and 443 in the namespace), nginx (Debian's nginx-light),
// linkchecker (Debian 12: 10.2.1), openssl, iproute2, git, and a genapi executable with
// `--check-external` (`npm run build`). The first run fetches the pinned commit (network needed
// then; the site is kept in --work for later runs).
//
//   sudo bun scripts/compare/linkchecker/compare.ts [--genapi dist/genapi] [--work DIR]
//        [--repo URL|GIT-DIR]  (default https://github.com/cozy/cozy.github.io; a local clone or
//        mirror that holds the pinned commit is read in place)
//
// It prints the comparison table (markdown) and writes WORK/comparison.json with every URL of the
// difference and why. notes/link-report.md ("LinkChecker against genapi on a real site") has the
// results of one run.
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DOWN, expectedOutcome, HEAD_403, HEAD_405, NO_DNS, UNTRUSTED, writeStandIns } from "./standins.ts";

const REPO = "https://github.com/cozy/cozy.github.io";
const COMMIT = "1f9aa22895a9cf58e19b17ed400c0680b38f0303";
const SITE_HOST = "docs.cozy.io";
const START = `https://${SITE_HOST}/`;
const ROOT = resolve(import.meta.dir, "../../..");

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    genapi: { type: "string", default: join(ROOT, "dist/genapi") },
    work: { type: "string", default: "/tmp/genapi-compare-linkchecker" },
    repo: { type: "string", default: REPO },
    inside: { type: "boolean", default: false },
  },
});
const work = resolve(values.work);
const genapi = resolve(values.genapi);
const site = join(work, "site");
const log = (line: string) => console.error(`[compare] ${line}`);

function sh(argv: string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): string {
  const proc = Bun.spawnSync(argv, { cwd: options.cwd, env: options.env ?? process.env, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${proc.exitCode}: ${proc.stderr.toString().slice(0, 800)}`);
  return proc.stdout.toString();
}

if (!values.inside) {
  if (process.getuid?.() !== 0) throw new Error("run as root: the comparison needs its own network and mount namespaces");
  for (const tool of ["nginx", "linkchecker", "openssl", "ip", "unshare", "git"]) {
    if (Bun.which(tool, { PATH: `${process.env.PATH}:/usr/sbin:/sbin` }) === null) throw new Error(`${tool} is not installed`);
  }
  if (!existsSync(genapi)) throw new Error(`${genapi} does not exist: npm run build first, or --genapi PATH`);
  mkdirSync(work, { recursive: true });
  fetchSite(values.repo);
  // The same script inside a network namespace with only loopback, and a mount namespace of its own.
  const proc = Bun.spawnSync(
    ["unshare", "-n", "-m", "--", process.execPath, import.meta.path, "--inside", "--genapi", genapi, "--work", work],
    { stdout: "inherit", stderr: "inherit", env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` } },
  );
  process.exit(proc.exitCode ?? 1);
}

/** The pinned commit's files into WORK/site, from a local git directory that has it or a shallow fetch. */
function fetchSite(repo: string): void {
  const marker = join(site, ".commit");
  if (existsSync(marker) && readFileSync(marker, "utf8").trim() === COMMIT) return;
  let git = repo;
  const local = existsSync(repo) && Bun.spawnSync(["git", "-C", repo, "cat-file", "-e", `${COMMIT}^{commit}`]).exitCode === 0;
  if (!local) {
    git = join(work, "repo.git");
    if (!existsSync(git)) sh(["git", "init", "-q", "--bare", git]);
    log(`fetching ${repo} at ${COMMIT}`);
    sh(["git", "-C", git, "fetch", "-q", "--depth", "1", repo, COMMIT]);
  }
  rmSync(site, { recursive: true, force: true });
  const missing: string[] = [];
  // Blob by blob: a partial mirror may lack its largest files (they then answer 404 on both sides).
  for (const entry of sh(["git", "-C", git, "ls-tree", "-r", "-z", COMMIT]).split("\0")) {
    if (entry === "") continue;
    const [meta, path] = entry.split("\t") as [string, string];
    const [, type, sha] = meta.split(" ") as [string, string, string];
    if (type !== "blob") continue;
    const proc = Bun.spawnSync(["git", "-C", git, "cat-file", "blob", sha], { stdout: "pipe", stderr: "pipe" });
    if (proc.exitCode !== 0) {
      missing.push(path);
      continue;
    }
    mkdirSync(dirname(join(site, path)), { recursive: true });
    writeFileSync(join(site, path), proc.stdout);
  }
  if (missing.length > 0) log(`not in ${repo}: ${missing.join(", ")}`);
  writeFileSync(marker, `${COMMIT}\n`);
}

// ---------------------------------------------------------------------------------------------
// Inside the namespaces

interface Broken {
  url: string;
  status: number | null;
  error: string;
  kind?: string;
  referrers?: string[];
}

const htmlFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((p) => p.endsWith(".html"))
    .map((p) => join(dir, p));

/** Every http(s) URL of an href/src attribute of the site's HTML (for the stand-ins' answer map), and every host name mentioned. */
function externalUrls(): { urls: URL[]; hosts: string[] } {
  const urls = new Map<string, URL>();
  const hosts = new Set<string>();
  for (const file of htmlFiles(site)) {
    const html = readFileSync(file, "utf8");
    for (const m of html.matchAll(/https?:\/\/([a-z0-9][a-z0-9.-]*[a-z0-9])/gi)) hosts.add(m[1]!.toLowerCase());
    for (const m of html.matchAll(/(?:href|src)\s*=\s*["']?(https?:\/\/[^"'\s>]+)/gi)) {
      try {
        const url = new URL(m[1]!.replaceAll("&amp;", "&"));
        if (url.hostname !== SITE_HOST) urls.set(url.href, url);
      } catch {}
    }
  }
  return { urls: [...urls.values()], hosts: [...hosts].filter((h) => h.includes(".")) };
}

async function waitForTcp(host: string, port: number, what: string): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline) {
    const ok = await Bun.connect({
      hostname: host,
      port,
      socket: {
        data() {},
        open(s) {
          s.end();
        },
      },
    }).then(
      () => true,
      () => false,
    );
    if (ok) return;
    await Bun.sleep(50);
  }
  throw new Error(`${what} did not listen on ${host}:${port} within 10 s`);
}

/** A URL as both sides are compared: parsed and written back, without its fragment. */
function normal(raw: string): string {
  const url = new URL(raw);
  url.hash = "";
  return url.href;
}

const isExternal = (url: string) => new URL(url).hostname !== SITE_HOST || new URL(url).protocol !== "https:";

/** LinkChecker's CSV (semicolon-separated, quoted where needed, `#` comment lines). */
function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ";") {
      row.push(field);
      field = "";
    } else if (c === "\n") {
      row.push(field.replace(/\r$/, ""));
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  const lines = rows.filter((r) => !(r.length === 1 && (r[0] === "" || r[0]!.startsWith("#"))) && !r[0]?.startsWith("#"));
  const [header, ...data] = lines;
  return data.map((r) => Object.fromEntries(header!.map((name, i) => [name, r[i] ?? ""])));
}

async function inside(): Promise<void> {
  sh(["ip", "link", "set", "lo", "up"]);
  const dir = join(work, "run");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const d of [work, dir]) chmodSync(d, 0o755);
  const { urls, hosts } = externalUrls();
  log(`${htmlFiles(site).length} HTML files, ${urls.length} distinct external URLs in href/src, ${hosts.length} host names`);
  const standIns = writeStandIns({ dir, siteHost: SITE_HOST, siteRoot: site, hosts, urls });
  chmodSync(standIns.ca, 0o644);
  log(`planned answers of the external URLs: ${JSON.stringify(standIns.counts)}`);
  writeFileSync(join(dir, "resolv.conf"), "# no name server: only /etc/hosts resolves\nnameserver 127.0.0.1\n");
  sh(["mount", "--bind", standIns.hosts, "/etc/hosts"]);
  sh(["mount", "--bind", join(dir, "resolv.conf"), "/etc/resolv.conf"]);
  const nginx = Bun.spawn(["nginx", "-p", dir, "-c", standIns.conf, "-e", join(dir, "error.log")], { stdout: "ignore", stderr: "inherit" });
  try {
    await waitForTcp("127.0.0.1", 443, "nginx");
    const l = await runLinkChecker(dir, standIns.ca);
    const g = await runGenapi(dir, standIns.ca);
    report(g, l, readFileSync(join(dir, "access.log"), "utf8"));
  } finally {
    nginx.kill("SIGTERM");
    await nginx.exited;
  }
}

interface GenapiRun {
  broken: Broken[];
  seconds: number;
  pages: number;
  report: Record<string, unknown>;
}

async function runGenapi(dir: string, ca: string): Promise<GenapiRun> {
  const links = join(dir, "genapi-links.json");
  const argv = [
    genapi,
    "crawl",
    START,
    "--output",
    join(dir, "genapi-sitemap.xml"),
    "--link-report",
    links,
    "--check-external",
    "--check-resources",
    "--json",
  ];
  log(`genapi: NODE_EXTRA_CA_CERTS=${ca} ${argv.join(" ")}`);
  const began = performance.now();
  const proc = Bun.spawn(argv, { cwd: dir, env: { ...process.env, NODE_EXTRA_CA_CERTS: ca }, stdout: "ignore", stderr: "pipe" });
  const stderr = await new Response(proc.stderr).text();
  const code = await proc.exited;
  const seconds = (performance.now() - began) / 1000;
  if (code !== 0) throw new Error(`genapi crawl exited ${code}: ${stderr.slice(0, 2000)}`);
  const report = JSON.parse(stderr.trim().split("\n").at(-1)!) as Record<string, unknown>;
  const json = JSON.parse(readFileSync(links, "utf8")) as { broken: Broken[] };
  log(`genapi: ${report.pages_crawled} pages, ${json.broken.length} broken entries, ${seconds.toFixed(1)} s`);
  return { broken: json.broken, seconds, pages: Number(report.pages_crawled), report };
}

interface LinkCheckerRow {
  url: string;
  valid: boolean;
  result: string;
  parent: string;
  base: string;
  raw: string;
}

async function runLinkChecker(dir: string, ca: string): Promise<{ rows: LinkCheckerRow[]; seconds: number }> {
  // LinkChecker, run as root, drops to "nobody": its output goes to a directory nobody can write.
  const out = join(dir, "linkchecker");
  mkdirSync(out);
  chmodSync(out, 0o777);
  const csv = join(out, "linkchecker.csv");
  const config = join(dir, "linkcheckerrc");
  // maxrequestspersecond above 10 takes the stand-ins' "LinkChecker" header (answers.conf): without
  // it LinkChecker keeps to about 3 requests a second a host, 10 minutes for github.com's 1,900 URLs.
  writeFileSync(config, `[checking]\nthreads=10\ntimeout=30\nsslverify=${ca}\nmaxrequestspersecond=100\n[filtering]\ncheckextern=1\n`);
  const argv = ["linkchecker", "-f", config, "--check-extern", "--verbose", "--no-status", "-o", "none", "-F", `csv/utf-8/${csv}`, START];
  log(`linkchecker: ${argv.join(" ")}`);
  const began = performance.now();
  const proc = Bun.spawn(argv, { cwd: out, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const code = await proc.exited;
  const seconds = (performance.now() - began) / 1000;
  // Exit code 1: errors were found (the point); 2 and more: LinkChecker itself failed.
  if (code > 1) throw new Error(`linkchecker exited ${code}: ${stderr.slice(0, 2000)} ${stdout.slice(0, 500)}`);
  const rows = parseCsv(readFileSync(csv, "utf8")).map((r) => ({
    url: r.url ?? "",
    valid: r.valid === "True",
    result: r.result ?? "",
    parent: r.parentname ?? "",
    base: r.base ?? "",
    raw: r.urlname ?? "",
  }));
  log(`linkchecker: ${rows.length} URLs, ${rows.filter((r) => !r.valid).length} errors, ${seconds.toFixed(1)} s`);
  return { rows, seconds };
}

/** The link a LinkChecker row is about: its raw URL resolved against its base or page (its `url` column is the redirect's target). */
function linkOf(r: LinkCheckerRow): string | undefined {
  try {
    return normal(new URL(r.raw.trim(), r.base || r.parent || START).href);
  } catch {
    return undefined;
  }
}

/** The canonical URL a page of the site declares (<link rel="canonical" href>), read from its file. */
function canonicalOf(page: string): string | undefined {
  try {
    const url = new URL(page);
    if (url.hostname !== SITE_HOST) return undefined;
    const path = decodeURIComponent(url.pathname);
    const html = readFileSync(join(site, path.endsWith("/") ? `${path}index.html` : path), "utf8");
    const href = /<link rel="canonical" href="([^"]+)"/.exec(html)?.[1];
    return href === undefined ? undefined : normal(new URL(href, page).href);
  } catch {
    return undefined;
  }
}

/** Why the two disagree on one URL, from what each side asked and the stand-ins' plan. */
function explain(url: string, onlyIn: "genapi" | "LinkChecker"): string {
  const u = new URL(url);
  const head = expectedOutcome(u, "HEAD");
  const get = expectedOutcome(u, "GET");
  if (onlyIn === "genapi" && head.broken && !get.broken)
    return `${head.why}, GET fine: genapi asks HEAD (GET only after 405/501), LinkChecker asks GET`;
  if (onlyIn === "LinkChecker" && u.protocol === "http:")
    return "http:// link answered 301 to https://, whose page is broken: LinkChecker follows the redirect, genapi reports no redirect of an external link and does not follow it";
  if (onlyIn === "LinkChecker" && get.why === "301 to a 404")
    return "301 to a page that answers 404: LinkChecker follows the redirect, genapi does not";
  return `unexplained (planned: ${get.why})`;
}

function report(g: GenapiRun, l: { rows: LinkCheckerRow[]; seconds: number }, accessLog: string): void {
  writeFileSync(join(work, "raw.json"), JSON.stringify({ genapi: g, linkchecker: l }, null, 1));
  const http = (u: string) => /^https?:/i.test(u);
  const gBroken = new Map<string, Broken>();
  const gInScope = new Set<string>();
  for (const b of g.broken) isExternal(b.url) ? gBroken.set(normal(b.url), b) : gInScope.add(normal(b.url));
  const lChecked = new Map<string, LinkCheckerRow>();
  const lInScope = new Set<string>();
  const lOther = new Map<string, number>();
  for (const r of l.rows) {
    const link = linkOf(r);
    if (link === undefined || !http(link)) {
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(r.raw.trim())?.[1]?.toLowerCase() ?? "(relative)";
      if (!r.valid) lOther.set(scheme, (lOther.get(scheme) ?? 0) + 1);
      continue;
    }
    if (isExternal(link)) lChecked.set(link, r);
    else if (!r.valid) lInScope.add(link);
  }
  const lBroken = new Map([...lChecked].filter(([, r]) => !r.valid));
  const both = [...gBroken.keys()].filter((u) => lBroken.has(u));
  const differences = [
    ...[...gBroken.keys()]
      .filter((u) => !lBroken.has(u))
      .map((u) => ({
        url: u,
        broken_for: "genapi",
        genapi: gBroken.get(u)!.error,
        linkchecker: lChecked.get(u)?.result ?? "not met",
        why: explain(u, "genapi"),
      })),
    ...[...lBroken.keys()]
      .filter((u) => !gBroken.has(u))
      .map((u) => ({
        url: u,
        broken_for: "LinkChecker",
        genapi: "fine",
        linkchecker: lBroken.get(u)!.result,
        why: explain(u, "LinkChecker"),
      })),
  ].sort((a, b) => a.broken_for.localeCompare(b.broken_for) || a.url.localeCompare(b.url));
  // What each asked the stand-ins (hosts that refuse, do not resolve or fail TLS never log a request).
  const asked = { genapi: new Set<string>(), LinkChecker: new Set<string>() };
  for (const line of accessLog.split("\n")) {
    const m = /^\S+ \S+ "(\S+) (\S+)" \d+ "([^"]*)"/.exec(line);
    if (!m || new URL(m[2]!).hostname === SITE_HOST) continue;
    (m[3]!.includes("genapi") ? asked.genapi : m[3]!.includes("LinkChecker") ? asked.LinkChecker : undefined)?.add(`${m[1]} ${m[2]}`);
  }
  const inBoth = [...gInScope].filter((u) => lInScope.has(u)).length;
  // In scope, LinkChecker also checks each page's <link rel="canonical">, which genapi reads as the
  // page's canonical URL, not as a link (the contract's referrers are <a>/<area> links).
  const lInScopeOnly = [...lInScope].filter((u) => !gInScope.has(u));
  const canonical = lInScopeOnly.filter((u) => l.rows.some((r) => linkOf(r) === u && canonicalOf(r.parent) === u)).length;
  const reasons = (side: string) => {
    const count = new Map<string, number>();
    for (const d of differences) if (d.broken_for === side) count.set(d.why, (count.get(d.why) ?? 0) + 1);
    return [...count].map(([k, n]) => `${n}: ${k}`).join("; ") || "none";
  };
  const result = {
    commit: COMMIT,
    seconds: { genapi: g.seconds, linkchecker: l.seconds },
    external: { genapi: gBroken.size, linkchecker: lBroken.size, both: both.length, linkcheckerChecked: lChecked.size },
    inScope: { genapi: gInScope.size, linkchecker: lInScope.size, both: inBoth, linkcheckerOnlyCanonical: canonical },
    differences,
    linkcheckerOtherSchemesBroken: Object.fromEntries(lOther),
    requestsAtStandIns: { genapi: asked.genapi.size, linkchecker: asked.LinkChecker.size },
    wholeHosts: { DOWN, NO_DNS, UNTRUSTED, HEAD_405, HEAD_403 },
  };
  writeFileSync(join(work, "comparison.json"), JSON.stringify(result, null, 1));
  const methods = (set: Set<string>) => {
    const count = new Map<string, number>();
    for (const k of set) count.set(k.split(" ")[0]!, (count.get(k.split(" ")[0]!) ?? 0) + 1);
    return [...count].map(([m, n]) => `${n} ${m}`).join(", ");
  };
  console.log(
    [
      "| | genapi | LinkChecker |",
      "|---|---:|---:|",
      `| broken external http(s) URLs | ${gBroken.size} | ${lBroken.size} |`,
      `| of them in both | ${both.length} | ${both.length} |`,
      `| broken for this one only | ${gBroken.size - both.length} | ${lBroken.size - both.length} |`,
      `| distinct requests at the external stand-ins | ${asked.genapi.size} (${methods(asked.genapi)}) | ${asked.LinkChecker.size} (${methods(asked.LinkChecker)}) |`,
      `| broken links of other schemes | not checked (http(s) only) | ${[...lOther].map(([k, n]) => `${n} ${k}`).join(", ") || "none"} |`,
      `| broken in-scope URLs (docs.cozy.io), in both: ${inBoth} | ${gInScope.size} | ${lInScope.size} (${canonical} of them only a page's rel=canonical) |`,
      `| wall time s | ${g.seconds.toFixed(1)} | ${l.seconds.toFixed(1)} |`,
      "",
      `Broken for genapi only: ${reasons("genapi")}`,
      "",
      `Broken for LinkChecker only: ${reasons("LinkChecker")}`,
      "",
      ...differences.map(
        (d) => `- ${d.url}: ${d.broken_for} only (genapi: ${d.genapi}; LinkChecker: ${d.linkchecker.slice(0, 80)}): ${d.why}`,
      ),
    ].join("\n"),
  );
  log(`details in ${join(work, "comparison.json")}`);
}

await inside();
