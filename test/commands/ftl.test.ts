// The decision to start `genapi crawl` and `genapi serve` again without JavaScriptCore's FTL tier
// (src/commands/ftl.ts); the executable doing it is in test/e2e/crawl-cli.e2e.test.ts and
// test/e2e/lifecycle.e2e.test.ts.
import { describe, expect, test } from "bun:test";
import { FTL_VARIABLE, withoutFtl } from "../../src/commands/ftl.ts";

describe("withoutFtl", () => {
  test("the executable's crawl and serve (their --help too): the whole environment, the variable added as 0", () => {
    for (const args of [["crawl", "https://example.com/"], ["serve", "--port", "0"], ["serve"], ["serve", "--help"], ["crawl", "-h"]]) {
      expect(withoutFtl(args, { HOME: "/h", EMPTY: "", GONE: undefined }, true)).toEqual({
        HOME: "/h",
        EMPTY: "",
        [FTL_VARIABLE]: "0",
      });
    }
  });

  test("goes on as it is: another command, no command, the sources, or the variable already set either way", () => {
    expect(withoutFtl(["keys", "crawl"], {}, true)).toBeUndefined();
    expect(withoutFtl(["keys", "serve"], {}, true)).toBeUndefined();
    expect(withoutFtl(["--help"], {}, true)).toBeUndefined();
    expect(withoutFtl(["--version"], {}, true)).toBeUndefined();
    expect(withoutFtl([], {}, true)).toBeUndefined();
    expect(withoutFtl(["crawl", "https://example.com/"], {}, false)).toBeUndefined();
    expect(withoutFtl(["serve"], {}, false)).toBeUndefined();
    expect(withoutFtl(["crawl"], { [FTL_VARIABLE]: "1" }, true)).toBeUndefined();
    expect(withoutFtl(["serve"], { [FTL_VARIABLE]: "0" }, true)).toBeUndefined();
    expect(withoutFtl(["serve"], { [FTL_VARIABLE]: "1" }, true)).toBeUndefined();
  });
});
