import { describe, expect, test } from "bun:test";
import robotsParser from "robots-parser";
import { TargetRefusedError } from "../../../src/crawler/net/address-guard.ts";
import { createRequester, type HopFetcher } from "../../../src/crawler/net/request.ts";
import { fetchRobots, parseRobots, ROBOTS_MAX_BYTES, RobotsUnreachableError } from "../../../src/crawler/robots/robots.ts";
import { normaliseUrl } from "../../../src/crawler/url/url.ts";

const ORIGIN = "http://site.test";
const rules = (text: string) => parseRobots(ORIGIN, text, "genapi");
const allowed = (text: string, path: string) => rules(text).allows(ORIGIN + path);

describe("Crawl-delay", () => {
  const delay = (value: string) => rules(`User-agent: genapi\nCrawl-delay: ${value}\n`).crawlDelay;
  test("a decimal number in any spelling", () => {
    expect(delay("2")).toBe(2);
    expect(delay(".5")).toBe(0.5);
    expect(delay("0.5")).toBe(0.5);
    expect(delay("5.")).toBe(5);
    expect(delay("+3")).toBe(3);
    expect(delay("1e9")).toBe(1e9);
    expect(delay("1E2")).toBe(100);
    expect(delay("2.5e-1")).toBe(0.25);
    expect(delay("1000000000")).toBe(1e9);
    // Beyond a double: infinite, which the politeness cap makes 30 s.
    expect(delay("1e400")).toBe(Number.POSITIVE_INFINITY);
  });

  test("anything else says nothing", () => {
    for (const value of ["", "-1", "abc", "0x10", "Infinity", "1,5", "1 s", ".", "e5", "1e", "++3"]) expect(delay(value), value).toBeNull();
  });

  test("the largest of genapi's group, else the largest of *'s", () => {
    expect(rules("User-agent: *\nCrawl-delay: 5\n\nUser-agent: genapi\nCrawl-delay: .5\nCrawl-delay: +1\n").crawlDelay).toBe(1);
    expect(rules("User-agent: *\nCrawl-delay: 1e1\nCrawl-delay: 3\n").crawlDelay).toBe(10);
  });
});

