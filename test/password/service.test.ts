import { describe, expect, test } from "bun:test";
import { createRandom, type Random } from "../../src/password/random.ts";
import { generateFromFields, type PasswordSuccess } from "../../src/password/service.ts";
import type { Fields } from "../../src/password/params.ts";

const random = createRandom();

function success(fields: Fields): PasswordSuccess {
  const result = generateFromFields(fields, random);
  if (result.status !== 200) throw new Error(`unexpected ${result.status}: ${result.body.error}`);
  if (!("password" in result.body) || result.body.parameters.type === "passphrase") throw new Error("not a single password");
  return result.body as PasswordSuccess;
}
const failure = (fields: Fields) => {
  const result = generateFromFields(fields, random);
  return result.status === 400 ? result.body : undefined;
};

describe("generateFromFields", () => {
  test("answers the seed's fields in order, with entropy_bits last", () => {
    const body = success({});
    expect(Object.keys(body)).toEqual(["success", "password", "length", "parameters", "entropy_bits"]);
    expect(Object.keys(body.parameters)).toEqual(["requested_length", "uppercase", "lowercase", "numbers", "symbols"]);
    expect(body).toMatchObject({ success: true, length: 16, entropy_bits: 103.61 });
    expect(body.password).toHaveLength(16);
  });

  test("echoes exclude_similar and exclude only when sent, after the seed's fields", () => {
    const body = success({ exclude_similar: "false", exclude: "" });
    expect(Object.keys(body.parameters)).toEqual([
      "requested_length",
      "uppercase",
      "lowercase",
      "numbers",
      "symbols",
      "exclude_similar",
      "exclude",
    ]);
    expect(body.parameters).toMatchObject({ exclude_similar: false, exclude: "" });
    expect(Object.keys(success({ exclude: "ab" }).parameters)).toContain("exclude");
    expect(Object.keys(success({ exclude: "ab" }).parameters)).not.toContain("exclude_similar");
  });

  test("validation errors are 400 with the exact body", () => {
    expect(generateFromFields({ length: "7" }, random)).toEqual({
      status: 400,
      body: { success: false, error: "length must be an integer from 8 to 128." },
    });
  });

  test("exclude_similar removes 0 O 1 l I | and lowers the entropy accordingly", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) for (const ch of success({ exclude_similar: "1", length: "128" }).password) seen.add(ch);
    for (const ch of "0O1lI|") expect(seen.has(ch)).toBe(false);
    // 100 * 128 draws from 84 characters: a character never drawn has probability < 1e-60.
    expect(seen.size).toBe(90 - 6);
    // Classes of 24, 25, 8 and 27 characters; log2 of the inclusion–exclusion count, by Python.
    expect(success({ exclude_similar: "1" }).entropy_bits).toBe(101.94);
  });

  test("exclude removes exactly the listed code points", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) for (const ch of success({ exclude: "aZ9#😀é", length: "128" }).password) seen.add(ch);
    expect(seen.size).toBe(90 - 4);
    for (const ch of "aZ9#") expect(seen.has(ch)).toBe(false);
  });

  test("an exclusion that empties a selected class names the first such class", () => {
    const digits = "0123456789";
    const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    expect(failure({ exclude: digits })?.error).toBe("exclude leaves no characters for numbers.");
    expect(failure({ exclude: digits + upper })?.error).toBe("exclude leaves no characters for uppercase.");
    expect(failure({ exclude: "!#$%&()*+,-./:;<=>?@[]^_{}~", exclude_similar: "true" })?.error).toBe(
      "exclude leaves no characters for symbols.",
    );
    expect(failure({ exclude: "23456789", exclude_similar: "true" })?.error).toBe("exclude leaves no characters for numbers.");
  });

  test("emptying a class that is not selected is fine", () => {
    const body = success({ exclude: "0123456789", numbers: "false" });
    expect(body.password).toMatch(/^[^0-9]{16}$/);
    expect(body.parameters.numbers).toBe(false);
  });

  test("entropy reflects the classes left after exclusion", () => {
    // Only digits, 2..9 left: 8^8 passwords -> 24 bits exactly.
    expect(success({ uppercase: "0", lowercase: "0", symbols: "0", length: "8", exclude: "01" }).entropy_bits).toBe(24);
    expect(success({ uppercase: "0", lowercase: "0", symbols: "0", length: "8" }).entropy_bits).toBe(26.58);
  });
});

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const SYMBOLS = "!#$%&()*+,-./:;<=>?@[]^_{|}~";

