import { describe, expect, test } from "bun:test";
import { encodePathOnce, LinkBase, normaliseLink, normaliseUrl, originOf } from "../../../src/crawler/url/url.ts";

describe("normaliseUrl", () => {
  test("lower-cases scheme and host, drops the default port and the fragment", () => {
    expect(normaliseUrl("HTTP://Example.COM:80/Path#Top")).toBe("http://example.com/Path");
    expect(normaliseUrl("https://example.com:443/")).toBe("https://example.com/");
    expect(normaliseUrl("https://example.com:8443/a")).toBe("https://example.com:8443/a");
    expect(normaliseUrl("http://[::1]:8080/a#x")).toBe("http://[::1]:8080/a");
  });

  test("an empty path becomes /", () => {
    expect(normaliseUrl("http://example.com")).toBe("http://example.com/");
    expect(normaliseUrl("http://example.com?q=1")).toBe("http://example.com/?q=1");
  });

  test("resolves dot segments, also percent-encoded ones", () => {
    expect(normaliseUrl("http://a.test/x/./y/../z")).toBe("http://a.test/x/z");
    expect(normaliseUrl("http://a.test/x/%2e%2E/z")).toBe("http://a.test/z");
    expect(normaliseUrl("http://a.test/../../z")).toBe("http://a.test/z");
  });

  test("percent-encodes the path once: non-ASCII as UTF-8, existing escapes kept", () => {
    expect(normaliseUrl("http://a.test/café")).toBe("http://a.test/caf%C3%A9");
    expect(normaliseUrl("http://a.test/caf%C3%A9")).toBe("http://a.test/caf%C3%A9");
    expect(normaliseUrl("http://a.test/caf%c3%a9")).toBe("http://a.test/caf%C3%A9");
    expect(normaliseUrl("http://a.test/100%25")).toBe("http://a.test/100%25");
    expect(normaliseUrl("http://a.test/a%2Fb")).toBe("http://a.test/a%2Fb");
    expect(normaliseUrl("http://a.test/a b|c[d]")).toBe("http://a.test/a%20b%7Cc%5Bd%5D");
  });

  test("a stray % is encoded rather than read as an escape", () => {
    expect(normaliseUrl("http://a.test/100%")).toBe("http://a.test/100%25");
    expect(normaliseUrl("http://a.test/%zz")).toBe("http://a.test/%25zz");
  });

  test("decodes percent-encoded unreserved characters", () => {
    expect(normaliseUrl("http://a.test/%41%62%2D%2E%5F%7e")).toBe("http://a.test/Ab-._~");
  });

  test("keeps the query as written, including a bare ?", () => {
    expect(normaliseUrl("http://a.test/p?b=2&a=%41&c")).toBe("http://a.test/p?b=2&a=%41&c");
    expect(normaliseUrl("http://a.test/p?")).toBe("http://a.test/p?");
    expect(normaliseUrl("http://a.test/p?#frag")).toBe("http://a.test/p?");
    expect(normaliseUrl("http://a.test/p")).toBe("http://a.test/p");
  });

  test("percent-encodes once what RFC 3986 does not allow in a query, keeping the rest as written", () => {
    expect(normaliseUrl("http://a.test/q2?arr[]=1&arr[]=2")).toBe("http://a.test/q2?arr%5B%5D=1&arr%5B%5D=2");
    expect(normaliseUrl("http://a.test/?x=100%")).toBe("http://a.test/?x=100%25");
    expect(normaliseUrl("http://a.test/?x=%zz")).toBe("http://a.test/?x=%25zz");
    expect(normaliseUrl('http://a.test/?a b"<>\\^`{|}')).toBe("http://a.test/?a%20b%22%3C%3E%5C%5E%60%7B%7C%7D");
    expect(normaliseUrl("http://a.test/?q=é&x=\u007f")).toBe("http://a.test/?q=%C3%A9&x=%7F");
    // Allowed characters and existing escapes stay as written (the URL parser would turn ' into %27).
    expect(normaliseUrl("http://a.test/?a='b'&c=%7e%2a/?:@!$()*+,;")).toBe("http://a.test/?a='b'&c=%7e%2a/?:@!$()*+,;");
    // Never twice: an encoded query goes through unchanged.
    expect(normaliseUrl("http://a.test/q2?arr%5B%5D=1&x=100%25")).toBe("http://a.test/q2?arr%5B%5D=1&x=100%25");
    // Relative references bring their own query; a fragment-only one keeps the base's.
    expect(normaliseUrl("?b[0]=1#f", "http://a.test/p?old")).toBe("http://a.test/p?b%5B0%5D=1");
    expect(normaliseUrl("#f", "http://a.test/p?x=%5B")).toBe("http://a.test/p?x=%5B");
    expect(normaliseUrl("#f?x=[", "http://a.test/p")).toBe("http://a.test/p");
    // ... as written there: the page itself, not a %27 spelling of it beside it.
    expect(normaliseUrl("#f", "http://a.test/p?q=it's")).toBe("http://a.test/p?q=it's");
    expect(normaliseUrl("", "http://a.test/p?q=it's&b=[")).toBe("http://a.test/p?q=it's&b=%5B");
  });

  test("duplicate spellings of one page collapse to one", () => {
    const spellings = [
      "http://a.test/~user/café",
      "HTTP://A.TEST:80/%7Euser/caf%C3%A9",
      "http://a.test/%7euser/caf%c3%a9#bio",
      "http://a.test/x/../~user/./caf\u00e9",
      "http://a.test/%7E%75ser/café",
    ];
    expect(new Set(spellings.map((s) => normaliseUrl(s))).size).toBe(1);
    expect(normaliseUrl("http://a.test/a|b")).toBe(normaliseUrl("http://a.test/a%7cb"));
  });

  test("is idempotent", () => {
    const inputs = [
      "http://a.test/café?q=é x",
      "http://a.test/100%/%zz/%7e/%2F/a b",
      "https://A.test:443/x/%2e/y?",
      "http://a.test/[x]|^`{}",
      "http://xn--caf-dma.test/",
      "http://café.test/",
      "http://a.test/?arr[]=1&x=100%&y=%zz&z=%41'",
    ];
    for (const input of inputs) {
      const once = normaliseUrl(input)!;
      expect(once).not.toBeNull();
      expect(normaliseUrl(once)).toBe(once);
    }
  });

  test("resolves relative and protocol-relative references against a base", () => {
    expect(normaliseUrl("../c?x#y", "https://a.test/p/q/r")).toBe("https://a.test/p/c?x");
    expect(normaliseUrl("//b.test/d", "https://a.test/p")).toBe("https://b.test/d");
    expect(normaliseUrl("  /spaced  ", "http://a.test/")).toBe("http://a.test/spaced");
  });

  test("refuses what is not a fetchable http(s) URL", () => {
    for (const input of ["mailto:a@b.test", "javascript:alert(1)", "tel:+1", "data:text/html,x", "ftp://a.test/", "http://", "not a url"]) {
      expect(normaliseUrl(input)).toBeNull();
    }
    expect(normaliseUrl("http://user:pw@a.test/")).toBeNull();
  });
});

