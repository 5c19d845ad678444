// Every refusal here is proved on the decision alone: no test sends traffic anywhere.
import { describe, expect, test } from "bun:test";
import {
  blockedRange,
  checkTarget,
  parseAllowTarget,
  systemResolver,
  type Resolver,
  type TargetPolicy,
} from "../../../src/crawler/net/address-guard.ts";
import { TargetRefusedError } from "../../../src/crawler/errors.ts";

const strict: TargetPolicy = { allowPrivate: false, allowTargets: [] };

/** A resolver that must not be reached. */
const noLookup: Resolver = async (hostname) => {
  throw new Error(`unexpected lookup of ${hostname}`);
};

/** A resolver answering from a table, recording what it was asked. */
function fakeResolver(table: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string) => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw new Error("ENOTFOUND");
    return addresses.map((address) => ({ address, family: address.includes(":") ? (6 as const) : (4 as const) }));
  };
  return Object.assign(resolve, { asked });
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TargetRefusedError);
  return (error as TargetRefusedError).message;
}

describe("blockedRange: IPv4, both sides of every boundary", () => {
  test.each([
    ["0.0.0.0", "unspecified"],
    ["0.255.255.255", "unspecified"],
    ["1.0.0.0", null],
    ["9.255.255.255", null],
    ["10.0.0.0", "private"],
    ["10.255.255.255", "private"],
    ["11.0.0.0", null],
    ["100.63.255.255", null],
    ["100.64.0.0", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["100.128.0.0", null],
    ["126.255.255.255", null],
    ["127.0.0.0", "loopback"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.255", "loopback"],
    ["128.0.0.0", null],
    ["169.253.255.255", null],
    ["169.254.0.0", "link-local"],
    ["169.254.169.254", "link-local"],
    ["169.254.255.255", "link-local"],
    ["169.255.0.0", null],
    ["172.15.255.255", null],
    ["172.16.0.0", "private"],
    ["172.31.255.255", "private"],
    ["172.32.0.0", null],
    ["191.255.255.255", null],
    ["192.0.0.0", "IETF protocol assignment"],
    ["192.0.0.255", "IETF protocol assignment"],
    ["192.0.1.0", null],
    ["192.0.2.0", "documentation"],
    ["192.0.2.255", "documentation"],
    ["192.0.3.0", null],
    ["192.88.98.255", null],
    ["192.88.99.0", "6to4 relay anycast"],
    ["192.88.99.255", "6to4 relay anycast"],
    ["192.88.100.0", null],
    ["192.167.255.255", null],
    ["192.168.0.0", "private"],
    ["192.168.255.255", "private"],
    ["192.169.0.0", null],
    ["198.17.255.255", null],
    ["198.18.0.0", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
    ["198.20.0.0", null],
    ["198.51.99.255", null],
    ["198.51.100.0", "documentation"],
    ["198.51.100.255", "documentation"],
    ["198.51.101.0", null],
    ["203.0.112.255", null],
    ["203.0.113.0", "documentation"],
    ["203.0.113.255", "documentation"],
    ["203.0.114.0", null],
    ["223.255.255.255", null],
    ["224.0.0.0", "multicast"],
    ["239.255.255.255", "multicast"],
    ["240.0.0.0", "reserved"],
    ["255.255.255.254", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["192.175.48.1", "special-purpose (as112)"],
    ["192.52.193.1", "special-purpose (amt)"],
    ["8.8.8.8", null],
    ["93.184.215.14", null],
  ])("%s -> %p", (ip, expected) => {
    expect(blockedRange(ip)).toBe(expected);
  });
});

// Teredo addresses below: server 8.8.8.8 (0808:0808) and client 8.8.4.4 (stored inverted: f7f7:fbfb).
describe("blockedRange: IPv6", () => {
  test.each([
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["::2", "IPv4-compatible"],
    ["::7f00:1", "IPv4-compatible"],
    ["::808:808", "IPv4-compatible"],
    ["::ffff:ffff", "IPv4-compatible"],
    ["::1:0:0", "reserved"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:7f00:1", "IPv4-mapped loopback"],
    ["::ffff:a00:1", "IPv4-mapped private"],
    ["::ffff:a9fe:a9fe", "IPv4-mapped link-local"],
    ["::ffff:0:0", "IPv4-mapped unspecified"],
    ["::ffff:808:808", null],
    ["::ffff:0:7f00:1", "IPv4-translated loopback"],
    ["::ffff:0:6440:1", "IPv4-translated carrier-grade NAT"],
    ["::ffff:0:808:808", null],
    ["64:ff9b::7f00:1", "NAT64 loopback"],
    ["64:ff9b::a00:1", "NAT64 private"],
    ["64:ff9b::808:808", null],
    ["64:ff9b:1::808:808", "local-use NAT64"],
    ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "local-use NAT64"],
    ["64:ff9b:2::", "reserved"],
    ["100::1", "discard"],
    ["100::ffff:ffff:ffff:ffff", "discard"],
    ["100:0:0:1::1", "dummy"],
    ["100:0:0:2::", "reserved"],
    ["2001:0:808:808::f7f7:fbfb", null],
    ["2001:0:7f00:1::f7f7:fbfb", "Teredo loopback"],
    ["2001:0:808:808::f5ff:fffe", "Teredo private"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo documentation"],
    ["2001:1::1", "IETF protocol assignment"],
    ["2001:2::1", "benchmarking"],
    ["2001:2:0:ffff::", "benchmarking"],
    ["2001:2:1::", "IETF protocol assignment"],
    ["2001:3::1", "IETF protocol assignment"],
    ["2001:4:112::1", "IETF protocol assignment"],
    ["2001:10::1", "ORCHID"],
    ["2001:20::1", "ORCHID"],
    ["2001:2f:ffff::", "ORCHID"],
    ["2001:30::1", "IETF protocol assignment"],
    ["2001:1ff:ffff::", "IETF protocol assignment"],
    ["2001:200::", null],
    ["2001:db7:ffff::", null],
    ["2001:db8::", "documentation"],
    ["2001:db8:ffff:ffff::", "documentation"],
    ["2001:db9::", null],
    ["2002:808:808::1", null],
    ["2002:7f00:1::1", "6to4 loopback"],
    ["2002:c0a8:101::1", "6to4 private"],
    ["2002:a9fe:a9fe::", "6to4 link-local"],
    ["3fff::1", "documentation"],
    ["3fff:fff:ffff::", "documentation"],
    ["3fff:1000::", null],
    ["3fff:ffff::", null],
    ["5f00::1", "segment routing"],
    ["2620:4f:8000::1", "special-purpose (as112v6)"],
    ["1fff:ffff::", "reserved"],
    ["2000::", null],
    ["4000::", "reserved"],
    ["fbff:ffff::", "reserved"],
    ["fc00::", "unique local"],
    ["fdff:ffff::", "unique local"],
    ["fe7f:ffff::", "reserved"],
    ["fe80::", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf:ffff::", "link-local"],
    ["fec0::", "site-local"],
    ["feff:ffff::", "site-local"],
    ["ff00::", "multicast"],
    ["ff02::1", "multicast"],
    ["2606:4700:4700::1111", null],
    ["2a00:1450:4001::", null],
  ])("%s -> %p", (ip, expected) => {
    expect(blockedRange(ip)).toBe(expected);
  });
});

describe("blockedRange: not an address", () => {
  test.each([[""], ["localhost"], ["127.1"], ["2130706433"], ["0x7f.0.0.1"], ["[::1]"], ["1.2.3.4.5"], ["::g"]])(
    "%p is unparsable",
    (text) => {
      expect(blockedRange(text)).toBe("unparsable");
    },
  );
});

describe("checkTarget: host spellings end in the same decision, without a lookup", () => {
  const loopback = "Target address not allowed: 127.0.0.1 is a loopback address.";
  test.each([
    ["http://127.0.0.1/", loopback],
    ["http://2130706433/", loopback],
    ["http://0x7f000001/", loopback],
    ["http://0177.0.0.1/", loopback],
    ["http://127.1/", loopback],
    ["http://0x7f.1/", loopback],
    ["http://127.0.0.1./", loopback],
    ["http://%31%32%37.0.0.1/", loopback],
    ["http://[::1]/", "Target address not allowed: ::1 is a loopback address."],
    ["http://[0:0:0:0:0:0:0:1]/", "Target address not allowed: ::1 is a loopback address."],
    ["http://[::ffff:127.0.0.1]/", "Target address not allowed: ::ffff:7f00:1 is an IPv4-mapped loopback address."],
    ["http://[::7f00:1]/", "Target address not allowed: ::7f00:1 is an IPv4-compatible address."],
    ["http://0.0.0.0/", "Target address not allowed: 0.0.0.0 is an unspecified address."],
    ["http://0/", "Target address not allowed: 0.0.0.0 is an unspecified address."],
    ["http://169.254.169.254/latest/meta-data/", "Target address not allowed: 169.254.169.254 is a link-local address."],
    ["http://[fd00::1]/", "Target address not allowed: fd00::1 is a unique local address."],
    ["https://10.1.2.3:8443/", "Target address not allowed: 10.1.2.3 is a private address."],
    ["http://localhost/", "Target address not allowed: localhost is a loopback address."],
    ["http://LOCALHOST/", "Target address not allowed: localhost is a loopback address."],
    ["http://localhost./", "Target address not allowed: localhost is a loopback address."],
    ["http://Foo.LocalHost./", "Target address not allowed: foo.localhost is a loopback address."],
    ["http://a.b.localhost:8080/", "Target address not allowed: a.b.localhost is a loopback address."],
    ["http://ｌｏｃａｌｈｏｓｔ/", "Target address not allowed: localhost is a loopback address."],
  ])("%s", async (raw, message) => {
    expect(await refusal(checkTarget(new URL(raw), strict, noLookup))).toBe(message);
  });

  test("a public IP literal is returned as it is, family included", async () => {
    expect(await checkTarget(new URL("http://8.8.8.8/"), strict, noLookup)).toEqual({ address: "8.8.8.8", family: 4 });
    expect(await checkTarget(new URL("https://[2606:4700:4700::1111]/"), strict, noLookup)).toEqual({
      address: "2606:4700:4700::1111",
      family: 6,
    });
    expect(await checkTarget(new URL("http://[::ffff:8.8.8.8]/"), strict, noLookup)).toEqual({
      address: "::ffff:808:808",
      family: 6,
    });
  });

  test("a name that merely starts like localhost is looked up", async () => {
    const resolve = fakeResolver({ "localhost.example.com": ["8.8.8.8"], notlocalhost: ["8.8.4.4"] });
    expect((await checkTarget(new URL("http://localhost.example.com/"), strict, resolve)).address).toBe("8.8.8.8");
    expect((await checkTarget(new URL("http://notlocalhost/"), strict, resolve)).address).toBe("8.8.4.4");
    expect(resolve.asked).toEqual(["localhost.example.com", "notlocalhost"]);
  });
});

describe("checkTarget: names", () => {
  const resolve = fakeResolver({
    "public.example": ["8.8.8.8", "2606:4700:4700::1111"],
    "v6first.example": ["2606:4700:4700::1111", "8.8.8.8"],
    "private.example": ["10.0.0.1"],
    "mixed.example": ["8.8.8.8", "10.0.0.1"],
    "rebind.example": ["93.184.215.14", "127.0.0.1"],
    "mapped.example": ["::ffff:7f00:1"],
    "metadata.example": ["169.254.169.254"],
    "empty.example": [],
    "garbage.example": ["not-an-ip"],
    "fqdn.example.": ["8.8.4.4"],
  });

  test("a public name gives its first address", async () => {
    expect(await checkTarget(new URL("https://public.example/"), strict, resolve)).toEqual({
      address: "8.8.8.8",
      family: 4,
    });
    expect(await checkTarget(new URL("https://v6first.example/"), strict, resolve)).toEqual({
      address: "2606:4700:4700::1111",
      family: 6,
    });
  });

  test.each([
    ["private.example", "private.example resolves to 10.0.0.1, a private address."],
    ["mixed.example", "mixed.example resolves to 10.0.0.1, a private address."],
    ["rebind.example", "rebind.example resolves to 127.0.0.1, a loopback address."],
    ["mapped.example", "mapped.example resolves to ::ffff:7f00:1, an IPv4-mapped loopback address."],
    ["metadata.example", "metadata.example resolves to 169.254.169.254, a link-local address."],
    ["garbage.example", "garbage.example resolves to not-an-ip, not a valid IP address."],
  ])("%s is refused", async (host, reason) => {
    expect(await refusal(checkTarget(new URL(`http://${host}/`), strict, resolve))).toBe(`Target address not allowed: ${reason}`);
  });

  test("a name that does not resolve is a plain DNS failure, not a refusal", async () => {
    for (const host of ["nowhere.example", "empty.example"]) {
      const error = await checkTarget(new URL(`http://${host}/`), strict, resolve).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(TargetRefusedError);
      expect((error as Error).message).toBe(`DNS lookup failed for ${host}`);
    }
  });

  test("the resolver is asked once, with the hostname as written (a trailing dot stays)", async () => {
    const once = fakeResolver({ "fqdn.example.": ["8.8.4.4"] });
    expect((await checkTarget(new URL("http://FQDN.example./"), strict, once)).address).toBe("8.8.4.4");
    expect(once.asked).toEqual(["fqdn.example."]);
  });
});

describe("checkTarget: ports", () => {
  const resolve = fakeResolver({ "example.com": ["8.8.8.8"] });

  test.each([
    ["http://example.com:22/", 22],
    ["http://example.com:0/", 0],
    ["http://example.com:81/", 81],
    ["https://example.com:1023/", 1023],
    ["http://8.8.8.8:25/", 25],
    ["http://localhost:22/", 22],
  ])("%s is refused before any lookup", async (raw, port) => {
    expect(await refusal(checkTarget(new URL(raw), strict, noLookup))).toBe(
      `Target port ${port} not allowed: only 80, 443 and 1024-65535.`,
    );
  });

  test.each([
    ["http://example.com/"],
    ["https://example.com/"],
    ["http://example.com:443/"],
    ["https://example.com:80/"],
    ["http://example.com:1024/"],
    ["https://example.com:8443/"],
    ["http://example.com:65535/"],
  ])("%s is allowed", async (raw) => {
    expect((await checkTarget(new URL(raw), strict, resolve)).address).toBe("8.8.8.8");
  });
});

describe("checkTarget: --allow-target", () => {
  const resolve = fakeResolver({
    "intranet.example": ["10.0.0.5"],
    "intranet.example.": ["10.0.0.5"],
    "other.example": ["10.0.0.6"],
    "public.example": ["8.8.8.8"],
  });

  test("a host without a port admits that host on any port, and only that host", async () => {
    const policy: TargetPolicy = { allowPrivate: false, allowTargets: [parseAllowTarget("intranet.example")] };
    for (const raw of ["http://intranet.example/", "http://intranet.example:22/", "https://INTRANET.example.:9000/"]) {
      expect(await checkTarget(new URL(raw), policy, resolve)).toEqual({ address: "10.0.0.5", family: 4 });
    }
    expect(await refusal(checkTarget(new URL("http://other.example/"), policy, resolve))).toBe(
      "Target address not allowed: other.example resolves to 10.0.0.6, a private address.",
    );
    expect((await checkTarget(new URL("http://public.example/"), policy, resolve)).address).toBe("8.8.8.8");
  });

  test("a host with a port admits that port only", async () => {
    const policy: TargetPolicy = { allowPrivate: false, allowTargets: [parseAllowTarget("Intranet.Example.:8080")] };
    expect((await checkTarget(new URL("http://intranet.example:8080/"), policy, resolve)).address).toBe("10.0.0.5");
    expect(await refusal(checkTarget(new URL("http://intranet.example:9090/"), policy, resolve))).toBe(
      "Target address not allowed: intranet.example resolves to 10.0.0.5, a private address.",
    );
    expect(await refusal(checkTarget(new URL("http://intranet.example/"), policy, resolve))).toBe(
      "Target address not allowed: intranet.example resolves to 10.0.0.5, a private address.",
    );
  });

  test("an admitted port outside the default ports", async () => {
    const policy: TargetPolicy = { allowPrivate: false, allowTargets: [parseAllowTarget("intranet.example:22")] };
    expect((await checkTarget(new URL("http://intranet.example:22/"), policy, resolve)).address).toBe("10.0.0.5");
    expect(await refusal(checkTarget(new URL("http://intranet.example:23/"), policy, resolve))).toBe(
      "Target port 23 not allowed: only 80, 443 and 1024-65535.",
    );
  });

  test("IP literals match whatever spelling the URL used", async () => {
    const policy: TargetPolicy = {
      allowPrivate: false,
      allowTargets: [parseAllowTarget("127.0.0.1:8080"), parseAllowTarget("[::1]:8080"), parseAllowTarget("fd00::5")],
    };
    for (const raw of ["http://127.0.0.1:8080/", "http://2130706433:8080/", "http://127.1:8080/"]) {
      expect(await checkTarget(new URL(raw), policy, noLookup)).toEqual({ address: "127.0.0.1", family: 4 });
    }
    expect(await checkTarget(new URL("http://[0::1]:8080/"), policy, noLookup)).toEqual({ address: "::1", family: 6 });
    expect(await checkTarget(new URL("http://[fd00::5]:1/"), policy, noLookup)).toEqual({ address: "fd00::5", family: 6 });
    expect(await refusal(checkTarget(new URL("http://127.0.0.1:8081/"), policy, noLookup))).toBe(
      "Target address not allowed: 127.0.0.1 is a loopback address.",
    );
    expect(await refusal(checkTarget(new URL("http://127.0.0.2:8080/"), policy, noLookup))).toBe(
      "Target address not allowed: 127.0.0.2 is a loopback address.",
    );
  });

  test("localhost, allowed by name, is 127.0.0.1 without a lookup", async () => {
    const policy: TargetPolicy = { allowPrivate: false, allowTargets: [parseAllowTarget("localhost")] };
    expect(await checkTarget(new URL("http://localhost.:3000/"), policy, noLookup)).toEqual({
      address: "127.0.0.1",
      family: 4,
    });
    expect(await refusal(checkTarget(new URL("http://app.localhost/"), policy, noLookup))).toBe(
      "Target address not allowed: app.localhost is a loopback address.",
    );
  });
});

describe("checkTarget: --allow-private-targets", () => {
  const open: TargetPolicy = { allowPrivate: true, allowTargets: [] };
  const resolve = fakeResolver({ "private.example": ["10.0.0.1"], "mixed.example": ["10.0.0.1", "8.8.8.8"] });

  test("lifts the address and the port checks", async () => {
    expect(await checkTarget(new URL("http://127.0.0.1:22/"), open, noLookup)).toEqual({
      address: "127.0.0.1",
      family: 4,
    });
    expect(await checkTarget(new URL("http://[::1]/"), open, noLookup)).toEqual({ address: "::1", family: 6 });
    expect(await checkTarget(new URL("http://localhost:8080/"), open, noLookup)).toEqual({
      address: "127.0.0.1",
      family: 4,
    });
    expect((await checkTarget(new URL("http://private.example/"), open, resolve)).address).toBe("10.0.0.1");
    expect((await checkTarget(new URL("http://mixed.example/"), open, resolve)).address).toBe("10.0.0.1");
  });

  test("still needs a name to resolve to real addresses", async () => {
    const garbage = fakeResolver({ "garbage.example": ["not-an-ip"] });
    expect(await refusal(checkTarget(new URL("http://garbage.example/"), open, garbage))).toBe(
      "Target address not allowed: garbage.example resolves to not-an-ip, not a valid IP address.",
    );
    const error = await checkTarget(new URL("http://nowhere.example/"), open, garbage).catch((e: unknown) => e);
    expect((error as Error).message).toBe("DNS lookup failed for nowhere.example");
  });
});

describe("parseAllowTarget", () => {
  test.each([
    ["example.com", { host: "example.com" }],
    ["Example.COM.:8080", { host: "example.com", port: 8080 }],
    ["intranet", { host: "intranet" }],
    ["intranet:1", { host: "intranet", port: 1 }],
    ["intranet:65535", { host: "intranet", port: 65535 }],
    ["127.0.0.1:8080", { host: "127.0.0.1", port: 8080 }],
    ["127.1", { host: "127.0.0.1" }],
    ["[::1]:8080", { host: "::1", port: 8080 }],
    ["[::1]", { host: "::1" }],
    ["::1", { host: "::1" }],
    ["[0:0::1]", { host: "::1" }],
    ["FD00::5", { host: "fd00::5" }],
    ["[::ffff:127.0.0.1]:80", { host: "::ffff:7f00:1", port: 80 }],
  ])("%p", (spec, expected) => {
    expect(parseAllowTarget(spec)).toEqual(expected);
  });

  test.each([
    ["", "is not HOST or HOST:PORT."],
    ["host:", "is not HOST or HOST:PORT."],
    ["host:abc", "is not HOST or HOST:PORT."],
    [":8080", "is not HOST or HOST:PORT."],
    ["http://host", "is not HOST or HOST:PORT."],
    ["[::1", "is not a valid IPv6 address."],
    ["host:0", "has a port outside 1-65535."],
    ["host:65536", "has a port outside 1-65535."],
    ["host:000080", "has a port outside 1-65535."],
    ["user@host", "is not a valid host name."],
    ["host/path", "is not a valid host name."],
    ["a b", "is not a valid host name."],
    ["1.2.3.4.5", "is not a valid host name."],
    ["[nothex]:80", "is not a valid IPv6 address."],
    ["::zz", "is not a valid IPv6 address."],
  ])("%p is refused", (spec, why) => {
    expect(() => parseAllowTarget(spec)).toThrow(`"${spec}" ${why}`);
  });
});

test("systemResolver answers an IP literal with itself (no DNS traffic)", async () => {
  expect(await systemResolver("127.0.0.1")).toEqual([{ address: "127.0.0.1", family: 4 }]);
});
