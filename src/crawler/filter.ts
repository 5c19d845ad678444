// The crawl options that decide which URLs are queued and listed: include/exclude patterns (the
// robots.txt matcher's syntax and code), ignore_query_params, and max_depth.
import type { CrawlOptions } from "./options.ts";
import { compileRule, matches, type Rule } from "./robots/pattern.ts";

export interface UrlFilter {
  /** `url` (normalised) without the ignored query parameters; itself when nothing is removed. */
  strip(url: string): string;
  /** Matches an `exclude` pattern: never fetched, never listed. */
  excluded(url: string): boolean;
  /** May be listed: no `include` patterns, or one matches. Others are still crawled for links. */
  included(url: string): boolean;
  /** A page at `depth` (the start page is 0) is within max_depth. */
  withinDepth(depth: number): boolean;
  /** Whether any option is set: the crawler skips the calls when none is. */
  readonly active: boolean;
}

export function createUrlFilter(options: Pick<CrawlOptions, "include" | "exclude" | "ignore_query_params" | "max_depth">): UrlFilter {
  const include = options.include.map(compilePattern);
  const exclude = options.exclude.map(compilePattern);
  const ignore = options.ignore_query_params.map(compileGlob);
  const dropAll = options.ignore_query_params.includes("*");
  const maxDepth = options.max_depth;
  return {
    strip: ignore.length === 0 ? (url) => url : (url) => stripQuery(url, dropAll, ignore),
    excluded: exclude.length === 0 ? () => false : (url) => matchesAny(exclude, url),
    included: include.length === 0 ? () => true : (url) => matchesAny(include, url),
    withinDepth: maxDepth === null ? () => true : (depth) => depth <= maxDepth,
    active: include.length + exclude.length + ignore.length > 0 || maxDepth !== null,
  };
}

/** A pattern as a robots.txt rule: encoded and matched the same way (only its `allow` is unused). */
function compilePattern(pattern: string): Rule {
  return compileRule(false, pattern);
}

function matchesAny(rules: Rule[], url: string): boolean {
  const target = pathAndQuery(url);
  return rules.some((rule) => matches(rule, target));
}

/** The path and query of a normalised absolute URL ("/a/b?c"), what robots.txt patterns see. */
export function pathAndQuery(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start < 0 ? "/" : url.slice(start);
}

/**
 * A parameter-name pattern where `*` matches any run of characters, as its literal runs: like the
 * robots matcher, matched with indexOf in about the name's length, where a regular expression built
 * from `a*a*a*...` would backtrack for each star.
 */
interface Glob {
  parts: string[];
}

function compileGlob(pattern: string): Glob {
  return { parts: pattern.split("*") };
}

function globMatches({ parts }: Glob, name: string): boolean {
  const first = parts[0]!;
  if (parts.length === 1) return name === first;
  const last = parts[parts.length - 1]!;
  if (!name.startsWith(first) || name.length < first.length + last.length || !name.endsWith(last)) return false;
  let at = first.length;
  const end = name.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = name.indexOf(parts[i]!, at);
    if (found < 0 || found + parts[i]!.length > end) return false;
    at = found + parts[i]!.length;
  }
  return true;
}

/**
 * Removes the query parameters whose name matches a pattern, keeping the others as written and in
 * order. Names are compared percent-decoded (`utm%5Fsource` is `utm_source`); empty pairs (`a&&b`)
 * go too, and a query left empty is dropped with its `?`.
 */
function stripQuery(url: string, dropAll: boolean, globs: Glob[]): string {
  const mark = url.indexOf("?");
  if (mark < 0) return url;
  if (dropAll) return url.slice(0, mark);
  const kept = url
    .slice(mark + 1)
    .split("&")
    .filter((pair) => {
      if (pair === "") return false;
      const eq = pair.indexOf("=");
      const name = decodeName(eq < 0 ? pair : pair.slice(0, eq));
      return !globs.some((glob) => globMatches(glob, name));
    });
  return kept.length === 0 ? url.slice(0, mark) : `${url.slice(0, mark)}?${kept.join("&")}`;
}

function decodeName(name: string): string {
  if (!name.includes("%") && !name.includes("+")) return name;
  try {
    return decodeURIComponent(name.replaceAll("+", " "));
  } catch {
    return name;
  }
}
