// The four character classes and the look-alikes that `exclude_similar` removes.

export const CLASS_NAMES = ["uppercase", "lowercase", "numbers", "symbols"] as const;
export type ClassName = (typeof CLASS_NAMES)[number];

export const CHARSETS: Readonly<Record<ClassName, string>> = {
  uppercase: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
  lowercase: "abcdefghijklmnopqrstuvwxyz",
  numbers: "0123456789",
  // Printable ASCII punctuation less `"`, `'`, `\` and the backtick, which need escaping in
  // shells, JSON and config files.
  symbols: "!#$%&()*+,-./:;<=>?@[]^_{|}~",
};

export const SIMILAR = "0O1lI|";

/** The characters of `chars` that are not in `excluded`, in their original order. */
export function withoutCharacters(chars: string, excluded: ReadonlySet<string>): string {
  let kept = "";
  for (const ch of chars) if (!excluded.has(ch)) kept += ch;
  return kept;
}

/** The 32 printable ASCII punctuation characters: what `symbol_set` may choose from. */
export const ASCII_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
