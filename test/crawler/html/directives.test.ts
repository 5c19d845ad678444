import { expect, test } from "bun:test";
import { headerDirectives, metaDirectives } from "../../../src/crawler/html/directives.ts";

test("meta content: comma-separated, case-insensitive, none = noindex + nofollow", () => {
  expect(metaDirectives("NOINDEX")).toEqual({ noindex: true, nofollow: false });
  expect(metaDirectives("index, nofollow")).toEqual({ noindex: false, nofollow: true });
  expect(metaDirectives(" none ")).toEqual({ noindex: true, nofollow: true });
  expect(metaDirectives("all, max-snippet:20")).toEqual({ noindex: false, nofollow: false });
});

test("X-Robots-Tag without a bot prefix applies to us", () => {
  expect(headerDirectives("noindex", "genapi")).toEqual({ noindex: true, nofollow: false });
  expect(headerDirectives("noindex, nofollow", "genapi")).toEqual({ noindex: true, nofollow: true });
  expect(headerDirectives("unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow", "genapi")).toEqual({ noindex: false, nofollow: true });
  expect(headerDirectives(null, "genapi")).toEqual({ noindex: false, nofollow: false });
});

test("X-Robots-Tag for genapi applies; another bot's prefix covers its directives up to the next prefix", () => {
  expect(headerDirectives("GenAPI: noindex", "genapi")).toEqual({ noindex: true, nofollow: false });
  expect(headerDirectives("googlebot: noindex, nofollow", "genapi")).toEqual({ noindex: false, nofollow: false });
  expect(headerDirectives("googlebot: noindex, genapi: nofollow", "genapi")).toEqual({ noindex: false, nofollow: true });
  expect(headerDirectives("otherbot: none, genapi: none", "genapi")).toEqual({ noindex: true, nofollow: true });
});