describe("parseRobots (RFC 9309 matching)", () => {
  test("the longest matching rule wins, whichever comes first", () => {
    const text = "User-agent: *\nAllow: /docs/public\nDisallow: /docs/\nDisallow: /a\nAllow: /a/b/c\n";
    expect(allowed(text, "/docs/secret")).toBe(false);
    expect(allowed(text, "/docs/public/page")).toBe(true);
    expect(allowed(text, "/a/b")).toBe(false);
    expect(allowed(text, "/a/b/c/d")).toBe(true);
    expect(allowed(text, "/other")).toBe(true);
  });

  test("Allow wins a tie of equal length", () => {
    expect(allowed("User-agent: *\nDisallow: /page\nAllow: /page\n", "/page")).toBe(true);
    expect(allowed("User-agent: *\nAllow: /page\nDisallow: /page\n", "/page")).toBe(true);
  });

  test("* matches any sequence and $ anchors the end", () => {
    const text = "User-agent: *\nDisallow: /*.pdf$\nDisallow: /*/print\nDisallow: /*?session=\n";
    expect(allowed(text, "/files/a.pdf")).toBe(false);
    expect(allowed(text, "/files/a.pdf?download=1")).toBe(true);
    expect(allowed(text, "/files/a.pdfx")).toBe(true);
    expect(allowed(text, "/news/2026/print")).toBe(false);
    expect(allowed(text, "/print")).toBe(true);
    expect(allowed(text, "/p?session=1")).toBe(false);
  });

  test("the genapi group is preferred over *, whatever the case and version in the line", () => {
    const text = "User-agent: *\nDisallow: /\n\nUser-agent: GenAPI/2.0\nDisallow: /private\n";
    expect(allowed(text, "/public")).toBe(true);
    expect(allowed(text, "/private/x")).toBe(false);
    expect(parseRobots(ORIGIN, text, "otherbot").allows(`${ORIGIN}/public`)).toBe(false);
  });

  test("groups naming genapi are combined, and * applies only when none does", () => {
    const text = "User-agent: genapi\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n\nUser-agent: other\nUser-agent: genapi\nDisallow: /c\n";
    expect(allowed(text, "/a")).toBe(false);
    expect(allowed(text, "/c")).toBe(false);
    expect(allowed(text, "/b")).toBe(true);
    expect(allowed("User-agent: other\nDisallow: /\n\nUser-agent: *\nDisallow: /b\n", "/b")).toBe(false);
  });

  test("an empty Disallow and a file without rules allow everything", () => {
    expect(allowed("User-agent: *\nDisallow:\n", "/x")).toBe(true);
    expect(allowed("", "/x")).toBe(true);
    expect(allowed("# only a comment\n", "/x")).toBe(true);
  });

  test("comments are ignored and percent-encoding does not change a match", () => {
    const text = "User-agent: genapi # us\nDisallow: /%62ar # b-a-r\nDisallow: /café\nDisallow: /a|b\nDisallow: /q?x=%41\n";
    expect(allowed(text, "/bar")).toBe(false);
    expect(allowed(text, "/caf%C3%A9/menu")).toBe(false);
    expect(allowed(text, "/a%7Cb")).toBe(false);
    expect(allowed(text, "/q?x=%41")).toBe(false);
    expect(allowed(text, "/b")).toBe(true);
  });

  test("%2A and %24 in a rule match a literal * and $ in the URL (RFC 9309 2.2.3)", () => {
    const url = (href: string) => normaliseUrl(ORIGIN + href)!;
    const text = "User-agent: *\nDisallow: /path/file-with-a-%2A.html\nDisallow: /price-%24\nDisallow: /x%2a$\n";
    const r = rules(text);
    expect(r.allows(url("/path/file-with-a-*.html"))).toBe(false);
    expect(r.allows(url("/path/file-with-a-%2A.html"))).toBe(false);
    expect(r.allows(url("/path/file-with-a-X.html"))).toBe(true); // %2A is no wildcard
    expect(r.allows(url("/price-$5"))).toBe(false);
    expect(r.allows(url("/price-%245"))).toBe(false);
    expect(r.allows(url("/x*"))).toBe(false);
    expect(r.allows(url("/x*y"))).toBe(true); // the real $ still anchors
  });

  test("the query is compared percent-encoded on both sides, like the path (RFC 9309 2.2.2)", () => {
    const url = (href: string) => normaliseUrl(ORIGIN + href)!;
    const r = rules("User-agent: *\nDisallow: /search?q=é\nDisallow: /a?p=%7e\nDisallow: /b?s=%2a\nDisallow: /c?k=[1]\n");
    expect(r.allows(url("/search?q=é"))).toBe(false);
    expect(r.allows(url("/search?q=%C3%A9"))).toBe(false);
    expect(r.allows(url("/search?q=%c3%a9&page=2"))).toBe(false);
    expect(r.allows(url("/search?q=e"))).toBe(true);
    expect(r.allows(url("/a?p=~"))).toBe(false);
    expect(r.allows(url("/a?p=%7E"))).toBe(false);
    expect(r.allows(url("/b?s=%2A"))).toBe(false);
    expect(r.allows(url("/b?s=*"))).toBe(false);
    expect(r.allows(url("/c?k=%5B1%5D"))).toBe(false);
    expect(r.allows(url("/c?k=[1]"))).toBe(false);
  });

  test("rules only ever allow URLs of their own origin", () => {
    expect(rules("").allows("http://other.test/x")).toBe(false);
  });
});

type Reply = Response | Error;

/** fetchRobots over a scripted fetcher: one reply per request, in order. */
function scripted(replies: Reply[]) {
  const seen: { url: string; userAgent: string | undefined }[] = [];
  const fetch: HopFetcher = async (url, init) => {
    seen.push({ url: url.href, userAgent: init.headers["User-Agent"] });
    const reply = replies.shift() ?? new Response("unexpected", { status: 500 });
    if (reply instanceof Error) throw reply;
    return reply;
  };
  const request = createRequester(fetch, { "User-Agent": "genapi/1.0" }, 1_000, new AbortController().signal);
  return { seen, load: () => fetchRobots(ORIGIN, request, "genapi") };
}

const redirect = (to: string) => new Response(null, { status: 301, headers: { location: to } });

