// The stand-ins for a real site's external hosts: which answer each external URL gets, and the
// nginx configuration, certificates and /etc/hosts that make one loopback nginx answer for every
// host name the site links to. compare.ts runs it all inside a network namespace with only loopback.
//
// The mix (written down in notes/link-report.md, "LinkChecker against genapi on a real site"): every
// URL's answer follows from a SHA-1 of its host and decoded path (query and fragment left out, as
// nginx's $host$uri sees it), so both crawlers meet the same answers in every run:
//
//   80 %  200 (a small HTML page)          2 %  403
//    6 %  404                              4 %  301 to a page of the same host that answers 200
//    2 %  410                              2 %  301 to a page of the same host that answers 404
//    2 %  500                              2 %  302 to a page of the same host that answers 200
//
// and whole hosts behave as hosts do:
//
//   - every host answers http:// with a 301 to the same URL on https:// (as nearly every site does);
//   - HEAD_405 hosts answer HEAD with 405 (GET as above); HEAD_403 hosts answer HEAD with 403 and
//     GET as above (servers and CDNs that block HEAD exist: a HEAD-only checker calls them broken);
//   - DOWN hosts resolve to 127.0.0.2, where nothing listens: connection refused;
//   - NO_DNS hosts are left out of /etc/hosts: their names do not resolve;
//   - UNTRUSTED hosts present a self-signed certificate that no trusted CA signed;
//   - every host's /robots.txt answers 404 (both crawlers read robots.txt files).
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Hosts whose HEAD answers 405 Method Not Allowed (a checker must fall back to GET). */
export const HEAD_405 = ["www.npmjs.com", "developer.apple.com"];
/** Hosts whose HEAD answers 403 while GET works. */
export const HEAD_403 = ["twitter.com"];
/** Hosts that refuse connections (their service has shut down). */
export const DOWN = ["david-dm.org"];
/** Hosts whose names no longer resolve. */
export const NO_DNS = ["www.zerovm.org"];
/** Hosts whose certificate no trusted CA signed. */
export const UNTRUSTED = ["cdn.rawgit.com"];

/** The loopback address of the DOWN hosts: nothing listens there. */
const DOWN_ADDRESS = "127.0.0.2";

export type Answer = "200" | "403" | "404" | "410" | "500" | "301-ok" | "301-gone" | "302-ok";

/** The answer of one URL's bucket (0-99): the table in the header. */
function answerOf(bucket: number): Answer {
  if (bucket < 80) return "200";
  if (bucket < 86) return "404";
  if (bucket < 88) return "410";
  if (bucket < 90) return "500";
  if (bucket < 92) return "403";
  if (bucket < 96) return "301-ok";
  if (bucket < 98) return "301-gone";
  return "302-ok";
}

