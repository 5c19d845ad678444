// Steps 1-5 of POST /api/generate for POST /api/jobs on the SQLite database: key, body (with the
// jobs' own validator at step 3, after `url`), target address, quota. Refused requests answer
// exactly as /api/generate would; a request admitted here counts once.
import type { Database } from "bun:sqlite";
import { BodyReadError, PayloadTooLargeError, readBodyBytes } from "../http/body.ts";
import { authenticate } from "../keys/key-store.ts";
import { admit, peek, quotaForKey, rateLimitHeaders, rateLimitMessage, release } from "../quota/quota.ts";
import { TargetRefusedError } from "../sitemap/errors.ts";
import { INVALID_URL_MESSAGE, parseTargetUrl } from "../sitemap/target-url.ts";
import type { Admitted, BodyCheck, JobsDeps } from "./routes.ts";

const BODY_LIMIT = 16 * 1024;
const AUTH_FAILED = "Authentication failed. Invalid or missing API key.";

export interface AdmissionDeps {
  db: Database;
  now: () => Date;
  clientIp: (request: Request) => string;
  freeDailyLimit: number;
  checkTarget: (url: URL) => Promise<void>;
}

const fail = (status: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ success: false, message }, { status, headers });

export function sqliteJobAdmission(deps: AdmissionDeps): Pick<JobsDeps, "authenticate" | "admit"> {
  return {
    authenticate: async (request) => authenticate(deps.db, request.headers.get("x-api-key"), deps.now())?.id ?? null,
    async admit<T>(request: Request, validateBody: (body: Record<string, unknown>) => BodyCheck<T>): Promise<Admitted<T> | Response> {
      const now = deps.now();
      const key = authenticate(deps.db, request.headers.get("x-api-key"), now);
      if (!key) return fail(401, AUTH_FAILED);
      const { bucket, limit } = quotaForKey(key, deps.clientIp(request), deps.freeDailyLimit);
      const unchanged = () => rateLimitHeaders(peek(deps.db, bucket, limit, now), now);
      let bytes: Uint8Array;
      try {
        bytes = await readBodyBytes(request, BODY_LIMIT);
      } catch (error) {
        if (error instanceof PayloadTooLargeError) return fail(413, "Request body is larger than 16 KiB.", unchanged());
        if (error instanceof BodyReadError) return fail(error.status, error.message, unchanged());
        throw error;
      }
      let body: unknown;
      try {
        body = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        return fail(400, 'Request body must be JSON: {"url": "https://..."}.', unchanged());
      }
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        return fail(400, 'Request body must be a JSON object: {"url": "https://..."}.', unchanged());
      }
      const fields = body as Record<string, unknown>;
      const url = parseTargetUrl(fields.url);
      if (!url) return fail(400, INVALID_URL_MESSAGE, unchanged());
      const checked = validateBody(fields);
      if (!checked.ok) return fail(400, checked.message, unchanged());
      try {
        await deps.checkTarget(url);
      } catch (error) {
        if (error instanceof TargetRefusedError) return fail(400, error.reason, unchanged());
        throw error;
      }
      const admission = admit(deps.db, bucket, limit, now);
      const headers = rateLimitHeaders(admission, now);
      if (!admission.admitted) return fail(429, rateLimitMessage(limit), headers);
      return {
        keyId: key.id,
        sent: fields.url as string,
        value: checked.value,
        headers,
        release: async () => {
          release(deps.db, bucket, admission.day);
          const later = deps.now();
          return rateLimitHeaders(peek(deps.db, bucket, limit, later), later);
        },
      };
    },
  };
}
