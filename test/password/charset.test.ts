import { describe, expect, test } from "bun:test";
import { CHARSETS, CLASS_NAMES, SIMILAR, withoutCharacters } from "../../src/password/charset.ts";

const asciiRange = (from: string, to: string) =>
  Array.from({ length: to.charCodeAt(0) - from.charCodeAt(0) + 1 }, (_, i) => String.fromCharCode(from.charCodeAt(0) + i)).join("");

describe("character classes", () => {
  test("are the four classes in contract order", () => {
    expect([...CLASS_NAMES]).toEqual(["uppercase", "lowercase", "numbers", "symbols"]);
  });

  test("letters and digits are exactly A-Z, a-z, 0-9", () => {
    expect(CHARSETS.uppercase).toBe(asciiRange("A", "Z"));
    expect(CHARSETS.lowercase).toBe(asciiRange("a", "z"));
    expect(CHARSETS.numbers).toBe(asciiRange("0", "9"));
  });

  test("symbols are exactly the 28 of the contract", () => {
    expect(CHARSETS.symbols).toBe("!#$%&()*+,-./:;<=>?@[]^_{|}~");
    expect(CHARSETS.symbols).toHaveLength(28);
    expect(new Set(CHARSETS.symbols).size).toBe(28);
  });

  test("symbols are printable ASCII punctuation less \" ' \\ and the backtick", () => {
    const printable = asciiRange("!", "~");
    const punctuation = [...printable].filter((ch) => !/[A-Za-z0-9]/.test(ch));
    const expected = punctuation.filter((ch) => !`"'\\\``.includes(ch)).join("");
    expect(CHARSETS.symbols).toBe(expected);
  });

  test("the look-alikes are 0 O 1 l I |", () => {
    expect([...SIMILAR].sort()).toEqual(["0", "1", "I", "O", "l", "|"].sort());
  });
});

describe("withoutCharacters", () => {
  test("removes the listed characters and keeps the order of the rest", () => {
    expect(withoutCharacters("0123456789", new Set("7130"))).toBe("245689");
  });

  test("keeps everything for an empty set and nothing when all are listed", () => {
    expect(withoutCharacters("abc", new Set())).toBe("abc");
    expect(withoutCharacters("abc", new Set("cba"))).toBe("");
  });
});
