// Redirect following, once, for the start page, queued pages and robots.txt: each caller states its
// policy (hop limit, which targets may be followed, whether a refused address ends the crawl).
import { TargetRefusedError } from "./address-guard.ts";

/** What one request answered: a redirect to follow, or the caller's own final value. */
export type HopStep<P> = { kind: "redirect"; location: string } | { kind: "final"; value: P };

export interface HopPolicy {
  /** Redirects followed after the first request; the next one stops the chain with "too many redirects". */
  maxRedirects: number;
  /** The absolute URL a Location names, in the caller's spelling, or null when it cannot be followed. */
  resolve(location: string, from: string): string | null;
  /**
   * Before each request, the first included: null to send it, or the reason to stop (budget, time,
   * robots.txt). May be async (robots.txt of a new origin).
   */
  before?(url: string, hop: number): Promise<string | null> | string | null;
  /** A redirect target: null to follow it, or the reason to stop (loop, scope, seen). `chain`: the URLs requested so far. */
  admit(target: string, chain: readonly string[]): Promise<string | null> | string | null;
  /** A refused address at request `hop` (0 = first): rethrow TargetRefusedError, or stop the chain. */
  refusedIsFatal(hop: number): boolean;
}

export type Followed<P> =
  /** `url` answered `value`; `chain` holds every URL requested before it (the redirecting ones). */
  | { kind: "final"; url: string; value: P; chain: string[] }
  /** Stopped at `url` (not requested, or refused) for `reason`; `chain` as above. */
  | { kind: "stopped"; url: string; reason: string; chain: string[]; refused?: true };

/**
 * Requests `start` with `step` and follows its redirects under `policy`. `step` throws only for a
 * stopped or failed crawl (rethrown) or a refused address (handled per policy); every other failure
 * is its final value.
 */
export async function followHops<P>(start: string, policy: HopPolicy, step: (url: string) => Promise<HopStep<P>>): Promise<Followed<P>> {
  const chain: string[] = [];
  let url = start;
  for (let hop = 0; ; hop++) {
    const stop = policy.before ? await policy.before(url, hop) : null;
    if (stop !== null) return { kind: "stopped", url, reason: stop, chain };
    let answer: HopStep<P>;
    try {
      answer = await step(url);
    } catch (err) {
      if (err instanceof TargetRefusedError && !policy.refusedIsFatal(hop)) {
        return { kind: "stopped", url, reason: "address not allowed", chain, refused: true };
      }
      throw err;
    }
    if (answer.kind === "final") return { kind: "final", url, value: answer.value, chain };
    chain.push(url);
    if (hop === policy.maxRedirects) return { kind: "stopped", url, reason: "too many redirects", chain };
    const target = policy.resolve(answer.location, url);
    if (target === null) return { kind: "stopped", url, reason: "redirect to an invalid URL", chain };
    const refusal = await policy.admit(target, chain);
    if (refusal !== null) return { kind: "stopped", url: target, reason: refusal, chain };
    url = target;
  }
}
