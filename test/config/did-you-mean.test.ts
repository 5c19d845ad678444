import { expect, test } from "bun:test";
import { closest, didYouMean, editDistance } from "../../src/config/did-you-mean.ts";

test("edit distance counts insertions, deletions, substitutions and a swapped pair as one edit each", () => {
  expect(editDistance("max-pages", "max-pages")).toBe(0);
  expect(editDistance("max-page", "max-pages")).toBe(1);
  expect(editDistance("prot", "port")).toBe(1);
  expect(editDistance("jsno", "json")).toBe(1);
  expect(editDistance("daily-limt", "daily-limit")).toBe(1);
  expect(editDistance("", "db")).toBe(2);
  expect(editDistance("bogus", "host")).toBe(4);
});

test("a suggestion only when a known name is at most 2 edits away and fewer than half the typed length", () => {
  const flags = ["port", "host", "db", "max-pages", "max-crawls", "help"];
  expect(closest("max-page", flags)).toBe("max-pages");
  expect(closest("prot", flags)).toBe("port");
  expect(closest("bogus", flags)).toBeUndefined();
  expect(closest("x", flags)).toBeUndefined(); // "db" is 2 edits away, but "x" is one letter
  expect(closest("dv", flags)).toBe("db");
  expect(closest("max-crawl", flags)).toBe("max-crawls");
  expect(didYouMean("hepl", flags, "--")).toBe(" (did you mean --help?)");
  expect(didYouMean("zzzz", flags, "--")).toBe("");
});
