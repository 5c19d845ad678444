// The decision to start `genapi crawl` again without JavaScriptCore's FTL tier (src/commands/ftl.ts);
// the executable doing it is in test/e2e/crawl-cli.e2e.test.ts.
import { describe, expect, test } from "bun:test";
import { crawlWithoutFtl, FTL_VARIABLE } from "../../src/commands/ftl.ts";

describe("crawlWithoutFtl", () => {
  test("the executable's crawl: the whole environment, the variable added as 0", () => {
    expect(crawlWithoutFtl(["crawl", "https://example.com/"], { HOME: "/h", EMPTY: "", GONE: undefined }, true)).toEqual({
      HOME: "/h",
      EMPTY: "",
      [FTL_VARIABLE]: "0",
    });
  });

  test("goes on as it is: another command, no command, the sources, or the variable already set either way", () => {
    expect(crawlWithoutFtl(["serve"], {}, true)).toBeUndefined();
    expect(crawlWithoutFtl(["keys", "crawl"], {}, true)).toBeUndefined();
    expect(crawlWithoutFtl([], {}, true)).toBeUndefined();
    expect(crawlWithoutFtl(["crawl", "https://example.com/"], {}, false)).toBeUndefined();
    expect(crawlWithoutFtl(["crawl"], { [FTL_VARIABLE]: "1" }, true)).toBeUndefined();
    expect(crawlWithoutFtl(["crawl"], { [FTL_VARIABLE]: "0" }, true)).toBeUndefined();
  });
});
