import { describe, expect, test } from "bun:test";
import { parsePassphraseOptions, parsePasswordOptions, parseRequest, type Fields } from "../../src/password/params.ts";

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

describe("type", () => {
  const typeError = "type must be one of: password, passphrase.";
  const requestOf = (fields: Fields) => {
    const parsed = parseRequest(fields);
    if (!parsed.ok) throw new Error(`unexpected error: ${parsed.error}`);
    return parsed.request;
  };

  test("password by default; password and passphrase as sent; typeSent says whether it was", () => {
    expect(requestOf({})).toMatchObject({ type: "password", typeSent: false });
    expect(requestOf({ type: "password" })).toMatchObject({ type: "password", typeSent: true });
    expect(requestOf({ type: "passphrase" })).toMatchObject({ type: "passphrase" });
  });

  test("refuses anything else, case included", () => {
    for (const raw of ["", "Password", "PASSPHRASE", "pin", " password", "passphrase ", 1, true, null, ["password"]]) {
      const parsed = parseRequest({ type: raw });
      expect({ raw, error: parsed.ok ? undefined : parsed.error }).toEqual({ raw, error: typeError });
    }
  });

  test("a passphrase ignores the password fields and a password the passphrase fields", () => {
    expect(requestOf({ type: "passphrase", length: "5", symbols: "maybe", min_symbols: "999", symbol_set: "abc", exclude: 5 })).toEqual({
      type: "passphrase",
      options: { words: 6, separator: "-", capitalize: false, includeNumber: false },
    });
    expect(requestOf({ words: "99", separator: "toolong", capitalize: "maybe", include_number: 7 })).toEqual({
      type: "password",
      options: { length: 16, classes: { uppercase: true, lowercase: true, numbers: true, symbols: true } },
      typeSent: false,
    });
  });
});

describe("count", () => {
  const countError = "count must be an integer from 1 to 100.";

  test("1 to 100, as text or a JSON integer; absent when not sent", () => {
    for (const [raw, expected] of [
      ["1", 1],
      ["100", 100],
      ["042", 42],
      [7, 7],
      [100.0, 100],
    ] as const) {
      const parsed = parseRequest({ count: raw });
      expect(parsed.ok && parsed.request.count).toBe(expected);
    }
    const none = parseRequest({});
    expect(none.ok && "count" in none.request).toBe(false);
  });

  test("refuses everything else, for passwords and passphrases alike", () => {
    for (const raw of ["0", "101", "1000000000000", "", "-1", "+5", "1e2", "2.5", " 5", 0, 101, 2.5, true, null, ["5"]]) {
      for (const type of ["password", "passphrase"]) {
        const parsed = parseRequest({ type, count: raw });
        expect({ raw, type, error: parsed.ok ? undefined : parsed.error }).toEqual({ raw, type, error: countError });
      }
    }
  });
});

