// Admission in five steps, shared by POST /api/generate and POST /api/jobs: 1 the key, 2 the body,
// 3 its `url` (then the caller's own validator), 4 the target address, 5 the daily quota.
// A request refused here was not counted (it throws the HttpError that answers it); one admitted
// was counted once, and `release` gives the admission back when a later step turns it away (503).
import { HttpError } from "../http/errors.ts";
import { BodyReadError, PayloadTooLargeError, readBodyBytes } from "../http/body.ts";
import type { KeyRecord, KeyStore } from "../keys/key-store.ts";
import { type QuotaStore, quotaForKey, rateLimitHeaders, rateLimitMessage } from "../quota/quota.ts";
import { INVALID_URL_MESSAGE, parseTargetUrl, TargetRefusedError } from "../crawler/index.ts";

const BODY_LIMIT = 16 * 1024;
export const AUTH_FAILED_MESSAGE = "Authentication failed. Invalid or missing API key.";

export type BodyCheck<T> = { ok: true; value: T } | { ok: false; message: string };

/** An address a request's body names besides its target, judged by the same guard at step 4. */
export interface OtherTarget {
  /** The body field, for the message. */
  field: string;
  url: URL;
}

/** A request admitted by steps 1-5: its key, its URL, the validated body, and its quota. */
export interface Admitted<T> {
  key: KeyRecord;
  keyId: number;
  url: URL;
  /** The URL as sent, for messages. */
  sent: string;
  value: T;
  /** The rate-limit headers after admission. */
  headers: Record<string, string>;
  /** Gives the admission back (503); resolves with the headers to send then. */
  release: () => Promise<Record<string, string>>;
}

export interface AdmissionDeps {
  /** Only what admission guards: the keys and the daily counters. */
  keys: KeyStore;
  quota: QuotaStore;
  now: () => Date;
  clientIp: (request: Request) => string;
  freeDailyLimit: number;
  /** Step 4: throws TargetRefusedError for a forbidden target; a name that does not resolve passes (the crawl reports it). */
  checkTarget: (url: URL) => Promise<void>;
}

/** The JSON body as an object; else throws the HttpError that refuses it (step 2). */
async function readObject(request: Request, headers: () => Promise<Record<string, string>>): Promise<Record<string, unknown>> {
  let bytes: Uint8Array;
  try {
    bytes = await readBodyBytes(request, BODY_LIMIT);
  } catch (error) {
    if (error instanceof PayloadTooLargeError) throw new HttpError(413, "Request body is larger than 16 KiB.", await headers());
    if (error instanceof BodyReadError) throw new HttpError(error.status, error.message, await headers());
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    // SyntaxError, or RangeError for absurd nesting: either way not a body we can use.
    throw new HttpError(400, 'Request body must be JSON: {"url": "https://..."}.', await headers());
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'Request body must be a JSON object: {"url": "https://..."}.', await headers());
  }
  return body as Record<string, unknown>;
}

export function createAdmission(deps: AdmissionDeps) {
  const { keys, quota } = deps;
  /**
   * Steps 1-4 without the quota (sites: nothing is counted when one is created or changed):
   * checked; else throws the HttpError that refuses the request. `keyRule` refuses a key before
   * its body is read (throwing its HttpError); `url: false` reads a body without a target (a PATCH).
   */
  async function check<T>(
    request: Request,
    validateBody: (body: Record<string, unknown>) => BodyCheck<T>,
    otherTargets: (value: T) => OtherTarget[] = () => [],
    options: { keyRule?: (key: KeyRecord) => void; url?: boolean } = {},
  ): Promise<Checked<T>> {
    const now = deps.now();
    // 1. The key. A mistyped key fails its checksum without a database lookup.
    const key = await keys.authenticate(request.headers.get("x-api-key"), now);
    if (!key) throw new HttpError(401, AUTH_FAILED_MESSAGE);
    options.keyRule?.(key);
    const { bucket, limit } = quotaForKey(key, deps.clientIp(request), deps.freeDailyLimit);
    const unchanged = async () => rateLimitHeaders(await quota.peek(bucket, limit, now), now);

    // 2-3. The body, its URL, then the caller's fields: an invalid value costs no quota.
    const body = await readObject(request, unchanged);
    const url = options.url === false ? null : parseTargetUrl(body.url);
    if (options.url !== false && !url) throw new HttpError(400, INVALID_URL_MESSAGE, await unchanged());
    const checked = validateBody(body);
    if (!checked.ok) throw new HttpError(400, checked.message, await unchanged());

    // 4. The target address (checked again at every connection), then the body's other ones
    // (checked again when used).
    const targets = [...(url ? [{ field: "", url }] : []), ...otherTargets(checked.value)];
    for (const target of targets) {
      try {
        await deps.checkTarget(target.url);
      } catch (error) {
        if (error instanceof TargetRefusedError)
          throw new HttpError(
            400,
            target.field === "" ? error.reason : `${target.field} is not allowed: ${error.reason}`,
            await unchanged(),
          );
        throw error;
      }
    }
    return { key, url: url as URL, sent: body.url as string, value: checked.value, bucket, limit, unchanged };
  }

  return {
    /** Step 1 alone: the key's id, or null. */
    async authenticate(request: Request): Promise<number | null> {
      return (await keys.authenticate(request.headers.get("x-api-key"), deps.now()))?.id ?? null;
    },

    check,

    /**
     * Steps 1-5: admitted; else throws the HttpError that refuses the request. Store errors propagate.
     * `otherTargets` names the body's other addresses (a job's callback_url), judged at step 4 after
     * the target: a refused one answers 400 `<field> is not allowed: <the guard's reason>`.
     */
    async admit<T>(
      request: Request,
      validateBody: (body: Record<string, unknown>) => BodyCheck<T>,
      otherTargets: (value: T) => OtherTarget[] = () => [],
    ): Promise<Admitted<T>> {
      const { key, url, sent, value, bucket, limit } = await check(request, validateBody, otherTargets);
      // 5. The daily quota: one atomic statement.
      const now = deps.now();
      const admission = await quota.admit(bucket, limit, now);
      const headers = rateLimitHeaders(admission, now);
      if (!admission.admitted) throw new HttpError(429, rateLimitMessage(limit), headers);
      return {
        key,
        keyId: key.id,
        url,
        sent,
        value,
        headers,
        release: async () => {
          await quota.release(bucket, admission.day);
          const later = deps.now();
          return rateLimitHeaders(await quota.peek(bucket, limit, later), later);
        },
      };
    },
  };
}

/** A request that passed steps 1-4: its key, its URL (when it has one), its checked body, and its quota bucket. */
export interface Checked<T> {
  key: KeyRecord;
  url: URL;
  sent: string;
  value: T;
  bucket: string;
  limit: number;
  /** The rate-limit headers as they stand (nothing counted). */
  unchanged: () => Promise<Record<string, string>>;
}

export type Admission = ReturnType<typeof createAdmission>;