/** What nginx's $host$uri is for a URL: lower-case host, percent-decoded path with merged slashes; undefined when nginx could not hold it as a map key. */
export function keyOf(url: URL): string | undefined {
  let path: string;
  try {
    path = decodeURIComponent(url.pathname).replace(/\/{2,}/g, "/");
  } catch {
    return undefined;
  }
  const key = `${url.hostname}${path}`;
  // Map keys are written quoted: leave out what would need escaping (the URL then answers 200).
  return /["\\\s;{}$]/.test(key) || key.startsWith("~") ? undefined : key;
}

/** A URL's planned answer; undefined for URLs of hosts that answer as a whole (down, no DNS, untrusted). */
export function plannedAnswer(url: URL): Answer | undefined {
  if ([...DOWN, ...NO_DNS, ...UNTRUSTED].includes(url.hostname)) return undefined;
  const key = keyOf(url);
  if (key === undefined) return "200";
  const bucket = createHash("sha1").update(key).digest().readUInt32BE(0) % 100;
  return answerOf(bucket);
}

/** What a checker should call a URL's final state: an HTTP status, or a failure. */
export function expectedOutcome(url: URL, method: "HEAD" | "GET"): { broken: boolean; why: string } {
  if (DOWN.includes(url.hostname)) return { broken: true, why: "connection refused" };
  if (NO_DNS.includes(url.hostname)) return { broken: true, why: "name does not resolve" };
  if (UNTRUSTED.includes(url.hostname)) return { broken: true, why: "untrusted certificate" };
  if (method === "HEAD" && HEAD_403.includes(url.hostname)) return { broken: true, why: "HEAD 403" };
  const answer = plannedAnswer(url)!;
  const broken = !["200", "301-ok", "302-ok"].includes(answer);
  return { broken, why: answer === "301-gone" ? "301 to a 404" : answer };
}

export interface StandIns {
  /** The /etc/hosts file to bind-mount. */
  hosts: string;
  /** The CA certificate (PEM) that signed every trusted stand-in's certificate. */
  ca: string;
  conf: string;
  /** The map of planned answers (how many URLs got each). */
  counts: Record<string, number>;
}

/**
 * Writes certificates, the answer map, nginx.conf and an /etc/hosts into `dir`. `siteHost` is the
 * site's own host name (served from `siteRoot` on https, with http redirecting to it); `hosts` every
 * other host name the site mentions; `urls` the external URLs whose answers go into the map.
 */
export function writeStandIns(options: { dir: string; siteHost: string; siteRoot: string; hosts: string[]; urls: URL[] }): StandIns {
  const { dir, siteHost, siteRoot } = options;
  const hosts = [...new Set(options.hosts)].filter((h) => h !== siteHost).sort();
  const trusted = hosts.filter((h) => !UNTRUSTED.includes(h) && !DOWN.includes(h) && !NO_DNS.includes(h));
  const openssl = (...args: string[]) => {
    const proc = Bun.spawnSync(["openssl", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    if (proc.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${proc.stderr.toString()}`);
  };
  // A local CA, and one certificate for the site and every trusted stand-in (one SAN each).
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "30",
    "-subj",
    "/CN=compare-linkchecker local CA",
  );
  writeFileSync(
    join(dir, "san.cnf"),
    `[req]\ndistinguished_name=dn\n[dn]\n[ext]\nsubjectAltName=${[siteHost, ...trusted].map((h) => `DNS:${h}`).join(",")}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
  openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "hosts.key", "-out", "hosts.csr", "-subj", `/CN=${siteHost}`);
  openssl(
    "x509",
    "-req",
    "-in",
    "hosts.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "hosts.pem",
    "-days",
    "30",
    "-extfile",
    "san.cnf",
    "-extensions",
    "ext",
  );
  // The untrusted hosts' certificate: self-signed, right names, no trusted issuer.
  writeFileSync(
    join(dir, "untrusted.cnf"),
    `[req]\ndistinguished_name=dn\n[dn]\n[ext]\nsubjectAltName=${UNTRUSTED.map((h) => `DNS:${h}`).join(",")}\n`,
  );
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "untrusted.key",
    "-out",
    "untrusted.pem",
    "-days",
    "30",
    "-subj",
    `/CN=${UNTRUSTED[0]}`,
    "-config",
    "untrusted.cnf",
    "-extensions",
    "ext",
  );

  const counts: Record<string, number> = {};
  const lines = new Map<string, Answer>();
  for (const url of options.urls) {
    const answer = plannedAnswer(url);
    const key = keyOf(url);
    if (answer === undefined || key === undefined || lines.has(key)) continue;
    lines.set(key, answer);
    counts[answer] = (counts[answer] ?? 0) + 1;
  }
  writeFileSync(
    join(dir, "answers.map"),
    [...lines].flatMap(([key, answer]) => (answer === "200" ? [] : [`"${key}" ${answer};`])).join("\n") + "\n",
  );

  const conf = join(dir, "nginx.conf");
  const standIn = (names: string[], cert: string, head?: number) => `  server {
    listen 127.0.0.1:443 ssl;
    server_name ${names.join(" ")};
    ssl_certificate ${dir}/${cert}.pem;
    ssl_certificate_key ${dir}/${cert}.key;
    ${head === undefined ? "" : `if ($request_method = HEAD) { return ${head}; }`}
    include ${dir}/answers.conf;
  }
`;
  writeFileSync(
    join(dir, "answers.conf"),
    `# One stand-in host: robots.txt 404, then the URL's planned answer (answers.map), else 200.
    add_header LinkChecker unthrottled always;
    location = /robots.txt { return 404; }
    location /moved-ok/ { return 200 "<!doctype html><title>moved here</title><p>stand-in page</p>\\n"; }
    location /moved-gone/ { return 404; }
    location / {
      if ($answer = "403") { return 403; }
      if ($answer = "404") { return 404; }
      if ($answer = "410") { return 410; }
      if ($answer = "500") { return 500; }
      if ($answer = "301-ok") { return 301 https://$host/moved-ok$uri; }
      if ($answer = "301-gone") { return 301 https://$host/moved-gone$uri; }
      if ($answer = "302-ok") { return 302 https://$host/moved-ok$uri; }
      return 200 "<!doctype html><title>stand-in</title><p>stand-in page</p>\\n";
    }
`,
  );
  const asRoot = process.getuid?.() === 0;
  writeFileSync(
    conf,
    `# Written by scripts/compare/linkchecker/standins.ts: the site and its external hosts' stand-ins.
daemon off;
worker_processes 2;
${asRoot ? "user root;\n" : ""}pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  server_tokens off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  log_format standin '$msec $remote_addr "$request_method $scheme://$host$request_uri" $status "$http_user_agent"';
  access_log ${dir}/access.log standin;
  map_hash_max_size 262144;
  map_hash_bucket_size 256;
  server_names_hash_max_size 4096;
  server_names_hash_bucket_size 128;
  map $host$uri $answer { default 200; include ${dir}/answers.map; }
  # http:// everywhere: a 301 to https://.
  server {
    listen 127.0.0.1:80 default_server;
    location / { return 301 https://$host$request_uri; }
  }
  # The site itself.
  server {
    listen 127.0.0.1:443 ssl;
    server_name ${siteHost};
    ssl_certificate ${dir}/hosts.pem;
    ssl_certificate_key ${dir}/hosts.key;
    root ${siteRoot};
    add_header LinkChecker unthrottled always;
    location / { }
  }
  # Every other host (the default server for https).
  server {
    listen 127.0.0.1:443 ssl default_server;
    ssl_certificate ${dir}/hosts.pem;
    ssl_certificate_key ${dir}/hosts.key;
    include ${dir}/answers.conf;
  }
${HEAD_405.length ? standIn(HEAD_405, "hosts", 405) : ""}${HEAD_403.length ? standIn(HEAD_403, "hosts", 403) : ""}${standIn(UNTRUSTED, "untrusted")}}
`,
  );
  const hostsFile = join(dir, "hosts");
  writeFileSync(
    hostsFile,
    [
      "127.0.0.1 localhost",
      "::1 localhost ip6-localhost",
      `127.0.0.1 ${siteHost}`,
      ...hosts.filter((h) => !NO_DNS.includes(h)).map((h) => `${DOWN.includes(h) ? DOWN_ADDRESS : "127.0.0.1"} ${h}`),
      "",
    ].join("\n"),
  );
  return { hosts: hostsFile, ca: join(dir, "ca.pem"), conf, counts };
}
