import { describe, expect, test } from "bun:test";
import { clientAddress, clientAddressResolver, parseTrustedProxies, quotaSubject } from "../../src/quota/client-address.ts";

const NONE = parseTrustedProxies("");

describe("parseTrustedProxies", () => {
  test("accepts CIDRs and plain addresses, comma-separated or as a list", () => {
    expect(parseTrustedProxies("10.0.0.0/8, 192.168.1.7,::1 , 2001:db8::/32,").ranges.map(([ip, bits]) => `${ip}/${bits}`)).toEqual([
      "10.0.0.0/8",
      "192.168.1.7/32",
      "::1/128",
      "2001:db8::/32",
    ]);
    expect(parseTrustedProxies(["10.0.0.0/8", "172.16.0.0/12,127.0.0.1"]).ranges).toHaveLength(3);
    expect(parseTrustedProxies("").ranges).toEqual([]);
  });

  test("turns IPv4-mapped ranges into IPv4 ranges", () => {
    expect(parseTrustedProxies("::ffff:10.0.0.0/104,::ffff:192.0.2.1").ranges.map(([ip, bits]) => `${ip}/${bits}`)).toEqual([
      "10.0.0.0/8",
      "192.0.2.1/32",
    ]);
  });

  test("names the entry it cannot read", () => {
    for (const bad of [
      "10.0.0.0/33",
      "10.0.0/8",
      "foo",
      "127.1",
      "0x7f.0.0.1",
      "10.0.0.0/8/1",
      "::/129",
      "10.0.0.0/-1",
      "10.0.0.0/",
      "10.0.0.0/ 8",
    ]) {
      expect(() => parseTrustedProxies(`127.0.0.1,${bad}`)).toThrow(`"${bad}" is not an IP address or CIDR range.`);
    }
  });
});

describe("clientAddress", () => {
  const proxies = parseTrustedProxies("10.0.0.0/8,::1");

  test("is the peer, and ignores X-Forwarded-For from an untrusted peer", () => {
    expect(clientAddress("203.0.113.9", null, NONE)).toBe("203.0.113.9");
    expect(clientAddress("203.0.113.9", "198.51.100.1", NONE)).toBe("203.0.113.9");
    expect(clientAddress("203.0.113.9", "198.51.100.1", proxies)).toBe("203.0.113.9");
    expect(clientAddress("127.0.0.1", "198.51.100.1", proxies)).toBe("127.0.0.1");
  });

  test("normalises IPv4-mapped and long IPv6 spellings", () => {
    expect(clientAddress("::ffff:203.0.113.9", null, NONE)).toBe("203.0.113.9");
    expect(clientAddress("::ffff:cb00:7109", null, NONE)).toBe("203.0.113.9");
    expect(clientAddress("2001:0DB8:0000:0000:0000:0000:0000:0001", null, NONE)).toBe("2001:db8::1");
  });

  test("a trusted peer's X-Forwarded-For gives the rightmost untrusted entry", () => {
    expect(clientAddress("10.0.0.1", "198.51.100.1", proxies)).toBe("198.51.100.1");
    expect(clientAddress("::ffff:10.0.0.1", "198.51.100.1", proxies)).toBe("198.51.100.1");
    expect(clientAddress("::1", "2001:db8::5", proxies)).toBe("2001:db8::5");
    // The client spoofed the leftmost entry; the proxies appended the real one and their own.
    expect(clientAddress("10.0.0.1", "6.6.6.6, 198.51.100.1, 10.0.0.2, 10.9.9.9", proxies)).toBe("198.51.100.1");
    // Entries arrive from several header lines joined with ", ".
    expect(clientAddress("10.0.0.1", "6.6.6.6,198.51.100.1 ,  10.0.0.2", proxies)).toBe("198.51.100.1");
    expect(clientAddress("10.0.0.1", "::ffff:198.51.100.1", proxies)).toBe("198.51.100.1");
    expect(clientAddress("10.0.0.1", "::ffff:10.0.0.3, 10.0.0.2", proxies)).toBe("10.0.0.3");
  });

  test("when every entry is trusted, the leftmost", () => {
    expect(clientAddress("10.0.0.1", "10.0.0.5, 10.0.0.2", proxies)).toBe("10.0.0.5");
  });

  test("an unreadable entry stops the walk at the last trusted hop", () => {
    expect(clientAddress("10.0.0.1", "garbage", proxies)).toBe("10.0.0.1");
    expect(clientAddress("10.0.0.1", "", proxies)).toBe("10.0.0.1");
    expect(clientAddress("10.0.0.1", "198.51.100.1, garbage, 10.0.0.2", proxies)).toBe("10.0.0.2");
    expect(clientAddress("10.0.0.1", "198.51.100.1, , 10.0.0.2", proxies)).toBe("10.0.0.2");
    expect(clientAddress("10.0.0.1", "198.51.100.1, 127.1", proxies)).toBe("10.0.0.1");
    // Garbage left of the client (written by the client itself) does not matter.
    expect(clientAddress("10.0.0.1", "garbage, 198.51.100.1, 10.0.0.2", proxies)).toBe("198.51.100.1");
  });

  test("reads entries with ports and brackets", () => {
    expect(clientAddress("10.0.0.1", "198.51.100.1:4711", proxies)).toBe("198.51.100.1");
    expect(clientAddress("10.0.0.1", "[2001:db8::7]:4711", proxies)).toBe("2001:db8::7");
    expect(clientAddress("10.0.0.1", "[2001:db8::7]", proxies)).toBe("2001:db8::7");
  });

  test("without a peer address: unknown", () => {
    expect(clientAddress(null, "198.51.100.1", proxies)).toBe("unknown");
  });
});

describe("quotaSubject", () => {
  test("IPv4 as it is, IPv6 by its /64", () => {
    expect(quotaSubject("203.0.113.9")).toBe("203.0.113.9");
    expect(quotaSubject("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(quotaSubject("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(quotaSubject("2001:DB8:1:2::ffff")).toBe("2001:db8:1:2::/64");
    expect(quotaSubject("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(quotaSubject("2001:db8::1")).toBe("2001:db8::/64");
    expect(quotaSubject("::1")).toBe("::/64");
    expect(quotaSubject("unknown")).toBe("unknown");
  });
});

describe("clientAddressResolver", () => {
  test("gives clientAddress's answers, remembering untrusted peers", () => {
    const trusted = parseTrustedProxies("10.0.0.0/8");
    const resolve = clientAddressResolver(trusted, 2);
    expect(resolve("::ffff:198.51.100.7", "203.0.113.1")).toBe("198.51.100.7");
    expect(resolve("::ffff:198.51.100.7", null)).toBe("198.51.100.7");
    expect(resolve("10.1.2.3", "203.0.113.1")).toBe("203.0.113.1");
    expect(resolve("10.1.2.3", "203.0.113.2, 10.9.9.9")).toBe("203.0.113.2");
    expect(resolve("10.1.2.3", null)).toBe("10.1.2.3");
    expect(resolve("2001:db8::1", "203.0.113.1")).toBe("2001:db8::1");
    expect(resolve(null, "203.0.113.1")).toBe("unknown");
  });
});
