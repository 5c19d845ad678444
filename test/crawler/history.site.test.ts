// What a site's run keeps of each page for the next run, against a site served on loopback: a page
// answered 304 with its validators unchanged, or 200 with the same facts and validators, is kept as
// "unchanged" (the store copies the previous run's row); a 304 with a new ETag, or a page whose
// links changed, is kept in full.
import { expect, test } from "bun:test";
import {
  defaultCrawlLimits,
  type HopFetcher,
  MemoryCrawlState,
  NO_HISTORY,
  type PageHistory,
  type PageKept,
  type PageMemory,
  type PageRecord,
  type RecordResult,
  runCrawl,
} from "../../src/crawler/index.ts";
import { createGuardedFetch } from "../../src/crawler/net/guarded-fetch.ts";
import { defaultCrawlOptions } from "../../src/crawler/options.ts";
import { sitesStoppedAfterEach } from "../support/site.ts";

// The crawler's own client behind the address guard (loopback allowed), as a crawl sends: it writes
// a conditional request's validators, which fetch would not know.
const hop: HopFetcher = createGuardedFetch({ allowPrivate: true, allowTargets: [] });
const serve = sitesStoppedAfterEach();
const deps = { fetch: hop, now: Date.now, userAgent: "genapi/0.1.0" };

/** Every page kept by a run, by path. */
class KeepingState extends MemoryCrawlState {
  readonly kept = new Map<string, PageKept>();
  override record(page: PageRecord): Promise<RecordResult> {
    if (page.memory) this.kept.set(new URL(page.memory.url).pathname, page.memory);
    return super.record(page);
  }
}

test("a page read as the previous run left it is kept as unchanged; a new ETag or new links are kept in full", async () => {
  let version = 1;
  const notModified: string[] = [];
  const page =
    (body: string, etag?: string, nav = "") =>
    (req: Request) => {
      if (etag !== undefined && req.headers.get("if-none-match") === etag) {
        notModified.push(new URL(req.url).pathname);
        return new Response(null, { status: 304, headers: { etag } });
      }
      return new Response(`<!DOCTYPE html><title>t</title><main>${body}</main><nav>${nav}</nav>`, {
        headers: { "content-type": "text/html", ...(etag === undefined ? {} : { etag }) },
      });
    };
  const site = await serve({
    "/": page(`<a href="/same">s</a><a href="/no-etag">n</a><a href="/new-etag">e</a><a href="/new-links">l</a>`, '"home"'),
    "/same": page("same", '"same"'),
    "/no-etag": page("no validators"),
    "/new-etag": (req) => page("text", `"v${version}"`)(req),
    // A link outside <main>: the fingerprint and lastmod stay, the links change.
    "/new-links": (req) => page("text", undefined, version === 1 ? "" : `<a href="/">home</a>`)(req),
  });
  const first = new KeepingState();
  await runCrawl(`${site.url}/`, first, defaultCrawlLimits, deps, { history: NO_HISTORY });
  expect([...first.kept.values()].every((kept) => !("unchanged" in kept))).toBe(true);
  const memories = new Map([...first.kept.values()].map((kept) => [kept.url, kept as PageMemory]));
  const history: PageHistory = { previous: async (url) => memories.get(url) ?? null };

  version = 2;
  const second = new KeepingState();
  await runCrawl(`${site.url}/`, second, defaultCrawlLimits, deps, { history });
  expect(notModified.sort()).toEqual(["/", "/same"]);
  const unchanged = (path: string): PageKept => ({ url: `${site.url}${path}`, unchanged: true });
  expect(second.kept.get("/")).toEqual(unchanged("/"));
  expect(second.kept.get("/same")).toEqual(unchanged("/same"));
  expect(second.kept.get("/no-etag")).toEqual(unchanged("/no-etag"));
  expect(second.kept.get("/new-etag")).toEqual({ ...memories.get(`${site.url}/new-etag`)!, etag: '"v2"' });
  expect(second.kept.get("/new-links")).toEqual({ ...memories.get(`${site.url}/new-links`)!, links: [`${site.url}/`] });
});

test("a page answered 304 that `include` no longer lists is kept with that verdict, in full", async () => {
  const notModified: string[] = [];
  const page = (body: string, etag: string) => (req: Request) => {
    if (req.headers.get("if-none-match") !== etag)
      return new Response(`<!DOCTYPE html><title>t</title><main>${body}</main>`, { headers: { "content-type": "text/html", etag } });
    notModified.push(new URL(req.url).pathname);
    return new Response(null, { status: 304, headers: { etag } });
  };
  const site = await serve({
    "/": page(`<a href="/kept">k</a><a href="/left">l</a>`, '"home"'),
    "/kept": page("k", '"k"'),
    "/left": page("l", '"l"'),
  });
  const first = new KeepingState();
  await runCrawl(`${site.url}/`, first, defaultCrawlLimits, deps, { history: NO_HISTORY });
  const memories = new Map([...first.kept.values()].map((kept) => [kept.url, kept as PageMemory]));
  expect(memories.get(`${site.url}/left`)!.exclusion).toBeNull();

  const second = new KeepingState();
  const crawl = { ...defaultCrawlOptions(defaultCrawlLimits.maxPages), include: ["/$", "/kept"] };
  await runCrawl(`${site.url}/`, second, defaultCrawlLimits, deps, {
    history: { previous: async (url) => memories.get(url) ?? null },
    crawl,
  });
  expect(notModified.sort()).toEqual(["/", "/kept", "/left"]);
  expect(second.kept.get("/kept")).toEqual({ url: `${site.url}/kept`, unchanged: true });
  // Its row must say it is not listed: the change set counts it removed.
  expect(second.kept.get("/left")).toEqual({ ...memories.get(`${site.url}/left`)!, exclusion: "filtered" });
});
