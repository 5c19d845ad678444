import { describe, expect, test } from "bun:test";
import { parsePasswordOptions, type Fields } from "../../src/password/params.ts";

const LENGTH = "length must be an integer from 8 to 128.";
const NO_CLASS = "At least one character type (uppercase, lowercase, numbers, symbols) must be selected.";
const bool = (name: string) => `${name} must be one of: true, false, 1, 0.`;

const errorOf = (fields: Fields) => {
  const parsed = parsePasswordOptions(fields);
  return parsed.ok ? undefined : parsed.error;
};
const optionsOf = (fields: Fields) => {
  const parsed = parsePasswordOptions(fields);
  if (!parsed.ok) throw new Error(`unexpected error: ${parsed.error}`);
  return parsed.options;
};

describe("defaults", () => {
  test("no field: length 16, all four classes, no exclusion fields", () => {
    expect(optionsOf({})).toEqual({
      length: 16,
      classes: { uppercase: true, lowercase: true, numbers: true, symbols: true },
    });
  });

  test("unknown fields are ignored", () => {
    expect(optionsOf({ foo: "bar", Length: "x", SYMBOLS: "no" })).toEqual(optionsOf({}));
  });
});

describe("length", () => {
  test.each([
    ["8", 8],
    ["16", 16],
    ["128", 128],
    ["0016", 16],
    [8, 8],
    [128, 128],
    [16.0, 16],
  ] as const)("accepts %p as %p", (value, expected) => {
    expect(optionsOf({ length: value }).length).toBe(expected);
  });

  test("refuses anything but decimal digits or a JSON integer, and values outside 8..128", () => {
    const refused: unknown[] = [
      "7",
      "129",
      "0",
      "-8",
      "+16",
      "16.0",
      "16.5",
      "1e1",
      " 16",
      "16 ",
      "",
      "abc",
      "0x10",
      "١٦",
      "99999999999999999999",
      7,
      129,
      16.5,
      -16,
      Number.NaN,
      Infinity,
      true,
      null,
      [16],
      { value: 16 },
    ];
    for (const value of refused) expect({ value, error: errorOf({ length: value }) }).toEqual({ value, error: LENGTH });
  });
});

describe("booleans", () => {
  for (const name of ["uppercase", "lowercase", "numbers", "symbols", "exclude_similar"]) {
    test(`${name} accepts true/false/1/0 in any case, and JSON booleans and 1/0`, () => {
      const value = (raw: unknown) => {
        const options = optionsOf({ [name]: raw, uppercase: name === "uppercase" ? raw : "1" });
        return name === "exclude_similar" ? options.excludeSimilar : options.classes[name as "uppercase"];
      };
      for (const raw of ["true", "TRUE", "True", "tRuE", "1", true, 1]) expect(value(raw)).toBe(true);
      // With uppercase kept on, turning any one class off still leaves a class selected.
      if (name !== "uppercase") for (const raw of ["false", "FALSE", "False", "0", false, 0]) expect(value(raw)).toBe(false);
    });

    test.each(["", "yes", "no", "on", "off", "t", "f", "2", "-1", "01", " true", "true ", "truee", "1.0"])(
      `${name} refuses the text %p`,
      (raw) => {
        expect(errorOf({ [name]: raw })).toBe(bool(name));
      },
    );

    test(`${name} refuses other JSON values`, () => {
      for (const raw of [2, -1, 0.5, null, [true], { v: 1 }])
        expect({ raw, error: errorOf({ [name]: raw }) }).toEqual({ raw, error: bool(name) });
    });
  }
});

describe("exclude", () => {
  test("is kept as sent, and is absent when not sent", () => {
    expect(optionsOf({ exclude: "abc" }).exclude).toBe("abc");
    expect(optionsOf({ exclude: "" }).exclude).toBe("");
    expect("exclude" in optionsOf({})).toBe(false);
    expect("excludeSimilar" in optionsOf({})).toBe(false);
  });

  test("refuses a non-string", () => {
    for (const raw of [1, true, null, ["a"], { a: 1 }]) {
      expect({ raw, error: errorOf({ exclude: raw }) }).toEqual({ raw, error: "exclude must be a string." });
    }
  });

  test("allows 128 code points, also when they take two UTF-16 units each", () => {
    expect(optionsOf({ exclude: "a".repeat(128) }).exclude).toHaveLength(128);
    expect(optionsOf({ exclude: "😀".repeat(128) }).exclude).toHaveLength(256);
    expect(optionsOf({ exclude: `${"😀".repeat(127)}a` }).exclude).toHaveLength(255);
  });

  test("refuses 129 code points", () => {
    const tooLong = "exclude must be at most 128 characters.";
    expect(errorOf({ exclude: "a".repeat(129) })).toBe(tooLong);
    expect(errorOf({ exclude: "😀".repeat(129) })).toBe(tooLong);
    expect(errorOf({ exclude: `${"😀".repeat(128)}a` })).toBe(tooLong);
    expect(errorOf({ exclude: "a".repeat(100_000) })).toBe(tooLong);
  });
});

describe("no class selected", () => {
  test("all four off, in any spelling", () => {
    expect(errorOf({ uppercase: "false", lowercase: "0", numbers: false, symbols: 0 })).toBe(NO_CLASS);
  });

  test("one class left on is enough", () => {
    for (const name of ["uppercase", "lowercase", "numbers", "symbols"]) {
      const fields: Record<string, string> = { uppercase: "0", lowercase: "0", numbers: "0", symbols: "0", [name]: "1" };
      expect(optionsOf(fields).classes).toEqual({
        uppercase: name === "uppercase",
        lowercase: name === "lowercase",
        numbers: name === "numbers",
        symbols: name === "symbols",
      });
    }
  });
});

describe("check order", () => {
  test("length first, then the booleans in order, then exclude, then no class", () => {
    const all = {
      length: "7",
      uppercase: "x",
      lowercase: "x",
      numbers: "x",
      symbols: "x",
      exclude_similar: "x",
      exclude: 5,
    };
    const steps: [keyof typeof all, unknown, string][] = [
      ["length", "8", bool("uppercase")],
      ["uppercase", "0", bool("lowercase")],
      ["lowercase", "0", bool("numbers")],
      ["numbers", "0", bool("symbols")],
      ["symbols", "0", bool("exclude_similar")],
      ["exclude_similar", "1", "exclude must be a string."],
      ["exclude", "x".repeat(129), "exclude must be at most 128 characters."],
      ["exclude", "x", NO_CLASS],
    ];
    const fields: Record<string, unknown> = { ...all };
    expect(errorOf(fields)).toBe(LENGTH);
    for (const [name, fixed, next] of steps) {
      fields[name] = fixed;
      expect(errorOf(fields)).toBe(next);
    }
  });
});
