// Traffic goes to loopback fixtures only. Names like rebind.test exist only in the injected
// resolvers: the system cannot resolve them, so a fixture that answers proves the connection went
// to the checked IP. Refusals are proved without any connection (a `send` that fails the test).
// What goes over a connection (the IP, Host, SNI, the certificate check, decoding, redirects) is
// proved with both senders: the crawler's HTTP/1.1 client (the default) and Bun's fetch.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { parseAllowTarget, type Resolver, type TargetPolicy } from "../../../src/crawler/net/address-guard.ts";
import { TargetRefusedError } from "../../../src/crawler/errors.ts";
import { createGuardedFetch, type Send } from "../../../src/crawler/net/guarded-fetch.ts";
import { BufferedResponse, createHttpClient } from "../../../src/crawler/net/http-client.ts";
import { CERT, KEY } from "../../support/test-certificate.ts";

interface Seen {
  path: string;
  host: string | null;
  userAgent: string | null;
  servername?: string | false;
}

const seen: Seen[] = [];
const body = `<html><body>${"decoded ".repeat(100)}</body></html>`;

const fixtureHandler = (request: Request): Response => {
  const url = new URL(request.url);
  seen.push({ path: url.pathname + url.search, host: request.headers.get("host"), userAgent: request.headers.get("user-agent") });
  if (url.pathname === "/redirect") return new Response(null, { status: 302, headers: { Location: "/elsewhere" } });
  if (url.pathname === "/gzip") {
    return new Response(Bun.gzipSync(Buffer.from(body)), {
      headers: { "Content-Encoding": "gzip", "Content-Type": "text/html" },
    });
  }
  return new Response("fixture", { headers: { "Content-Type": "text/html" } });
};

const fixture = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: fixtureHandler });
const port = Number(fixture.port);

let ipv6Fixture: ReturnType<typeof Bun.serve> | undefined;
/** Why the IPv6 test cannot run here, or null. */
let noIpv6: string | null = null;
try {
  ipv6Fixture = Bun.serve({ port: 0, hostname: "::1", fetch: fixtureHandler });
} catch (err) {
  // A skip says why, in its name and on the console, rather than passing unnoticed.
  noIpv6 = `no IPv6 loopback on this machine (serving on ::1 failed: ${(err as Error).message})`;
  console.warn(`guarded-fetch.test.ts: "an IPv6 address is put in brackets" skipped: ${noIpv6}`);
}

let tlsFixture: HttpsServer;
let tlsPort = 0;

beforeAll(async () => {
  tlsFixture = createServer({ cert: CERT, key: KEY }, (req, res) => {
    seen.push({
      path: req.url ?? "",
      host: req.headers.host ?? null,
      userAgent: req.headers["user-agent"] ?? null,
      servername: (req.socket as unknown as { servername?: string | false }).servername,
    });
    res.end("secure");
  });
  await new Promise<void>((resolve) => tlsFixture.listen(0, "127.0.0.1", resolve));
  tlsPort = (tlsFixture.address() as AddressInfo).port;
});

afterAll(() => {
  fixture.stop(true);
  ipv6Fixture?.stop(true);
  tlsFixture.close();
});

/** A resolver answering from a table, counting its calls. */
function fakeResolver(table: Record<string, string[]>): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw new Error("ENOTFOUND");
    return addresses.map((address) => ({ address, family: address.includes(":") ? (6 as const) : (4 as const) }));
  };
  return Object.assign(resolve, { calls });
}

/** `base` (fetch or the crawler's client), recording what it was given. */
function recordingSend(
  extraTls: BunFetchRequestInitTLS = {},
  base: Send = fetch,
): Send & { sent: { input: string; init: BunFetchRequestInit }[] } {
  const sent: { input: string; init: BunFetchRequestInit }[] = [];
  const send: Send = (input, init) => {
    sent.push({ input, init });
    return base(input, init.tls ? { ...init, tls: { ...init.tls, ...extraTls } } : init);
  };
  return Object.assign(send, { sent });
}

