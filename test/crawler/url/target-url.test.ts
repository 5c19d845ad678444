import { describe, expect, test } from "bun:test";
import { INVALID_URL_MESSAGE, parseTargetUrl } from "../../../src/crawler/url/target-url.ts";

describe("parseTargetUrl", () => {
  test("the message is the contract's", () => {
    expect(INVALID_URL_MESSAGE).toBe("Invalid URL. Provide a full URL that includes http:// or https://.");
  });

  test.each([
    ["https://example.com/", "https://example.com/"],
    ["http://example.com", "http://example.com/"],
    ["HTTPS://Example.COM:8443/a/b?q=1#frag", "https://example.com:8443/a/b?q=1#frag"],
    ["http://127.0.0.1:8080/", "http://127.0.0.1:8080/"],
    ["http://[::1]/", "http://[::1]/"],
    ["http://2130706433/", "http://127.0.0.1/"],
    ["http://example.com\\path", "http://example.com/path"],
  ])("accepts %p", (raw, href) => {
    expect(parseTargetUrl(raw)?.href).toBe(href);
  });

  test.each([
    ["userinfo", "http://user:pw@example.com/"],
    ["user only", "http://user@example.com/"],
    ["empty userinfo", "http://@example.com/"],
    ["userinfo hidden by a tab", "http://user\t@example.com/"],
    ["ftp", "ftp://example.com/"],
    ["javascript", "javascript:alert(1)"],
    ["relative", "/index.html"],
    ["scheme-relative", "//example.com/"],
    ["no scheme", "example.com"],
    ["no slashes", "http:example.com"],
    ["no host", "http:///x"],
    ["backslashes", "http:\\\\example.com"],
    ["empty host", "http://"],
    ["port only", "http://:80/"],
    ["bad IPv4", "http://1.2.3.4.5/"],
    ["leading space", " http://example.com/"],
    ["trailing newline", "http://example.com/\n"],
    ["empty", ""],
  ])("refuses %s", (_, raw) => {
    expect(parseTargetUrl(raw)).toBeNull();
  });

  test.each([[undefined], [null], [42], [{ url: "http://example.com/" }], [["http://example.com/"]]])(
    "refuses the non-string %p",
    (raw) => {
      expect(parseTargetUrl(raw)).toBeNull();
    },
  );

  test("refuses a URL that is 2,048 characters or fewer as sent but longer once normalised", () => {
    const base = "https://example.com/";
    expect(parseTargetUrl(base + "é".repeat(2048 - base.length))).toBeNull();
    expect(parseTargetUrl(base + "é".repeat(Math.floor((2048 - base.length) / 6)))).not.toBeNull();
    expect(parseTargetUrl(`${base}?q=${"[".repeat(700)}`)).toBeNull();
    expect(parseTargetUrl(`${base}?q=${"[".repeat(600)}`)).not.toBeNull();
  });

  test("takes 2,048 characters and refuses 2,049", () => {
    const base = "http://example.com/";
    const longest = base + "a".repeat(2048 - base.length);
    expect(longest.length).toBe(2048);
    expect(parseTargetUrl(longest)?.href).toBe(longest);
    expect(parseTargetUrl(`${longest}a`)).toBeNull();
  });
});