const countIn = (password: string, chars: string) => [...password].filter((ch) => chars.includes(ch)).length;

/** A Random that counts the draws it hands out, over the real source. */
function countingRandom() {
  const inner = createRandom();
  const counter = { draws: 0 };
  const wrapped: Random = {
    uniformIndex(n) {
      counter.draws++;
      return inner.uniformIndex(n);
    },
  };
  return { random: wrapped, counter };
}

describe("minimums", () => {
  test("every password meets every minimum, the default 1 of the other classes included", () => {
    const cases: [Fields, Record<string, number>][] = [
      [{ min_symbols: "12" }, { symbols: 12, upper: 1, lower: 1, digits: 1 }],
      [
        { length: "8", min_numbers: "5" },
        { digits: 5, upper: 1, lower: 1, symbols: 1 },
      ],
      [
        { length: "128", min_numbers: "100", min_uppercase: "10" },
        { digits: 100, upper: 10, lower: 1, symbols: 1 },
      ],
      [
        { length: "20", min_lowercase: "2", min_uppercase: "2" },
        { lower: 2, upper: 2, digits: 1, symbols: 1 },
      ],
      [
        { length: "9", lowercase: "0", symbols: "0", min_uppercase: "4", min_numbers: "5" },
        { upper: 4, digits: 5 },
      ],
    ];
    for (const [fields, minimums] of cases) {
      for (let i = 0; i < 200; i++) {
        const { password, length } = success(fields);
        expect(password).toHaveLength(length);
        const found = {
          upper: countIn(password, UPPER),
          lower: countIn(password, LOWER),
          digits: countIn(password, DIGITS),
          symbols: countIn(password, SYMBOLS),
        };
        expect(found.upper + found.lower + found.digits + found.symbols).toBe(length);
        for (const [name, minimum] of Object.entries(minimums)) {
          expect({ fields, name, ok: found[name as keyof typeof found] >= minimum }).toEqual({ fields, name, ok: true });
        }
        if (fields.lowercase === "0") expect(found.lower).toBe(0);
        if (fields.symbols === "0") expect(found.symbols).toBe(0);
      }
    }
  });

  test("echoes the minimums sent, in class order after exclude, and nothing for the ones not sent", () => {
    const body = success({ min_symbols: "3", exclude: "x", min_uppercase: "2" });
    expect(Object.keys(body.parameters)).toEqual([
      "requested_length",
      "uppercase",
      "lowercase",
      "numbers",
      "symbols",
      "exclude",
      "min_uppercase",
      "min_symbols",
    ]);
    expect(body.parameters).toMatchObject({ min_uppercase: 2, min_symbols: 3 });
  });

  test("no explosion: length 16 with min_symbols=12 takes a few dozen draws, not the 1/acceptance a redraw would", () => {
    // Redrawing whole strings until 12 of 16 are symbols succeeds with probability 1.2e-4:
    // some 8,150 attempts of 16 draws. The exact sampler needs a BigInt draw per class (a few
    // words each), a shuffle and the characters: under 100 draws.
    const { random, counter } = countingRandom();
    for (let i = 0; i < 50; i++) {
      counter.draws = 0;
      const result = generateFromFields({ min_symbols: "12" }, random);
      expect(result.status).toBe(200);
      expect(counter.draws).toBeLessThan(100);
    }
  });

  test("a minimum of 1 for every class sent explicitly answers as the default rule does, entropy included", () => {
    const explicit = success({ min_uppercase: "1", min_lowercase: "1", min_numbers: "1", min_symbols: "1" });
    expect(explicit.entropy_bits).toBe(103.61);
    expect(success({ length: "8", numbers: "0", min_uppercase: 1, min_lowercase: 1, min_symbols: 1 }).entropy_bits).toBe(
      success({ length: "8", numbers: "0" }).entropy_bits,
    );
  });

  test("entropy_bits is log2 of the brute-force count of strings that meet the minimums", () => {
    // Digits 7, 8, 9 (exclude takes the rest) and the symbols "!" and "?", at least 3 symbols in
    // 8 characters (and 1 digit): 5^8 = 390,625 strings to look at.
    const fields = { length: "8", uppercase: "0", lowercase: "0", exclude: "0123456", symbol_set: "!?", min_symbols: "3" };
    const alphabet = "789!?";
    let valid = 0;
    const walk = (depth: number, symbols: number, digits: number) => {
      if (depth === 8) {
        if (symbols >= 3 && digits >= 1) valid++;
        return;
      }
      for (const ch of alphabet) walk(depth + 1, symbols + (ch === "!" || ch === "?" ? 1 : 0), digits + (ch >= "7" && ch <= "9" ? 1 : 0));
    };
    walk(0, 0, 0);
    const body = success(fields);
    expect(body.entropy_bits).toBe(Math.round(Math.log2(valid) * 100) / 100);
    expect(body.password).toMatch(/^[789!?]{8}$/);
    expect(countIn(body.password, "!?")).toBeGreaterThanOrEqual(3);
  });

  test("the default rule with a tiny class (low acceptance) is sampled exactly too: few draws, every class present", () => {
    // Only "0" left of the digits and "!" as the only symbol: a random string of 8 over 54
    // characters holds both with probability 0.018, so the exact sampler answers.
    const { random, counter } = countingRandom();
    for (let i = 0; i < 50; i++) {
      counter.draws = 0;
      const result = generateFromFields({ length: "8", exclude: "123456789", symbol_set: "!" }, random);
      if (result.status !== 200 || !("password" in result.body)) throw new Error("expected one password");
      expect(result.body.password).toMatch(/^(?=.*0)(?=.*!)(?=.*[A-Z])(?=.*[a-z])[A-Za-z0!]{8}$/);
      expect(counter.draws).toBeLessThan(100);
    }
  });
});