const mustNotSend: Send = async (input) => {
  throw new Error(`unexpected request to ${input}`);
};

const allowRebind: TargetPolicy = { allowPrivate: false, allowTargets: [parseAllowTarget("rebind.test")] };
const strict: TargetPolicy = { allowPrivate: false, allowTargets: [] };
const hop = (headers: Record<string, string> = {}) => ({ signal: new AbortController().signal, headers });

function since(start: number): Seen[] {
  return seen.slice(start);
}

/** The two senders: a fresh client per use, so that no test finds another's pooled connection. */
const senders: [string, () => Send][] = [
  ["the crawler's HTTP/1.1 client", () => createHttpClient().send],
  ["fetch", () => fetch],
];

test("the default sender is the crawler's HTTP/1.1 client", async () => {
  const get = createGuardedFetch(allowRebind, fakeResolver({ "rebind.test": ["127.0.0.1"] }));
  const response = await get(new URL(`http://rebind.test:${port}/default`), hop());
  expect(response).toBeInstanceOf(BufferedResponse);
  expect(await response.text()).toBe("fixture");
});

describe.each(senders)("createGuardedFetch over http, with %s", (_, sender) => {
  test("connects to the checked IP and sends the original Host, path and query", async () => {
    const resolve = fakeResolver({ "rebind.test": ["127.0.0.1"] });
    const send = recordingSend({}, sender());
    const get = createGuardedFetch(allowRebind, resolve, send);
    const start = seen.length;

    const response = await get(
      new URL(`http://rebind.test:${port}/a/b?c=1&d=%20#fragment`),
      hop({ "User-Agent": "genapi/test", host: "evil.example" }),
    );

    expect(response.status).toBe(200);
    expect(await response.text()).toBe("fixture");
    expect(since(start)).toEqual([{ path: "/a/b?c=1&d=%20", host: `rebind.test:${port}`, userAgent: "genapi/test" }]);
    expect(resolve.calls).toEqual(["rebind.test"]);
    expect(send.sent.map((s) => s.input)).toEqual([`http://127.0.0.1:${port}/a/b?c=1&d=%20`]);
    expect(send.sent[0]?.init).toMatchObject({ redirect: "manual", decompress: true, proxy: false, tls: undefined });
  });

  test("an empty query is sent as it is listed: /x? is requested as /x?, never as /x", async () => {
    // URL.search is "" for an empty query as for none: the request target was pathname + search,
    // so a link to /x? (which robots.txt's "Disallow: /x$" allows) was fetched as /x.
    const send = recordingSend({}, sender());
    const get = createGuardedFetch(allowRebind, fakeResolver({ "rebind.test": ["127.0.0.1"] }), send);
    for (const path of ["/x?", "/x?#top", "/x", "/x#top", "/x?a=1", "/x??"]) {
      await (await get(new URL(`http://rebind.test:${port}${path}`), hop())).text();
    }
    const origin = `http://127.0.0.1:${port}`;
    expect(send.sent.map((s) => s.input.slice(origin.length))).toEqual(["/x?", "/x?", "/x", "/x", "/x?a=1", "/x??"]);
  });

  test("a target given with the URL is sent as given: the URL as it is listed, not as the parser writes it", async () => {
    const send = recordingSend({}, sender());
    const get = createGuardedFetch(allowRebind, fakeResolver({ "rebind.test": ["127.0.0.1"] }), send);
    const url = new URL(`http://rebind.test:${port}/q?name='a'`);
    expect(url.search).toBe("?name=%27a%27");
    await (await get(url, { ...hop(), target: "/q?name='a'" })).text();
    expect(send.sent.map((s) => s.input)).toEqual([`http://127.0.0.1:${port}/q?name='a'`]);
  });

  test("returns a redirect as it is, without following it", async () => {
    const get = createGuardedFetch(allowRebind, fakeResolver({ "rebind.test": ["127.0.0.1"] }), sender());
    const start = seen.length;

    const response = await get(new URL(`http://rebind.test:${port}/redirect`), hop());

    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/elsewhere");
    expect(since(start).map((s) => s.path)).toEqual(["/redirect"]);
  });

  test("decodes a compressed body", async () => {
    const get = createGuardedFetch(allowRebind, fakeResolver({ "rebind.test": ["127.0.0.1"] }), sender());
    const response = await get(new URL(`http://rebind.test:${port}/gzip`), hop());
    expect(await response.text()).toBe(body);
  });

  test("IP literals and localhost need no resolver under --allow-private-targets", async () => {
    const open: TargetPolicy = { allowPrivate: true, allowTargets: [] };
    const send = recordingSend({}, sender());
    const get = createGuardedFetch(open, fakeResolver({}), send);
    const start = seen.length;

    expect(await (await get(new URL(`http://localhost:${port}/l`), hop())).text()).toBe("fixture");
    expect(await (await get(new URL(`http://2130706433:${port}/n`), hop())).text()).toBe("fixture");

    expect(send.sent.map((s) => s.input)).toEqual([`http://127.0.0.1:${port}/l`, `http://127.0.0.1:${port}/n`]);
    expect(since(start).map((s) => s.host)).toEqual([`localhost:${port}`, `127.0.0.1:${port}`]);
  });

  test("one fetcher, origins in turn: each request goes where its own URL says, a blob: URL's inner origin not taken for its own", async () => {
    const open: TargetPolicy = { allowPrivate: true, allowTargets: [] };
    const send = recordingSend({}, sender());
    const get = createGuardedFetch(open, fakeResolver({}), send);
    const start = seen.length;

    for (const url of [
      `http://127.0.0.1:${port}/a`,
      `http://127.0.0.1:${port}/b`,
      `http://localhost:${port}/c`,
      `http://127.0.0.1:${port}/d`,
    ])
      expect(await (await get(new URL(url), hop())).text()).toBe("fixture");
    const blob = await get(new URL(`blob:http://127.0.0.1:${port}/e`), hop()).then(
      () => "sent",
      (error: unknown) => error,
    );

    expect(blob).toBeInstanceOf(Error);
    expect(send.sent.map((s) => s.input)).toEqual(["/a", "/b", "/c", "/d"].map((path) => `http://127.0.0.1:${port}${path}`));
    expect(since(start).map((s) => s.host)).toEqual([`127.0.0.1:${port}`, `127.0.0.1:${port}`, `localhost:${port}`, `127.0.0.1:${port}`]);
  });

  test.skipIf(noIpv6 !== null)(`an IPv6 address is put in brackets${noIpv6 ? ` (skipped: ${noIpv6})` : ""}`, async () => {
    const v6port = ipv6Fixture?.port;
    const send = recordingSend({}, sender());
    const get = createGuardedFetch(allowRebind, fakeResolver({ "rebind.test": ["::1"] }), send);
    const start = seen.length;

    const response = await get(new URL(`http://rebind.test:${v6port}/six`), hop());

    expect(await response.text()).toBe("fixture");
    expect(send.sent.map((s) => s.input)).toEqual([`http://[::1]:${v6port}/six`]);
    expect(since(start)).toEqual([{ path: "/six", host: `rebind.test:${v6port}`, userAgent: expect.any(String) }]);
  });
});

