// IndexNow (https://www.indexnow.org/documentation): after a successful run, the URLs it added and
// changed are POSTed to the site's IndexNow endpoint as `{"host", "key", "keyLocation", "urlList"}`,
// at most 10,000 a request, each request retried up to 3 times. The request goes through the
// crawler's address guard (checked address, no redirects followed), as a job's callback does.
import { createGuardedFetch, type Resolver, type Send, TargetRefusedError, type TargetPolicy } from "../crawler/index.ts";
import type { IndexNowSettings } from "./site.ts";

/** The protocol's limit of URLs in one request. */
export const INDEXNOW_MAX_URLS = 10_000;
export const INDEXNOW_RETRIES = 3;
const ATTEMPT_TIMEOUT_MS = 10_000;

/** What a run's result records: URLs submitted (accepted with a 2xx) and the last answer's status, or why none came. */
export interface IndexNowOutcome {
  submitted: number;
  status: number | string;
}

export interface IndexNowDeps {
  policy: TargetPolicy;
  resolve: Resolver;
  userAgent: string;
  /** Waits before retry n (1-based). */
  backoffMs?: (retry: number) => number;
  send?: Send;
}

/**
 * Submits `urls` (on the public origin already) for `publicOrigin` (the site's `public_origin`, else
 * the crawled origin), whose owner keeps the key file at `<publicOrigin>/<key>.txt`.
 */
export async function submitIndexNow(
  settings: IndexNowSettings,
  publicOrigin: string,
  urls: readonly string[],
  deps: IndexNowDeps,
): Promise<IndexNowOutcome> {
  const backoff = deps.backoffMs ?? ((n: number) => n * n * 1000);
  let submitted = 0;
  let status: number | string = "nothing to submit";
  for (let at = 0; at < urls.length; at += INDEXNOW_MAX_URLS) {
    const urlList = urls.slice(at, at + INDEXNOW_MAX_URLS);
    const body = JSON.stringify({
      host: new URL(publicOrigin).hostname,
      key: settings.key,
      keyLocation: `${publicOrigin}/${settings.key}.txt`,
      urlList,
    });
    // The guarded fetcher sends GETs; this `send` turns its checked request into the POST.
    const send: Send = (input, init) => (deps.send ?? fetch)(input, { ...init, method: "POST", body });
    const post = createGuardedFetch(deps.policy, deps.resolve, send);
    const headers = { "Content-Type": "application/json; charset=utf-8", "User-Agent": deps.userAgent };
    for (let attempt = 0; attempt <= INDEXNOW_RETRIES; attempt++) {
      if (attempt > 0) await Bun.sleep(backoff(attempt));
      try {
        const res = await post(new URL(settings.endpoint), { signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS), headers });
        await res.body?.cancel().catch(() => {});
        status = res.status;
        // 4xx but 429 says the request itself is wrong (bad key, host): trying again will not help.
        if ((res.status >= 200 && res.status < 300) || (res.status >= 400 && res.status < 500 && res.status !== 429)) break;
      } catch (error) {
        status = (error as Error).message;
        if (error instanceof TargetRefusedError) return { submitted, status: `not allowed: ${error.reason}` };
      }
    }
    if (typeof status !== "number" || status < 200 || status > 299) break;
    submitted += urlList.length;
  }
  return { submitted, status };
}
