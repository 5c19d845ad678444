import { describe, expect, test } from "bun:test";
import { createRandom } from "../../src/password/random.ts";
import { generateFromFields, type PasswordSuccess } from "../../src/password/service.ts";
import type { Fields } from "../../src/password/params.ts";

const random = createRandom();

function success(fields: Fields): PasswordSuccess {
  const result = generateFromFields(fields, random);
  if (result.status !== 200) throw new Error(`unexpected ${result.status}: ${result.body.error}`);
  return result.body;
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
