// POST /api/generate: the contract's checks in order (key, body, URL, target, quota, capacity,
// crawl), each answering with its exact status and message: a refusal is an HttpError, answered by the
// plugin's onError (src/http/errors.ts) with the quota headers of an admitted request.
import { Elysia } from "elysia";
import { answerErrors, HttpError } from "../http/errors.ts";
import { API_KEY_SCHEME } from "../ops/docs.ts";
import { createAdmission, type AdmissionDeps, type Admitted, type BodyCheck } from "../admission/admission.ts";
import { type CrawlOptions, type CrawlResult, crawlErrorAnswer, crawlReport, parseCrawlOptions } from "../crawler/index.ts";
import { type CrawlSlots, ServiceBusyError } from "./crawl-slots.ts";
import { GenerateRequest, generateResponses } from "./model.ts";
import { with429Example } from "../http/openapi.ts";
import { rateLimitMessage } from "../quota/quota.ts";

export { AUTH_FAILED_MESSAGE } from "../admission/admission.ts";
/** Retry-After for a 503: long enough for a running crawl to make progress. */
const BUSY_RETRY_AFTER_SECONDS = 30;

export interface SitemapDeps extends AdmissionDeps {
  slots: CrawlSlots;
  crawl: (url: string, signal: AbortSignal, options: CrawlOptions) => Promise<CrawlResult>;
  /** --max-pages: the cap of the body's max_pages, and its default. */
  maxPages: number;
  /** --host-concurrency: the cap of the body's max_concurrency. */
  hostConcurrency: number;
  /** A Chromium was found: `render` other than never may be asked for. */
  renderAvailable: boolean;
  /** Where an unexpected failure (a 500) is told, one message, no newline. */
  log: (message: string) => void;
  /** Lifts the connection's idle timeout while a crawl runs or waits. */
  holdConnection?: (request: Request) => void;
}

/** Steps 6 and 7 for an admitted request. */
async function crawlFor(request: Request, deps: SitemapDeps, admitted: Admitted<CrawlOptions>): Promise<Response> {
  const { headers } = admitted;
  // 6. Capacity. A request turned away here gets its admission back.
  deps.holdConnection?.(request);
  let releaseSlot: () => void;
  try {
    releaseSlot = await deps.slots.acquire(request.signal);
  } catch (error) {
    if (!(error instanceof ServiceBusyError)) throw error;
    const restored = await admitted.release();
    throw new HttpError(503, error.message, { ...restored, "Retry-After": String(BUSY_RETRY_AFTER_SECONDS) });
  }

  // 7. The crawl.
  try {
    const result = await deps.crawl(admitted.url.href, request.signal, admitted.value);
    const { url, ...report } = crawlReport({ ...result, urlCount: result.entries.length, exclusions: result }, deps.now());
    return Response.json(
      { success: true, message: "Sitemap generated successfully.", data: { url, sitemap: result.sitemap, ...report } },
      { headers },
    );
  } catch (error) {
    const answer = crawlErrorAnswer(error, admitted.sent);
    if (answer) throw new HttpError(answer.status, answer.message, headers);
    throw error;
  } finally {
    releaseSlot();
  }
}

export const sitemapRoutes = (deps: SitemapDeps) => {
  const admission = createAdmission(deps);
  return new Elysia({ name: "sitemap" }).onError(answerErrors(deps.log)).post(
    "/api/generate",
    async ({ request, set }) => {
      const admitted = await admission.admit(request, (body): BodyCheck<CrawlOptions> => {
        const parsed = parseCrawlOptions(body, {
          maxPagesCap: deps.maxPages,
          hostConcurrency: deps.hostConcurrency,
          renderAvailable: deps.renderAvailable,
          ignoreNeedsAuth: true,
        });
        return parsed.ok ? { ok: true, value: parsed.options } : parsed;
      });
      // From here every answer carries the quota headers, a 500 or a store's 503 included (the
      // answer's own headers win: a 503 for capacity sends those after giving the admission back).
      Object.assign(set.headers, admitted.headers);
      return await crawlFor(request, deps, admitted);
    },
    {
      // The handler reads the body itself, after the key check and with a size cap.
      parse: "none",
      detail: {
        tags: ["sitemap"],
        summary: "Generate a sitemap",
        description:
          "Crawls the start URL's origin (robots.txt respected) and returns its XML sitemap: the indexable, " +
          `canonical, 200-status HTML pages. Free keys: ${deps.freeDailyLimit} requests per client address per UTC day; premium keys: ` +
          "their own daily limit. Checks run in this order: key (401), body (400/413), URL (400), target address " +
          "(400), quota (429), capacity (503), crawl (502).",
        security: [{ [API_KEY_SCHEME]: [] }],
        requestBody: {
          required: true,
          content: { "application/json": { schema: GenerateRequest, example: { url: "https://example.com/" } } },
        },
        responses: with429Example(generateResponses, rateLimitMessage(deps.freeDailyLimit)),
      },
    },
  );
};
