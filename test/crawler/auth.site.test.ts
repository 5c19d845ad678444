// Option `auth` through the crawler's real network path (address guard, politeness, credentials,
// HTTP client) against loopback sites that record every request: sites behind basic auth, a header
// and a cookie are crawled completely with their credentials, robots.txt and sitemaps included, and
// fail with 401 without them; a login that expires mid-crawl counts http_error and the crawl goes
// on; and no request to another origin (a redirect of the start URL, a redirect hop, a link, another
// name for the same server) ever carries a credential.
import { afterEach, describe, expect, test } from "bun:test";
import {
  CrawlFailedError,
  type CrawlAuth,
  crawlSite,
  createCrawlNetwork,
  defaultCrawlLimits,
  defaultCrawlOptions,
} from "../../src/crawler/index.ts";
import { basicHeader, credentialHeadersOf, type ProtectedSite, serveProtectedSite } from "../support/protected-site.ts";
import { validateSitemap } from "../support/xmllint.ts";

const SECRET = "Planted-S3cret-9c1e";
const sites: ProtectedSite[] = [];
afterEach(async () => {
  await Promise.all(sites.splice(0).map((site) => site.stop()));
});
const serve = (options: Parameters<typeof serveProtectedSite>[0]) => {
  const site = serveProtectedSite(options);
  sites.push(site);
  return site;
};

const network = () => createCrawlNetwork({ policy: { allowPrivate: true, allowTargets: [] } });

async function crawl(url: string, auth?: CrawlAuth, options: Partial<ReturnType<typeof defaultCrawlOptions>> = {}) {
  const result = await crawlSite(
    url,
    { ...defaultCrawlLimits, maxPages: 500 },
    { fetch: network(), now: Date.now, userAgent: "genapi/0.1.0" },
    undefined,
    { ...defaultCrawlOptions(500), sitemaps_from_robots: true, ...options, ...(auth ? { auth } : {}) },
  );
  expect(await validateSitemap(result.sitemap)).toEqual({ valid: true, errors: [] });
  return result;
}

async function failure(crawling: Promise<unknown>): Promise<string> {
  const error = await crawling.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CrawlFailedError);
  return (error as CrawlFailedError).reason;
}

const locs = (entries: { loc: string }[]) => entries.map((e) => e.loc).sort();

const modes: { name: string; auth: CrawlAuth; authorized: (req: Request) => boolean }[] = [
  {
    name: "basic auth",
    auth: { basic: { username: "preview", password: SECRET } },
    authorized: (req) => req.headers.get("authorization") === basicHeader("preview", SECRET),
  },
  {
    name: "a header",
    auth: { headers: { "X-Preview-Token": SECRET } },
    authorized: (req) => req.headers.get("x-preview-token") === SECRET,
  },
  {
    name: "a cookie",
    auth: { cookies: { theme: "dark", session: SECRET } },
    authorized: (req) => (req.headers.get("cookie") ?? "").split("; ").includes(`session=${SECRET}`),
  },
];

describe("a site behind credentials", () => {
  for (const mode of modes) {
    test(`${mode.name}: crawled completely with them (every request carried them, robots.txt and the sitemap too); 401 without`, async () => {
      const site = serve({ size: 30, authorized: mode.authorized });
      const result = await crawl(`${site.url}/`, mode.auth);
      expect(locs(result.entries)).toEqual(site.expected);
      expect(result.excluded.http_error).toBe(0);
      const paths = new Set(site.requests.map((r) => r.path));
      expect(paths.has("/robots.txt") && paths.has("/sitemap.xml")).toBe(true);
      // Each request carried them.
      expect(site.requests.every((r) => mode.authorized(new Request("http://x/", { headers: r.headers })))).toBe(true);

      expect(await failure(crawl(`${site.url}/`))).toBe("HTTP 401");
    });
  }

  test("a login cookie that expires mid-crawl: its 401s count http_error, the crawl goes on to its end", async () => {
    const site = serve({
      size: 40,
      fanout: 40,
      authorized: (req, count) => count <= 15 && (req.headers.get("cookie") ?? "") === `session=${SECRET}`,
    });
    const result = await crawl(`${site.url}/`, { cookies: { session: SECRET } }, { sitemaps_from_robots: false, max_concurrency: 1 });
    expect(result.entries.length).toBeGreaterThan(5);
    expect(result.entries.length).toBeLessThan(40);
    expect(result.excluded.http_error).toBe(40 - result.entries.length);
    expect(result.truncated).toBe(false);
    // Every page was still asked for, with the cookie.
    expect(new Set(site.requests.map((r) => r.path)).size).toBe(41);
    expect(site.requests.every((r) => r.headers.cookie === `session=${SECRET}`)).toBe(true);
  });
});

describe("never to another origin", () => {
  const all: CrawlAuth = {
    basic: { username: "preview", password: SECRET },
    headers: { "X-Preview-Token": SECRET },
    cookies: { session: SECRET },
  };
  const leaked = (site: ProtectedSite) =>
    site.requests.filter((r) => Object.keys(credentialHeadersOf(r, ["x-preview-token"])).length > 0 || JSON.stringify(r).includes(SECRET));

  test("the start URL redirects to another origin: the crawl goes on there, and that origin gets nothing", async () => {
    const other = serve({ size: 5 });
    const start = serve({ size: 1, routes: { "/": () => Response.redirect(`${other.url}/`, 302) } });
    const result = await crawl(`${start.url}/`, all);
    expect(result.url).toBe(`${other.url}/`);
    expect(locs(result.entries)).toEqual(other.expected);
    expect(other.requests.length).toBeGreaterThan(5);
    expect(leaked(other)).toEqual([]);
    // The protected origin's own requests (its robots.txt, the redirect) had them.
    expect(start.requests.map((r) => r.path)).toEqual(["/robots.txt", "/"]);
    expect(start.requests.every((r) => r.headers.authorization === basicHeader("preview", SECRET))).toBe(true);
  });

  test("another name for the same server is another origin (127.0.0.1 -> localhost)", async () => {
    const site = serve({
      size: 5,
      routes: {
        "/": (req) => (req.headers.get("host")!.startsWith("127.") ? Response.redirect(`http://localhost:${site.port}/p1`, 301) : html()),
      },
    });
    const result = await crawl(`${site.url}/`, all);
    expect(result.url).toBe(`http://localhost:${site.port}/p1`);
    const byHost = (prefix: string) => site.requests.filter((r) => r.host.startsWith(prefix));
    expect(byHost("localhost").length).toBeGreaterThan(1);
    expect(byHost("localhost").filter((r) => Object.keys(credentialHeadersOf(r, ["x-preview-token"])).length > 0)).toEqual([]);
    expect(byHost("127.0.0.1").every((r) => r.headers["x-preview-token"] === SECRET)).toBe(true);
  });

  test("links and a redirect hop to another origin are never fetched", async () => {
    const other = serve({ size: 3 });
    const site = serve({
      size: 6,
      links: (i) => (i === 0 ? [`${other.url}/`, `${other.url}/p1`, `http://localhost:${other.port}/p2`] : []),
      routes: { "/p5": () => Response.redirect(`${other.url}/p2`, 302) },
    });
    const result = await crawl(`${site.url}/`, all);
    expect(locs(result.entries)).toEqual(site.expected.filter((u) => !u.endsWith("/p5")));
    expect(other.requests).toEqual([]);
    expect(site.requests.every((r) => r.headers.authorization === basicHeader("preview", SECRET))).toBe(true);
  });
});

function html() {
  return new Response('<!doctype html><a href="/p2">p2</a>', { headers: { "content-type": "text/html" } });
}