describe("minimums", () => {
  const range = (name: string, length: number) => `min_${name} must be an integer from 1 to ${length}.`;

  test("are kept as sent, by class, and absent when none is sent", () => {
    expect(optionsOf({ min_uppercase: "2", min_symbols: 3 }).minimums).toEqual({ uppercase: 2, symbols: 3 });
    expect("minimums" in optionsOf({})).toBe(false);
  });

  test("range from 1 to the length used: the default 16 or the length sent", () => {
    for (const name of ["uppercase", "lowercase", "numbers", "symbols"]) {
      const field = `min_${name}`;
      expect(optionsOf({ [field]: "1" }).minimums).toEqual({ [name]: 1 });
      // Alone, a class can take all but the three characters the other classes need.
      expect(optionsOf({ [field]: "13" }).minimums).toEqual({ [name]: 13 });
      expect(optionsOf({ length: "40", [field]: 37 }).minimums).toEqual({ [name]: 37 });
      for (const raw of ["0", "17", "", "abc", "-1", "+2", "1.5", "2e1", 0, 17, 1.5, true, null, [2]]) {
        expect({ raw, error: errorOf({ [field]: raw }) }).toEqual({ raw, error: range(name, 16) });
      }
      expect(errorOf({ length: "20", [field]: "21" })).toBe(range(name, 20));
      expect(errorOf({ length: "128", [field]: "129" })).toBe(range(name, 128));
      expect(errorOf({ length: "128", [field]: "99999999999999999999" })).toBe(range(name, 128));
    }
  });

  test("a class that is off takes no minimum", () => {
    expect(errorOf({ numbers: "false", min_numbers: "2" })).toBe("min_numbers needs numbers=true.");
    expect(errorOf({ uppercase: "0", min_uppercase: "1" })).toBe("min_uppercase needs uppercase=true.");
    expect(errorOf({ symbols: false, min_symbols: 1, min_lowercase: 2 })).toBe("min_symbols needs symbols=true.");
  });

  test("the minimums, with 1 for every other selected class, must fit in the length", () => {
    const tooMany = "The minimums add up to more than length.";
    expect(errorOf({ length: "8", min_symbols: "6" })).toBe(tooMany); // 6 + 1 + 1 + 1
    expect(optionsOf({ length: "8", min_symbols: "5" }).minimums).toEqual({ symbols: 5 });
    expect(errorOf({ length: "8", min_symbols: "4", min_numbers: "3" })).toBe(tooMany); // 4 + 3 + 1 + 1
    expect(optionsOf({ length: "8", uppercase: "0", lowercase: "0", min_symbols: "4", min_numbers: "4" }).minimums).toEqual({
      symbols: 4,
      numbers: 4,
    });
    expect(errorOf({ length: "8", uppercase: "0", lowercase: "0", min_symbols: "5", min_numbers: "4" })).toBe(tooMany);
    expect(optionsOf({ length: "128", min_uppercase: 32, min_lowercase: 32, min_numbers: 32, min_symbols: 32 }).minimums).toEqual({
      uppercase: 32,
      lowercase: 32,
      numbers: 32,
      symbols: 32,
    });
  });
});

describe("symbol_set", () => {
  const setError = "symbol_set must be 1 to 32 distinct ASCII punctuation characters.";
  const PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

  test("accepts 1 to 32 distinct ASCII punctuation characters, the four left out by default too", () => {
    for (const raw of ["!", "@#", "\"'\\`", PUNCTUATION, [...PUNCTUATION].reverse().join("")]) {
      expect(optionsOf({ symbol_set: raw }).symbolSet).toBe(raw);
    }
    expect(PUNCTUATION).toHaveLength(32);
    expect("symbolSet" in optionsOf({})).toBe(false);
  });

  test("refuses empty, repeated, non-punctuation, non-ASCII and non-string values", () => {
    for (const raw of ["", "!!", "!@!", `${PUNCTUATION}!`, "a", "!a", "1", " ", "!\t", "é", "！", "😀", 5, true, null, ["!"], { "!": 1 }]) {
      expect({ raw, error: errorOf({ symbol_set: raw }) }).toEqual({ raw, error: setError });
    }
  });
});