describe("createGuardedFetch refuses before connecting", () => {
  test.each([
    ["a private answer", { "name.test": ["10.0.0.1"] }, "name.test resolves to 10.0.0.1, a private address."],
    [
      "a public answer followed by loopback (rebinding)",
      { "name.test": ["93.184.215.14", "127.0.0.1"] },
      "name.test resolves to 127.0.0.1, a loopback address.",
    ],
    [
      "an IPv4-mapped loopback answer",
      { "name.test": ["::ffff:7f00:1"] },
      "name.test resolves to ::ffff:7f00:1, an IPv4-mapped loopback address.",
    ],
  ])("%s", async (_, table, reason) => {
    const resolve = fakeResolver(table);
    const get = createGuardedFetch(strict, resolve, mustNotSend);
    const error = await get(new URL(`http://name.test:${port}/`), hop()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TargetRefusedError);
    expect((error as Error).message).toBe(`Target address not allowed: ${reason}`);
    expect(resolve.calls).toEqual(["name.test"]);
  });

  test("the fixture itself, by IP or by localhost, when not allowed", async () => {
    const get = createGuardedFetch(strict, fakeResolver({}), mustNotSend);
    for (const raw of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`]) {
      const error = await get(new URL(raw), hop()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TargetRefusedError);
    }
  });

  test("an allow entry for another port does not admit this one", async () => {
    const policy: TargetPolicy = { allowPrivate: false, allowTargets: [parseAllowTarget(`rebind.test:${port + 1}`)] };
    const get = createGuardedFetch(policy, fakeResolver({ "rebind.test": ["127.0.0.1"] }), mustNotSend);
    const error = await get(new URL(`http://rebind.test:${port}/`), hop()).catch((e: unknown) => e);
    expect((error as Error).message).toBe("Target address not allowed: rebind.test resolves to 127.0.0.1, a loopback address.");
  });

  test("a name that does not resolve fails with a plain DNS error", async () => {
    const get = createGuardedFetch(strict, fakeResolver({}), mustNotSend);
    const error = await get(new URL("http://nowhere.test/"), hop()).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(TargetRefusedError);
    expect((error as Error).message).toBe("DNS lookup failed for nowhere.test");
  });

  test("an abort stops a pending lookup, and an aborted signal stops everything", async () => {
    let lookups = 0;
    const hanging: Resolver = () => {
      lookups++;
      return new Promise(() => {});
    };
    const get = createGuardedFetch(strict, hanging, mustNotSend);

    const controller = new AbortController();
    const pending = get(new URL("http://slow.test/"), { signal: controller.signal, headers: {} });
    controller.abort(new Error("crawl deadline"));
    await expect(pending).rejects.toThrow("crawl deadline");

    await expect(get(new URL("http://slow.test/"), { signal: controller.signal, headers: {} })).rejects.toThrow("crawl deadline");
    expect(lookups).toBe(1);
  });
});

describe.each(senders)("createGuardedFetch over https, with %s", (_, sender) => {
  const resolve = fakeResolver({ "rebind.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] });
  const policy: TargetPolicy = {
    allowPrivate: false,
    allowTargets: [parseAllowTarget("rebind.test"), parseAllowTarget("other.test")],
  };

  test("verifies the certificate against the name and sends it as SNI, while connecting to the IP", async () => {
    const send = recordingSend({ ca: CERT }, sender());
    const get = createGuardedFetch(policy, resolve, send);
    const start = seen.length;

    const response = await get(new URL(`https://rebind.test:${tlsPort}/secure?x=1`), hop());

    expect(await response.text()).toBe("secure");
    expect(send.sent.map((s) => s.input)).toEqual([`https://127.0.0.1:${tlsPort}/secure?x=1`]);
    expect(send.sent[0]?.init.tls).toEqual({ serverName: "rebind.test" });
    expect(since(start)).toEqual([
      { path: "/secure?x=1", host: `rebind.test:${tlsPort}`, userAgent: expect.any(String), servername: "rebind.test" },
    ]);
  });

  test("refuses a certificate that does not name the host, even over a pooled connection", async () => {
    const get = createGuardedFetch(policy, resolve, recordingSend({ ca: CERT }, sender()));
    expect(await (await get(new URL(`https://rebind.test:${tlsPort}/first`), hop())).text()).toBe("secure");

    const error = await get(new URL(`https://other.test:${tlsPort}/second`), hop()).catch((e: unknown) => e);

    expect((error as { code?: string }).code).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
  });

  test("keeps the default trust store: a self-signed certificate is refused", async () => {
    const get = createGuardedFetch(policy, resolve, sender());
    const error = await get(new URL(`https://rebind.test:${tlsPort}/untrusted`), hop()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as { code?: string }).code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
  });
});