describe("fetchRobots (RFC 9309 fetching)", () => {
  test("2xx: the file's rules, fetched from /robots.txt with our User-Agent", async () => {
    const { seen, load } = scripted([new Response("User-agent: *\nDisallow: /x\n")]);
    const robots = await load();
    expect(robots.allows(`${ORIGIN}/x`)).toBe(false);
    expect(robots.allows(`${ORIGIN}/y`)).toBe(true);
    expect(seen).toEqual([{ url: `${ORIGIN}/robots.txt`, userAgent: "genapi/1.0" }]);
  });

  test("4xx: no rules", async () => {
    for (const status of [401, 403, 404, 410]) {
      const robots = await scripted([new Response("User-agent: *\nDisallow: /\n", { status })]).load();
      expect(robots.allows(`${ORIGIN}/x`)).toBe(true);
    }
  });

  test("5xx: unreachable, the whole site disallowed", async () => {
    const attempt = scripted([new Response("down", { status: 503 })]).load();
    await expect(attempt).rejects.toThrow(RobotsUnreachableError);
    await expect(attempt).rejects.toThrow("robots.txt unreachable (HTTP 503)");
  });

  test("a network failure of a redirect hop: unreachable with its reason", async () => {
    const refused = Object.assign(new TypeError("Unable to connect"), { code: "ECONNREFUSED" });
    const attempt = scripted([redirect("http://mirror.test/robots.txt"), refused]).load();
    await expect(attempt).rejects.toThrow(new RobotsUnreachableError("robots.txt unreachable (connection refused)"));
  });

  test("a network failure of /robots.txt itself: the site is unreachable, said plainly", async () => {
    const refused = Object.assign(new TypeError("Unable to connect"), { code: "ECONNREFUSED" });
    await expect(scripted([refused]).load()).rejects.toThrow(new RobotsUnreachableError("connection refused"));
  });

  test("follows five redirects, across origins; a sixth means no rules", async () => {
    const hops = [1, 2, 3, 4, 5].map((n) => redirect(`http://mirror${n}.test/robots.txt`));
    const five = scripted([...hops, new Response("User-agent: *\nDisallow: /x\n")]);
    expect((await five.load()).allows(`${ORIGIN}/x`)).toBe(false);
    expect(five.seen.map((s) => s.url)).toEqual([
      `${ORIGIN}/robots.txt`,
      ...[1, 2, 3, 4, 5].map((n) => `http://mirror${n}.test/robots.txt`),
    ]);

    const six = scripted([...[1, 2, 3, 4, 5, 6].map((n) => redirect(`/r${n}`)), new Response("User-agent: *\nDisallow: /\n")]);
    expect((await six.load()).allows(`${ORIGIN}/x`)).toBe(true);
    expect(six.seen).toHaveLength(6);
  });

  test("a refused redirect hop counts as unreachable", async () => {
    const attempt = scripted([redirect("http://internal.test/robots.txt"), new TargetRefusedError("address not allowed")]).load();
    await expect(attempt).rejects.toThrow("robots.txt unreachable (address not allowed)");
  });

  test("a refused first hop is the site itself being refused", async () => {
    await expect(scripted([new TargetRefusedError("loopback")]).load()).rejects.toBeInstanceOf(TargetRefusedError);
  });

  test("reads at most 500 KiB and ignores rules past it", async () => {
    const padding = `# ${"x".repeat(ROBOTS_MAX_BYTES)}\n`;
    const text = `User-agent: *\nDisallow: /early\n${padding}Disallow: /late\n`;
    const robots = await scripted([new Response(text)]).load();
    expect(robots.allows(`${ORIGIN}/early`)).toBe(false);
    expect(robots.allows(`${ORIGIN}/late`)).toBe(true);
  });
});

describe("parseRobots matching against robots-parser", () => {
  // robots-parser (a dev dependency kept for this test) implements the same precedence with an
  // exhaustive matcher; over random patterns of /, a, b, * and $ the two must always agree.
  test("agrees with robots-parser on 20,000 random pattern/path pairs", () => {
    let seed = 9309;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const word = (alphabet: string, max: number) =>
      Array.from({ length: 1 + Math.floor(random() * max) }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
    for (let i = 0; i < 20_000; i++) {
      const lines = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
        let pattern = `/${word("ab*", 6)}`;
        if (random() < 0.3) pattern += "$";
        return `${random() < 0.5 ? "Allow" : "Disallow"}: ${pattern}`;
      });
      const text = `User-agent: *\n${lines.join("\n")}\n`;
      const path = `/${word("ab", 8)}`;
      const expected = robotsParser(`${ORIGIN}/robots.txt`, text).isAllowed(ORIGIN + path, "genapi") === true;
      if (allowed(text, path) !== expected)
        throw new Error(`disagree on ${JSON.stringify(text)} for ${path}: robots-parser says ${expected}`);
    }
  });

  test("a hostile file of wildcard-heavy patterns still decides correctly", () => {
    const hostile = `User-agent: *\n${Array.from({ length: 2_000 }, (_, i) => `Disallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b${i}`).join("\n")}\nDisallow: /*a*z$\n`;
    const long = `/${"a".repeat(2_000)}`;
    expect(allowed(hostile, long)).toBe(true);
    expect(allowed(hostile, `${long}b1999`)).toBe(false);
    expect(allowed(hostile, `${long}z`)).toBe(false);
  });
});