describe("symbol_set", () => {
  test("replaces the 28 symbols; exclude and exclude_similar still apply to it", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      for (const ch of success({ length: "128", uppercase: "0", lowercase: "0", numbers: "0", symbol_set: "\"'\\`|~", exclude: "~" })
        .password) {
        seen.add(ch);
      }
    }
    expect([...seen].sort()).toEqual(['"', "'", "\\", "`", "|"].sort());
    const similar = success({ length: "64", uppercase: "0", lowercase: "0", numbers: "0", symbol_set: "|!", exclude_similar: "1" });
    expect(similar.password).toBe("!".repeat(64));
    expect(similar.entropy_bits).toBe(0);
  });

  test("an exclusion that empties the symbol set names symbols; with symbols off it does not matter", () => {
    expect(failure({ symbol_set: "!?", exclude: "?!" })?.error).toBe("exclude leaves no characters for symbols.");
    expect(failure({ symbol_set: "|", exclude_similar: "true" })?.error).toBe("exclude leaves no characters for symbols.");
    expect(success({ symbol_set: "!?", exclude: "?!", symbols: "0" }).password).toMatch(/^[A-Za-z0-9]{16}$/);
  });

  test("is echoed after the minimums; entropy counts the set's size", () => {
    const body = success({ symbol_set: "!?", min_numbers: "2" });
    expect(Object.keys(body.parameters).slice(-2)).toEqual(["min_numbers", "symbol_set"]);
    expect(body.parameters.symbol_set).toBe("!?");
    // Symbols only, 2 of them, length 8: 2^8 strings.
    expect(success({ symbol_set: "!?", uppercase: "0", lowercase: "0", numbers: "0", length: "8" }).entropy_bits).toBe(8);
  });
});

