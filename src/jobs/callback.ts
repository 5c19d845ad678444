// The finished job's callback: its JSON POSTed to callback_url once, retried up to 3 times on
// failure, signed with `X-Genapi-Signature: sha256=<hex HMAC-SHA256 of the body>` keyed by the
// job's callback_secret. The request goes through the crawler's address guard (checked address,
// no redirects followed), so a callback cannot reach an address a crawl could not.
import { createHmac } from "node:crypto";
import { createGuardedFetch, type Resolver, type Send, TargetRefusedError, type TargetPolicy } from "../crawler/index.ts";
import type { JobCallbacks } from "./job-store.ts";
import type { Job } from "./model.ts";

export const RETRIES = 3;
const ATTEMPT_TIMEOUT_MS = 10_000;

export function signature(body: string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export interface CallbackDeps {
  store: JobCallbacks;
  policy: TargetPolicy;
  resolve: Resolver;
  /** The job as the API shows it. */
  view: (jobId: string) => Promise<Job | null>;
  userAgent: string;
  /** Waits before retry n (1-based): 1 s, 4 s, 9 s by default. */
  backoffMs?: (retry: number) => number;
  log: (message: string) => void;
  send?: Send;
}

/** Sends the job's callback, if it has one still to send, then erases its secret either way. */
export function createNotifier(deps: CallbackDeps) {
  const backoff = deps.backoffMs ?? ((n: number) => n * n * 1000);
  return async (jobId: string): Promise<void> => {
    const pending = await deps.store.pendingCallback(jobId);
    if (!pending) return;
    const job = await deps.view(jobId);
    if (!job) return;
    const body = JSON.stringify(job);
    const headers = {
      "Content-Type": "application/json",
      "User-Agent": deps.userAgent,
      "X-Genapi-Signature": signature(body, pending.secret),
    };
    // The guarded fetcher sends GETs; this `send` turns its checked request into the POST.
    const send: Send = (input, init) => (deps.send ?? fetch)(input, { ...init, method: "POST", body });
    const post = createGuardedFetch(deps.policy, deps.resolve, send);
    let outcome = "not sent";
    let tries = 0;
    let refused = false;
    for (let attempt = 0; attempt <= RETRIES; attempt++) {
      if (attempt > 0) await Bun.sleep(backoff(attempt));
      tries++;
      try {
        const res = await post(new URL(pending.url), { signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS), headers });
        await res.body?.cancel().catch(() => {});
        if (res.status >= 200 && res.status < 300) {
          outcome = "sent";
          break;
        }
        outcome = `HTTP ${res.status}`;
      } catch (error) {
        outcome = (error as Error).message;
        // An address the guard refuses stays refused: no retry.
        refused = error instanceof TargetRefusedError;
        if (refused) break;
      }
    }
    if (refused) deps.log(`job ${jobId}: callback not sent: the address guard refused it (${outcome})`);
    else if (outcome !== "sent") deps.log(`job ${jobId}: callback not delivered after ${tries} tries (${outcome})`);
    await deps.store.callbackSent(jobId);
  };
}