describe("passphrase fields", () => {
  const passphraseOf = (fields: Fields) => {
    const parsed = parsePassphraseOptions(fields);
    if (!parsed.ok) throw new Error(`unexpected error: ${parsed.error}`);
    return parsed.options;
  };
  const passphraseError = (fields: Fields) => {
    const parsed = parsePassphraseOptions(fields);
    return parsed.ok ? undefined : parsed.error;
  };

  test("defaults: 6 words, '-', no capitals, no number", () => {
    expect(passphraseOf({})).toEqual({ words: 6, separator: "-", capitalize: false, includeNumber: false });
  });

  test("words: 3 to 20", () => {
    expect(passphraseOf({ words: "3" }).words).toBe(3);
    expect(passphraseOf({ words: 20 }).words).toBe(20);
    for (const raw of ["2", "21", "", "six", "6.0", "-6", 2, 21, 6.5, true, null]) {
      expect({ raw, error: passphraseError({ words: raw }) }).toEqual({ raw, error: "words must be an integer from 3 to 20." });
    }
  });

  test("separator: 0 to 3 printable ASCII characters, space and tilde included", () => {
    for (const raw of ["", " ", "_", "---", " ~ ", "abc", ".:."]) expect(passphraseOf({ separator: raw }).separator).toBe(raw);
    for (const raw of ["----", "\t", "\n", "\u007f", "é", "–", "😀", 5, null, true, ["-"]]) {
      expect({ raw, error: passphraseError({ separator: raw }) }).toEqual({
        raw,
        error: "separator must be at most 3 printable ASCII characters.",
      });
    }
  });

  test("capitalize and include_number: the booleans' rules and error text", () => {
    expect(passphraseOf({ capitalize: "TRUE", include_number: 1 })).toMatchObject({ capitalize: true, includeNumber: true });
    expect(passphraseOf({ capitalize: false, include_number: "0" })).toMatchObject({ capitalize: false, includeNumber: false });
    expect(passphraseError({ capitalize: "yes" })).toBe("capitalize must be one of: true, false, 1, 0.");
    expect(passphraseError({ include_number: 2 })).toBe("include_number must be one of: true, false, 1, 0.");
  });
});

describe("check order of the new fields", () => {
  const errorOfRequest = (fields: Fields) => {
    const parsed = parseRequest(fields);
    return parsed.ok ? undefined : parsed.error;
  };

  test("password: type, ..., exclude, symbol_set, minimum ranges, no class, minimum for an off class, sum, count", () => {
    const fields: Record<string, unknown> = {
      type: "pin",
      exclude: 5,
      symbol_set: "abc",
      min_numbers: "0",
      min_symbols: "99",
      uppercase: "0",
      lowercase: "0",
      numbers: "0",
      symbols: "0",
      count: "0",
    };
    const steps: [string, unknown, string][] = [
      ["type", "password", "exclude must be a string."],
      ["exclude", "", "symbol_set must be 1 to 32 distinct ASCII punctuation characters."],
      ["symbol_set", "!", "min_numbers must be an integer from 1 to 16."],
      ["min_numbers", "2", "min_symbols must be an integer from 1 to 16."],
      ["min_symbols", "15", NO_CLASS],
      ["uppercase", "1", "min_numbers needs numbers=true."],
      ["numbers", "1", "min_symbols needs symbols=true."],
      ["symbols", "1", "The minimums add up to more than length."],
      ["min_symbols", "12", "count must be an integer from 1 to 100."],
    ];
    expect(errorOfRequest(fields)).toBe("type must be one of: password, passphrase.");
    for (const [name, fixed, next] of steps) {
      fields[name] = fixed;
      expect({ name, error: errorOfRequest(fields) }).toEqual({ name, error: next });
    }
    fields.count = "100";
    expect(errorOfRequest(fields)).toBeUndefined();
  });

  test("passphrase: type, words, separator, capitalize, include_number, count", () => {
    const fields: Record<string, unknown> = {
      type: "Passphrase",
      words: "2",
      separator: "long",
      capitalize: "x",
      include_number: "x",
      count: "x",
    };
    const steps: [string, unknown, string][] = [
      ["type", "passphrase", "words must be an integer from 3 to 20."],
      ["words", "3", "separator must be at most 3 printable ASCII characters."],
      ["separator", "", "capitalize must be one of: true, false, 1, 0."],
      ["capitalize", "1", "include_number must be one of: true, false, 1, 0."],
      ["include_number", "1", "count must be an integer from 1 to 100."],
    ];
    expect(errorOfRequest(fields)).toBe("type must be one of: password, passphrase.");
    for (const [name, fixed, next] of steps) {
      fields[name] = fixed;
      expect({ name, error: errorOfRequest(fields) }).toEqual({ name, error: next });
    }
    fields.count = "2";
    expect(errorOfRequest(fields)).toBeUndefined();
  });
});
