// robots.txt per RFC 9309: fetching (status and redirect rules), grouping and matching.
import { readCapped } from "../net/body.ts";
import { TargetRefusedError } from "../net/address-guard.ts";
import { isRedirect } from "../net/headers.ts";
import { followHops, type HopPolicy, type HopStep } from "../net/hops.ts";
import { CrawlStopped, describeFailure, type Requester } from "../net/request.ts";
import { matchForm } from "../url/url.ts";
import { compileRule, matchesForm, type Rule } from "./pattern.ts";

/** robots.txt answered 5xx or could not be fetched: the whole site counts as disallowed (the crawl's 502). */
export class RobotsUnreachableError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "RobotsUnreachableError";
  }
}

export interface RobotsRules {
  /** Whether the crawler may fetch this normalised URL of the rules' origin. */
  allows(url: string): boolean;
  /** The values of the file's `Sitemap:` lines (RFC 9309 2.2.4), as written, wherever they appear. */
  readonly sitemaps: readonly string[];
  /**
   * `Crawl-delay` (seconds) of the group that governs the crawler (genapi's, else `*`), the largest
   * when it says it more than once; null when it says nothing readable. Not in RFC 9309; honoured
   * as most crawlers do, up to 30 s (net/politeness.ts).
   */
  readonly crawlDelay: number | null;
}

export const ALLOW_ALL: RobotsRules = { allows: () => true, sitemaps: [], crawlDelay: null };

/** Crawl-delay's value: a non-negative decimal number, with or without sign, point, digits before it or exponent. */
const CRAWL_DELAY = /^\+?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** RFC 9309 2.5: crawlers must parse at least 500 KiB; the rest is ignored. */
export const ROBOTS_MAX_BYTES = 500 * 1024;
/** RFC 9309 2.3.1.2: follow at least five redirects; past them, act as if there were no rules. */
export const ROBOTS_MAX_REDIRECTS = 5;

/**
 * Rules of `text` (the robots.txt of `origin`) for `productToken`: every group naming the token
 * (case-insensitively, version ignored), combined; when none does, the `*` groups. The longest
 * matching pattern decides and Allow wins a tie. Patterns are percent-encoded the way normaliseUrl
 * encodes URLs, path and query, and both sides are compared in match form, so `%62` and `b`,
 * `é` and `%C3%A9`, `%7e` and `~` match alike (RFC 9309 2.2.2).
 *
 * Matching is written here rather than taken from robots-parser, whose matcher costs pattern
 * length x path length per rule: a hostile 500 KiB file of `/*a*a*a...` patterns made it take a
 * second per URL, synchronously. Matching the literal runs in order with indexOf is exact for
 * patterns whose only wildcard is `*` and costs about the path's length per rule.
 */
export function parseRobots(origin: string, text: string, productToken: string): RobotsRules {
  const token = productToken.toLowerCase();
  const ours: Rule[] = [];
  const anyone: Rule[] = [];
  let namedUs = false;
  let agents: string[] = [];
  let inRules = false;
  const sitemaps: string[] = [];
  let ourDelay: number | null = null;
  let anyDelay: number | null = null;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*/, "");
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === "user-agent") {
      // A user-agent line after rules starts a new group.
      if (inRules) agents = [];
      inRules = false;
      const agent = value.split("/")[0]!.trim().toLowerCase();
      agents.push(agent);
      if (agent === token) namedUs = true;
    } else if (key === "allow" || key === "disallow") {
      inRules = true;
      // An empty pattern matches nothing (`Disallow:` allows everything).
      if (value === "") continue;
      const rule = compileRule(key === "allow", value);
      if (agents.includes(token)) ours.push(rule);
      if (agents.includes("*")) anyone.push(rule);
    } else if (key === "crawl-delay") {
      inRules = true;
      // A decimal number in any spelling (".5", "+3", "1e9"); one too large for a double counts as
      // infinite, more than the 30 s cap anyway.
      const seconds = CRAWL_DELAY.test(value) ? Number(value) : Number.NaN;
      if (Number.isNaN(seconds)) continue;
      if (agents.includes(token)) ourDelay = Math.max(ourDelay ?? 0, seconds);
      if (agents.includes("*")) anyDelay = Math.max(anyDelay ?? 0, seconds);
    } else if (key === "sitemap" && value !== "") {
      // Not part of any group, and it does not end one.
      sitemaps.push(value);
    }
  }
  const rules = namedUs ? ours : anyone;
  const prefix = `${origin}/`;
  return {
    allows(url) {
      if (!url.startsWith(prefix)) return false;
      // No rule (no robots.txt, or `Disallow:` alone): every path of the origin, without its match form.
      return rules.length === 0 || decide(rules, url.slice(origin.length));
    },
    sitemaps,
    crawlDelay: namedUs ? ourDelay : anyDelay,
  };
}