test("encodePathOnce leaves path syntax alone and keeps an empty path empty", () => {
  expect(encodePathOnce("")).toBe("");
  expect(encodePathOnce("/a:b@c!$&'()*+,;=/*$")).toBe("/a:b@c!$&'()*+,;=/*$");
});

test("originOf is scheme://host[:port]", () => {
  expect(originOf("http://a.test:8080/x?y")).toBe("http://a.test:8080");
  expect(originOf("https://a.test/")).toBe("https://a.test");
  // A normalised URL's origin is its text before the path: the URL parser's, for every kind of host.
  const inputs = [
    "HTTP://A.Test:80/x",
    "https://a.test:443/?q",
    "http://[::1]:8080/p@q",
    "http://127.0.0.1/",
    "http://xn--bcher-kva.example/b",
    "http://bücher.example:81/",
  ];
  for (const input of inputs) {
    const normalised = normaliseUrl(input)!;
    expect(originOf(normalised)).toBe(new URL(normalised).origin);
  }
  // Not normalised (a user name, no path): the URL parser's answer.
  expect(originOf("http://user@a.test/x")).toBe("http://a.test");
  expect(originOf("http://a.test")).toBe("http://a.test");
});

describe("normaliseLink", () => {
  test("agrees with normaliseUrl on every kind of reference against normalised bases", () => {
    const bases = [
      "http://a.test/",
      "http://a.test/dir/page.html",
      "https://a.test:8443/dir/sub/?q=1&r=/x",
      "http://a.test/dir/?",
      "http://[::1]:8080/p",
    ];
    const hrefs = [
      "/",
      "/x",
      "/x/y.html",
      "x",
      "x/y",
      "y.html#frag",
      "#only",
      "",
      "./x",
      "./",
      "././x/y",
      ".//x",
      "./../x",
      "../x",
      "/a/../b",
      "/a/./b",
      ".",
      "..",
      "/.hidden",
      "..x",
      "x..",
      "../../../x",
      "../",
      "x/..",
      "x/.",
      "/..",
      "/.",
      "/a/b/..",
      "a/../../b",
      "../x/./y/../z",
      "a//../b",
      "..//x",
      "../a:b",
      "?q",
      "/p?q=1",
      "//b.test/x",
      "mailto:x@a.test",
      "javascript:void(0)",
      "http:x",
      "HTTP://B.TEST/X",
      "a:b/c",
      "a/b:c",
      "/wiki/Special:Random",
      "/caf%C3%A9",
      "/café",
      "x y",
      "/x\\y",
      " /padded ",
      "\t/tab",
      "/x#a#b",
      "/a//b",
      "/~user/",
      "/!$&'()*+,;=:@",
    ];
    for (const base of bases) {
      expect(normaliseUrl(base)).toBe(base);
      for (const href of hrefs) expect([base, href, normaliseLink(href, base)]).toEqual([base, href, normaliseUrl(href, base)]);
    }
  });

  test("absolute links on the base's own origin, joined without the URL parser, agree with it", () => {
    const bases = [
      "http://a.test/",
      "http://a.test/dir/page.html",
      "https://a.test:8443/dir/?q=1",
      "http://[::1]:8080/p",
      "http://127.0.0.1:81/d/",
    ];
    for (const base of bases) {
      const origin = originOf(base);
      const hrefs = [
        `${origin}/`,
        `${origin}/x`,
        `${origin}/x/y.html#frag`,
        `${origin}/a/../b`,
        `${origin}/a/./b/..`,
        `${origin}/..`,
        `${origin}//x`,
        `${origin}/x?q=1`,
        `${origin}/caf%C3%A9`,
        `${origin}/café`,
        `${origin}/x y`,
        `${origin}/x\\y`,
        `${origin}`,
        `${origin}?q`,
        `${origin}#f`,
        `${origin}0/x`,
        `${origin}.evil.test/x`,
        `${origin}@evil.test/x`,
        `${origin.toUpperCase()}/X`,
        `./${origin}/x`,
        `../${origin}/x`,
        ` ${origin}/x`,
        `${origin.replace("://", "://user@")}/x`,
        `${origin.replace("http", "ftp")}/x`,
      ];
      for (const href of hrefs) expect([base, href, normaliseLink(href, base)]).toEqual([base, href, normaliseUrl(href, base)]);
    }
  });

  test("hrefs resolved by the URL parser agree with it against every base, the same href on many pages and twice on one", () => {
    const bases = ["http://a.test/d/p.html", "https://b.test/", "http://a.test:81/x/", "https://c.test/q?x=1"];
    const hrefs = [
      "https://other.test/x?y=1",
      "HTTP://Other.Test/x",
      "http:x",
      "https:x",
      "http:/x",
      "//other.test/y",
      "http://",
      "https://u@other.test/",
      "http://a.test/%7e",
      "/a b",
      "x?a b",
      "/%7e",
    ];
    // More distinct hrefs than a page's LinkBase and the process remember, so that both are emptied along the way.
    const many = Array.from({ length: 5_000 }, (_, i) => [`/p ${i}`, `https://h${i % 7}.test/${i}`]).flat();
    let checked = 0;
    for (let page = 0; page < 3; page++)
      for (const base of bases) {
        const links = new LinkBase(base);
        for (const href of [...hrefs, ...many, ...hrefs, ...hrefs]) {
          const link = links.resolve(href);
          if (link !== normaliseUrl(href, base)) expect([base, href, link]).toEqual([base, href, normaliseUrl(href, base)]);
          checked++;
        }
      }
    expect(checked).toBe(3 * 4 * (3 * 12 + 10_000));
  });

  test("links with a query, joined without the URL parser when it needs no encoding, agree with it", () => {
    const bases = ["http://a.test/", "http://a.test/dir/page.html?old=1", "https://a.test:8443/dir/sub/", "http://[::1]:8080/p?x"];
    const queries = [
      "?",
      "?q",
      "?a=1&b=2",
      "?p=/x/y?z",
      "?a=%20b",
      "?a=%zz",
      "?a b",
      "?a=é",
      "?a='b'",
      "?a=[1]",
      "?a=|",
      "?a=\t1",
      "??",
      "?a=1#f",
      "?a=1#f?g",
    ];
    const paths = [
      "",
      "/",
      "/x",
      "x",
      "x/y.html",
      "./x",
      "../x",
      "/a/../b",
      "../../x",
      ".",
      "..",
      "/x/.",
      "a:b",
      "//b.test/x",
      "/caf%C3%A9",
      "/café",
    ];
    for (const base of bases) {
      const origin = originOf(base);
      for (const path of [...paths, `${origin}/x`, `${origin}`])
        for (const query of queries) {
          const href = path + query;
          expect([base, href, normaliseLink(href, base)]).toEqual([base, href, normaliseUrl(href, base)]);
        }
    }
  });

  test("dot segments resolved without the URL parser agree with it: 20,000 seeded references", () => {
    const bases = ["http://a.test/", "http://a.test/d/p.html", "http://a.test/d/e/", "http://a.test/d/e/f?q=1", "http://a.test:81/d//e/p"];
    const parts = ["..", ".", "", "a", "b.html", "..x", ".y", "x:y", "~u", "c,d", "%2e", "%2E%2E"];
    let state = 20261123;
    const next = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return state % n;
    };
    let checked = 0;
    for (let i = 0; i < 20_000; i++) {
      const segments = Array.from({ length: 1 + next(5) }, () => parts[next(parts.length)]!);
      const href = (next(3) === 0 ? "/" : "") + segments.join("/") + (next(4) === 0 ? "#f" : "");
      const base = bases[next(bases.length)]!;
      expect([base, href, normaliseLink(href, base)]).toEqual([base, href, normaliseUrl(href, base)]);
      checked++;
    }
    expect(checked).toBe(20_000);
  });
});
