// POST /api/generate: the contract's checks in order (key, body, URL, target, quota, capacity,
// crawl), each answering with its exact status and message.
import type { Database } from "bun:sqlite";
import { Elysia } from "elysia";
import { BodyReadError, PayloadTooLargeError, readBodyBytes } from "../http/body.ts";
import { authenticate } from "../keys/key-store.ts";
import { admit, peek, quotaForKey, rateLimitHeaders, rateLimitMessage, release } from "../quota/quota.ts";
import { API_KEY_SCHEME } from "../ops/docs.ts";
import type { CrawlResult } from "./crawler.ts";
import { parseCrawlOptions, type CrawlOptions } from "./crawl-options.ts";
import { CrawlSlots, ServiceBusyError } from "./crawl-slots.ts";
import { crawlErrorAnswer, TargetRefusedError } from "./errors.ts";
import { GenerateRequest, generateResponses } from "./model.ts";
import { INVALID_URL_MESSAGE, parseTargetUrl } from "./target-url.ts";

const BODY_LIMIT = 16 * 1024;
export const AUTH_FAILED_MESSAGE = "Authentication failed. Invalid or missing API key.";
/** Retry-After for a 503: long enough for a running crawl to make progress. */
const BUSY_RETRY_AFTER_SECONDS = 30;

export interface SitemapDeps {
  db: Database;
  now: () => Date;
  clientIp: (request: Request) => string;
  freeDailyLimit: number;
  slots: CrawlSlots;
  /** Step 4: throws TargetRefusedError for a forbidden target; a name that does not resolve passes (the crawl reports it). */
  checkTarget: (url: URL) => Promise<void>;
  crawl: (url: string, signal: AbortSignal, options: CrawlOptions) => Promise<CrawlResult>;
  /** --max-pages: the cap of the body's max_pages, and its default. */
  maxPages: number;
  /** Lifts the connection's idle timeout while a crawl runs or waits. */
  holdConnection?: (request: Request) => void;
}

const fail = (status: number, message: string, headers: Record<string, string> = {}) =>
  Response.json({ success: false, message }, { status, headers });

/** The body's `url` (parsed, and as sent) and crawl options, or the response that refuses the body (steps 2 and 3). */
async function readTargetUrl(
  request: Request,
  quotaHeaders: () => Record<string, string>,
  maxPagesCap: number,
): Promise<{ url: URL; sent: string; options: CrawlOptions } | Response> {
  let bytes: Uint8Array;
  try {
    bytes = await readBodyBytes(request, BODY_LIMIT);
  } catch (error) {
    if (error instanceof PayloadTooLargeError) return fail(413, "Request body is larger than 16 KiB.", quotaHeaders());
    if (error instanceof BodyReadError) return fail(error.status, error.message, quotaHeaders());
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    // SyntaxError, or RangeError for absurd nesting: either way not a body we can use.
    return fail(400, 'Request body must be JSON: {"url": "https://..."}.', quotaHeaders());
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return fail(400, 'Request body must be a JSON object: {"url": "https://..."}.', quotaHeaders());
  }
  const sent = (body as { url?: unknown }).url;
  const url = parseTargetUrl(sent);
  if (!url) return fail(400, INVALID_URL_MESSAGE, quotaHeaders());
  // Still step 3, before admission: an invalid option costs no quota.
  const parsed = parseCrawlOptions(body as Record<string, unknown>, { maxPagesCap });
  if (!parsed.ok) return fail(400, parsed.message, quotaHeaders());
  return { url, sent: sent as string, options: parsed.options };
}

/** Steps 2 to 7, for a request whose key is valid; its quota is `bucket` / `limit`. */
async function generateFor(request: Request, deps: SitemapDeps, bucket: string, limit: number, now: Date): Promise<Response> {
  const unchanged = () => rateLimitHeaders(peek(deps.db, bucket, limit, now), now);

  // 2-3. The body and its URL.
  const target = await readTargetUrl(request, unchanged, deps.maxPages);
  if (target instanceof Response) return target;
  const { url, sent, options } = target;

  // 4. The target address (checked again at every connection).
  try {
    await deps.checkTarget(url);
  } catch (error) {
    if (error instanceof TargetRefusedError) return fail(400, error.reason, unchanged());
    throw error;
  }

  // 5. The daily quota: one atomic statement.
  const admission = admit(deps.db, bucket, limit, now);
  const headers = rateLimitHeaders(admission, now);
  if (!admission.admitted) return fail(429, rateLimitMessage(limit), headers);

  // 6. Capacity. A request turned away here gets its admission back.
  deps.holdConnection?.(request);
  let releaseSlot: () => void;
  try {
    releaseSlot = await deps.slots.acquire(request.signal);
  } catch (error) {
    if (!(error instanceof ServiceBusyError)) throw error;
    release(deps.db, bucket, admission.day);
    const restored = rateLimitHeaders(peek(deps.db, bucket, limit, deps.now()), deps.now());
    return fail(503, error.message, { ...restored, "Retry-After": String(BUSY_RETRY_AFTER_SECONDS) });
  }

  // 7. The crawl.
  try {
    const result = await deps.crawl(url.href, request.signal, options);
    return Response.json(
      {
        success: true,
        message: "Sitemap generated successfully.",
        data: {
          url: result.url,
          sitemap: result.sitemap,
          url_count: result.entries.length,
          pages_crawled: result.pagesCrawled,
          truncated: result.truncated,
          duration_ms: Math.round(result.durationMs),
          generated_at: deps.now().toISOString(),
          excluded: result.excluded,
          excluded_examples: result.excluded_examples,
        },
      },
      { headers },
    );
  } catch (error) {
    const answer = crawlErrorAnswer(error, sent);
    if (answer) return fail(answer.status, answer.message, headers);
    throw error;
  } finally {
    releaseSlot();
  }
}

export const sitemapRoutes = (deps: SitemapDeps) =>
  new Elysia({ name: "sitemap" }).post(
    "/api/generate",
    async ({ request }) => {
      const now = deps.now();
      // 1. The key. A mistyped key fails its checksum without a database lookup.
      const key = authenticate(deps.db, request.headers.get("x-api-key"), now);
      if (!key) return fail(401, AUTH_FAILED_MESSAGE);
      const { bucket, limit } = quotaForKey(key, deps.clientIp(request), deps.freeDailyLimit);
      try {
        return await generateFor(request, deps, bucket, limit, now);
      } catch (error) {
        // Authenticated responses carry the quota headers, this one too when the database allows.
        console.error(`genapi: POST /api/generate failed: ${(error as Error)?.stack ?? error}`);
        let headers: Record<string, string> = {};
        try {
          headers = rateLimitHeaders(peek(deps.db, bucket, limit, now), now);
        } catch {}
        return fail(500, "Internal server error.", headers);
      }
    },
    {
      // The handler reads the body itself, after the key check and with a size cap.
      parse: "none",
      detail: {
        tags: ["sitemap"],
        summary: "Generate a sitemap",
        description:
          "Crawls the start URL's origin (robots.txt respected) and returns its XML sitemap: the indexable, " +
          "canonical, 200-status HTML pages. Free keys: 5 requests per client address per UTC day; premium keys: " +
          "their own daily limit. Checks run in this order: key (401), body (400/413), URL (400), target address " +
          "(400), quota (429), capacity (503), crawl (502).",
        security: [{ [API_KEY_SCHEME]: [] }],
        requestBody: {
          required: true,
          content: { "application/json": { schema: GenerateRequest, example: { url: "https://example.com/" } } },
        },
        responses: generateResponses,
      },
    },
  );
