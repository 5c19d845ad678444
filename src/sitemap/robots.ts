// robots.txt per RFC 9309: fetching (status and redirect rules) and matching (via robots-parser).
import robotsParser from "robots-parser";
import { readCapped } from "./body.ts";
import { CrawlFailedError, TargetRefusedError } from "./errors.ts";
import { isRedirect } from "./headers.ts";
import { CrawlStopped, describeFailure, type Requester } from "./request.ts";
import { encodePathOnce } from "./url.ts";

export interface RobotsRules {
  /** Whether the crawler may fetch this normalised URL of the rules' origin. */
  allows(url: string): boolean;
}

export const ALLOW_ALL: RobotsRules = { allows: () => true };

/** RFC 9309 2.5: crawlers must parse at least 500 KiB; the rest is ignored. */
export const ROBOTS_MAX_BYTES = 500 * 1024;
/** RFC 9309 2.3.1.2: follow at least five redirects; past them, act as if there were no rules. */
export const ROBOTS_MAX_REDIRECTS = 5;

/**
 * Rules of `text` (the robots.txt of `origin`) for `productToken`, falling back to the `*` group.
 * robots-parser does the grouping and matching (longest match wins, Allow wins a tie, `*` and a
 * trailing `$`); patterns are first percent-encoded the way normaliseUrl encodes paths, so that
 * `%62` and `b`, or `é` and `%C3%A9`, match alike (RFC 9309 2.2.2).
 */
export function parseRobots(origin: string, text: string, productToken: string): RobotsRules {
  const robots = robotsParser(`${origin}/robots.txt`, normalisePatterns(text));
  return { allows: (url) => robots.isAllowed(url, productToken) === true };
}

function normalisePatterns(text: string): string {
  return text.replace(/^([ \t]*(?:allow|disallow)[ \t]*:)([^\r\n#]*)/gim, (_, key: string, value: string) => {
    const pattern = value.trim();
    const query = pattern.indexOf("?");
    const path = query < 0 ? pattern : pattern.slice(0, query);
    return `${key} ${encodePathOnce(path)}${query < 0 ? "" : pattern.slice(query)}`;
  });
}

type Outcome = { rules: string } | { redirect: string } | { unreachable: string };

/**
 * Fetches and parses `origin`'s robots.txt. 2xx: its rules (first 500 KiB). 4xx, or more than five
 * redirects: no rules. 5xx, or a redirect hop that fails or is refused: CrawlFailedError
 * ("robots.txt unreachable (...)"), as the whole site counts as disallowed. When /robots.txt itself
 * cannot be fetched, the site is unreachable: CrawlFailedError with the plain reason
 * ("connection refused", "timed out"), or TargetRefusedError for a refused address.
 */
export async function fetchRobots(origin: string, request: Requester, productToken: string): Promise<RobotsRules> {
  let url = new URL("/robots.txt", origin);
  for (let redirects = 0; ; redirects++) {
    let outcome: Outcome;
    try {
      outcome = await request(url, async (res, signal): Promise<Outcome> => {
        const location = res.headers.get("location");
        if (isRedirect(res.status) && location !== null) return { redirect: location };
        if (res.status >= 200 && res.status < 300) {
          const { bytes, overflow } = await readCapped(res, ROBOTS_MAX_BYTES, signal);
          const text = new TextDecoder().decode(bytes);
          // A cut-off last line could be a truncated rule: drop it.
          return { rules: overflow ? text.slice(0, text.lastIndexOf("\n") + 1) : text };
        }
        if (res.status >= 400 && res.status < 500) return { rules: "" };
        return { unreachable: `HTTP ${res.status}` };
      });
    } catch (err) {
      if (err instanceof CrawlStopped) throw err;
      if (redirects === 0) {
        // The site itself cannot be reached: say so plainly (a refused address answers 400).
        if (err instanceof TargetRefusedError) throw err;
        throw new CrawlFailedError(describeFailure(err));
      }
      outcome = { unreachable: err instanceof TargetRefusedError ? "address not allowed" : describeFailure(err) };
    }
    if ("rules" in outcome) return parseRobots(origin, outcome.rules, productToken);
    if ("unreachable" in outcome) throw new CrawlFailedError(`robots.txt unreachable (${outcome.unreachable})`);
    if (redirects === ROBOTS_MAX_REDIRECTS) return ALLOW_ALL;
    const next = URL.parse(outcome.redirect, url.href);
    if (next === null || (next.protocol !== "http:" && next.protocol !== "https:")) {
      throw new CrawlFailedError("robots.txt unreachable (invalid redirect)");
    }
    url = next;
  }
}