function decide(rules: Rule[], path: string): boolean {
  const target = matchForm(path);
  let best: Rule | undefined;
  for (const rule of rules) {
    if (best && (rule.length < best.length || (rule.length === best.length && !rule.allow))) continue;
    if (matchesForm(rule, target)) best = rule;
  }
  return best?.allow ?? true;
}

type Outcome = { rules: string } | { unreachable: string };

/** RFC 9309 2.3.1.2: hops after the first may fail or be refused without the site being unreachable. */
const ROBOTS_HOPS: HopPolicy = {
  maxRedirects: ROBOTS_MAX_REDIRECTS,
  resolve(location, from) {
    const next = URL.parse(location, from);
    return next !== null && (next.protocol === "http:" || next.protocol === "https:") ? next.href : null;
  },
  admit: () => null,
  // The site itself cannot be reached: a refused address answers 400. A refused later hop is
  // "unreachable" (the whole site disallowed).
  refusedIsFatal: (hop) => hop === 0,
};

/**
 * Fetches and parses `origin`'s robots.txt. 2xx: its rules (first 500 KiB). 4xx, or more than five
 * redirects: no rules. 5xx, or a redirect hop that fails or is refused: RobotsUnreachableError
 * ("robots.txt unreachable (...)"), as the whole site counts as disallowed. When /robots.txt itself
 * cannot be fetched, the site is unreachable: RobotsUnreachableError with the plain reason
 * ("connection refused", "timed out"), or TargetRefusedError for a refused address.
 */
export async function fetchRobots(origin: string, request: Requester, productToken: string): Promise<RobotsRules> {
  const first = `${origin}/robots.txt`;
  let requests = 0;
  const followed = await followHops<Outcome>(first, ROBOTS_HOPS, async (url) => {
    const hop = requests++;
    try {
      return await request(url, async (res, signal): Promise<HopStep<Outcome>> => {
        const location = res.headers.get("location");
        if (isRedirect(res.status) && location !== null) return { kind: "redirect", location };
        if (res.status >= 200 && res.status < 300) {
          const { bytes, overflow } = await readCapped(res, ROBOTS_MAX_BYTES, signal);
          const text = new TextDecoder().decode(bytes);
          // A cut-off last line could be a truncated rule: drop it.
          return { kind: "final", value: { rules: overflow ? text.slice(0, text.lastIndexOf("\n") + 1) : text } };
        }
        if (res.status >= 400 && res.status < 500) return { kind: "final", value: { rules: "" } };
        return { kind: "final", value: { unreachable: `HTTP ${res.status}` } };
      });
    } catch (err) {
      if (err instanceof CrawlStopped || err instanceof TargetRefusedError) throw err;
      // The site itself cannot be reached: say so plainly.
      if (hop === 0) throw new RobotsUnreachableError(describeFailure(err));
      return { kind: "final", value: { unreachable: describeFailure(err) } };
    }
  });
  if (followed.kind === "stopped") {
    if (followed.reason === "too many redirects") return ALLOW_ALL;
    if (followed.refused) throw new RobotsUnreachableError("robots.txt unreachable (address not allowed)");
    throw new RobotsUnreachableError("robots.txt unreachable (invalid redirect)");
  }
  if ("unreachable" in followed.value) throw new RobotsUnreachableError(`robots.txt unreachable (${followed.value.unreachable})`);
  return parseRobots(origin, followed.value.rules, productToken);
}
