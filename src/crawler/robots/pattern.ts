// The robots.txt path pattern (RFC 9309 2.2.2-2.2.3: `*` wildcards, a trailing `$`), compiled once
// and matched in percent-encoded "match form". robots.txt rules and the include/exclude crawl
// options share it (filter.ts).
import { encodePathOnce, encodeQueryOnce, matchForm } from "../url/url.ts";

/** A compiled pattern; also the include/exclude crawl options' (filter.ts). */
export interface Rule {
  allow: boolean;
  /** Specificity: the pattern's length in characters, as written (normalised). */
  length: number;
  /** The literal runs between `*`s; the path must contain them in order, the first at its start. */
  parts: string[];
  /** A trailing `$`: the last part must end the path. */
  anchored: boolean;
}

/**
 * A pattern compiled for matching: path and query percent-encoded the way normaliseUrl encodes
 * them, `*` split off as wildcards and a trailing `$` as the anchor, then each literal run put in
 * match form, where `%2A` and `%24` stand for a literal `*` and `$` (RFC 9309 2.2.3).
 */
export function compileRule(allow: boolean, value: string): Rule {
  const query = value.indexOf("?");
  const pattern = query < 0 ? encodePathOnce(value) : `${encodePathOnce(value.slice(0, query))}?${encodeQueryOnce(value.slice(query + 1))}`;
  const anchored = pattern.endsWith("$");
  const parts = (anchored ? pattern.slice(0, -1) : pattern).split("*").map(matchForm);
  return { allow, length: pattern.length, parts, anchored };
}

/** Whether `rule` matches the path and query of a normalised URL ("/a/b?c"). */
export function matches(rule: Rule, path: string): boolean {
  return matchesForm(rule, matchForm(path));
}

/** `matches` for a path already in match form (robots.ts matches one URL against many rules). */
export function matchesForm(rule: Rule, path: string): boolean {
  const { parts, anchored } = rule;
  if (!path.startsWith(parts[0]!)) return false;
  if (parts.length === 1) return !anchored || path.length === parts[0]!.length;
  let at = parts[0]!.length;
  const last = parts.length - 1;
  for (let i = 1; i < last; i++) {
    const found = path.indexOf(parts[i]!, at);
    if (found < 0) return false;
    at = found + parts[i]!.length;
  }
  // The last run: anywhere after the others, or exactly at the end under `$`.
  const tail = parts[last]!;
  return anchored ? path.length - tail.length >= at && path.endsWith(tail) : path.indexOf(tail, at) >= 0;
}