describe("count", () => {
  test("count=1 answers one password, echoing count; above 1 `passwords` in place of `password`", () => {
    const one = generateFromFields({ count: "1" }, random).body as any;
    expect(Object.keys(one)).toEqual(["success", "password", "length", "parameters", "entropy_bits"]);
    expect(one.parameters.count).toBe(1);
    const five = generateFromFields({ count: "5", length: "10", min_numbers: "4" }, random).body as any;
    expect(Object.keys(five)).toEqual(["success", "passwords", "length", "parameters", "entropy_bits"]);
    expect(five.passwords).toHaveLength(5);
    for (const password of five.passwords) {
      expect(password).toHaveLength(10);
      expect(countIn(password, DIGITS)).toBeGreaterThanOrEqual(4);
    }
    expect(five.length).toBe(10);
    expect(five.parameters).toMatchObject({ requested_length: 10, min_numbers: 4, count: 5 });
  });

  test("count=100 gives 100 distinct passwords", () => {
    const body = generateFromFields({ count: "100" }, random).body as any;
    expect(body.passwords).toHaveLength(100);
    expect(new Set(body.passwords).size).toBe(100);
    expect(body.entropy_bits).toBe(103.61);
  });

  test("type=password is echoed only when sent, after count", () => {
    const body = success({ type: "password", count: 1 });
    expect(Object.keys(body.parameters).slice(-2)).toEqual(["count", "type"]);
    expect(body.parameters.type).toBe("password");
    expect("type" in success({}).parameters).toBe(false);
  });
});

describe("passphrases", () => {
  const WORD = /^[a-z]+(-[a-z]+)?$/;

  test("default: six EFF words joined by '-', lower case, the contract's entropy", () => {
    const body = generateFromFields({ type: "passphrase", separator: " " }, random).body as any;
    expect(Object.keys(body)).toEqual(["success", "password", "length", "parameters", "entropy_bits"]);
    expect(body.parameters).toEqual({ type: "passphrase", words: 6, separator: " ", capitalize: false, include_number: false });
    const words = body.password.split(" ");
    expect(words).toHaveLength(6);
    for (const word of words) expect(word).toMatch(WORD);
    expect(body.length).toBe(body.password.length);
    // 6 x log2(7776) = 77.549...
    expect(body.entropy_bits).toBe(77.55);
    expect((generateFromFields({ type: "passphrase" }, random).body as any).parameters.separator).toBe("-");
  });

  test("words, separator, capitalize and include_number", () => {
    for (let i = 0; i < 100; i++) {
      const body = generateFromFields({ type: "passphrase", words: "3", separator: "_+_", capitalize: "true", include_number: "1" }, random)
        .body as any;
      const words: string[] = body.password.split("_+_");
      expect(words).toHaveLength(3);
      for (const word of words) expect(word).toMatch(/^[A-Z][a-z]*(-[a-z]+)?[0-9]?$/);
      expect(words.filter((word) => /[0-9]$/.test(word))).toHaveLength(1);
      expect(body.password.replace(/[^0-9]/g, "")).toHaveLength(1);
      // 3 x log2(7776) + log2(30) = 38.774 + 4.907
      expect(body.entropy_bits).toBe(43.68);
    }
    const plain = generateFromFields({ type: "passphrase", words: 20, separator: "" }, random).body as any;
    expect(plain.password).toMatch(/^[a-z-]+$/);
    expect(plain.entropy_bits).toBe(258.5);
  });

  test("count above 1: `passwords` and `lengths`, one per phrase", () => {
    const body = generateFromFields({ type: "passphrase", count: "4", words: "5" }, random).body as any;
    expect(Object.keys(body)).toEqual(["success", "passwords", "lengths", "parameters", "entropy_bits"]);
    expect(body.passwords).toHaveLength(4);
    expect(body.lengths).toEqual(body.passwords.map((p: string) => p.length));
    expect(body.parameters).toEqual({ type: "passphrase", words: 5, separator: "-", capitalize: false, include_number: false, count: 4 });
  });
});
