// The job endpoints: POST /api/jobs (steps 1-5 of /api/generate, then 202), the listing, one job,
// its event stream, its sitemap files, its link report (links.json), and DELETE. Every request needs the key that created the
// job; another key or an unknown id answers 404 `Job not found.` (the `ownJob` macro). Handlers refuse by throwing an
// HttpError; the plugin's onError (src/http/errors.ts) answers it, a store outage (503) and anything else (a logged 500).
import { Elysia, t } from "elysia";
import { API_KEY_QUERY_SCHEME, API_KEY_SCHEME } from "../ops/docs.ts";
import { type CrawlOptions, parseCrawlOptions, parseTargetUrl, redactCrawlOptions } from "../crawler/index.ts";
import { AUTH_NEEDS_KEY_MESSAGE, type JobCredentials, noJobCredentials } from "./job-credentials.ts";
import { LINKS_PART, newCallbackSecret, newJobId, type JobFiles, type JobQueue, type StoredJob } from "./job-store.ts";
import { partNumber } from "./publish.ts";
import {
  createJobResponses,
  deleteJobResponses,
  eventsResponses,
  CANCELLED_EMPTY,
  FINISHED,
  getJobResponses,
  JobRequestModel,
  linksResponses,
  listJobsResponses,
  partResponses,
  sitemapResponses,
  type Job,
} from "./model.ts";
import { jobEvents } from "./events.ts";
import { AUTH_FAILED_MESSAGE, type Admitted, type BodyCheck, type OtherTarget } from "../admission/admission.ts";
import { type KeyIn, ownership } from "../admission/ownership.ts";
import { answerErrors, HttpError } from "../http/errors.ts";
import { with429Example } from "../http/openapi.ts";
import { rateLimitMessage } from "../quota/quota.ts";

export const JOB_NOT_FOUND = "Job not found.";
export const CALLBACK_URL_MESSAGE = "callback_url must be a full URL that includes http:// or https://.";
/**
 * How long DELETE of a running job waits for its runner to publish what it found: the runner sees
 * the cancel at once here, within CANCEL_WATCH_MS on another instance, and stops its crawl within 2 s.
 */
const CANCEL_OUTCOME_MS = 5_000;
const CANCEL_POLL_MS = 50;
/** Retry-After of a full queue: a queued job takes minutes, not seconds. */
const QUEUE_FULL_RETRY_AFTER_SECONDS = 60;

/** The 503 of a full job queue (jobs and sites' runs alike), with `headers` (the request's rate limits). */
export function queueFull(headers: Record<string, string> = {}): HttpError {
  return new HttpError(503, "The service is busy: too many sitemap jobs are waiting. Try again later.", {
    ...headers,
    "Retry-After": String(QUEUE_FULL_RETRY_AFTER_SECONDS),
  });
}

/** `?limit=` (1-100, default 20) and `?cursor=` (a `next_cursor`) of a listing; a bad one throws its 400. */
export function paging(request: Request): { limit: number; before: number | null } {
  const params = new URL(request.url).searchParams;
  const limitText = params.get("limit");
  const limit = limitText === null ? 20 : /^\d{1,3}$/.test(limitText) ? Number(limitText) : 0;
  if (limit < 1 || limit > 100) throw new HttpError(400, "limit must be an integer from 1 to 100.");
  const cursor = params.get("cursor");
  const before = cursor === null || cursor === "" ? null : seqOf(cursor);
  if (cursor && before === null) throw new HttpError(400, "cursor must be a next_cursor from an earlier page.");
  return { limit, before };
}

export type { Admitted, BodyCheck } from "../admission/admission.ts";

export interface JobsDeps {
  /** The queue and the files: what requests read and change. */
  store: JobQueue & JobFiles;
  now: () => Date;
  /** Step 1 alone: the key's id, or null. */
  authenticate: (request: Request) => Promise<number | null>;
  /**
   * Steps 1-5 of /api/generate with `validateBody` at step 3 and `otherTargets` (callback_url) judged
   * by the address guard at step 4: admitted; else it throws the HttpError that refuses it.
   */
  admit: <T>(
    request: Request,
    validateBody: (body: Record<string, unknown>) => BodyCheck<T>,
    otherTargets?: (value: T) => OtherTarget[],
  ) => Promise<Admitted<T>>;
  /** --job-max-pages and --job-queue. */
  maxPages: number;
  /** --host-concurrency: the cap of the body's max_concurrency. */
  hostConcurrency: number;
  /** A Chromium was found: `render` other than never may be asked for. */
  renderAvailable: boolean;
  maxQueued: number;
  /** --free-daily-limit, for the document's 429 example. */
  freeDailyLimit: number;
  /** Tells this process's runner that a job is waiting. */
  wake: () => void;
  /** Tells this process's runner that a running job was cancelled (if it runs here, it stops at once). */
  cancelled?: (jobId: string) => void;
  /** Where an unexpected failure (a 500) is told, one message, no newline. */
  log: (message: string) => void;
  /** How often the event stream looks at the job (ms); at most 2 s. */
  eventsPollMs?: number;
  /** Aborts at shutdown: event streams end (clients reconnect elsewhere) instead of holding the stop. */
  stopSignal?: AbortSignal;
  /** Seals option `auth` for the store; none: jobs with `auth` are refused. */
  credentials?: JobCredentials;
}

interface JobBody {
  options: CrawlOptions;
  callbackUrl: string | null;
}

/**
 * The job as the API shows it, its reads, lists, events and callbacks alike: `result` or `error`
 * only once it has one, `options.auth` redacted (the store holds it redacted too).
 */
export function jobView(job: StoredJob): Job {
  const view: Job = {
    id: job.id,
    status: job.status,
    url: job.url,
    options: redactCrawlOptions(job.options),
    created_at: job.createdAt,
    started_at: job.startedAt,
    finished_at: job.finishedAt,
    progress: job.progress,
  };
  if (job.result) view.result = job.result;
  if (job.error) view.error = job.error;
  if (job.siteId) view.site_id = job.siteId;
  return view;
}

function validateJobBody(maxPages: number, hostConcurrency: number, renderAvailable: boolean, credentials: JobCredentials) {
  return (body: Record<string, unknown>): BodyCheck<JobBody> => {
    const parsed = parseCrawlOptions(body, {
      maxPagesCap: maxPages,
      hostConcurrency,
      renderAvailable,
      publishes: true,
      ignoreNeedsAuth: true,
    });
    if (!parsed.ok) return parsed;
    if (parsed.options.auth && !credentials.available) return { ok: false, message: AUTH_NEEDS_KEY_MESSAGE };
    let callbackUrl: string | null = null;
    if (body.callback_url !== undefined) {
      const url = parseTargetUrl(body.callback_url);
      if (!url) return { ok: false, message: CALLBACK_URL_MESSAGE };
      callbackUrl = url.href;
    }
    return { ok: true, value: { options: parsed.options, callbackUrl } };
  };
}

export const cursorOf = (seq: number) => Buffer.from(String(seq)).toString("base64url");
export function seqOf(cursor: string): number | null {
  const text = Buffer.from(cursor, "base64url").toString();
  return /^[1-9]\d{0,15}$/.test(text) ? Number(text) : null;
}

/** True when the request's Accept-Encoding allows gzip (RFC 9110 12.5.3: q=0 refuses it). */
export function acceptsGzip(header: string | null): boolean {
  if (!header) return false;
  let gzip: number | null = null;
  let star: number | null = null;
  for (const part of header.split(",")) {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = q ? Number(q.slice(2)) : 1;
    if (coding === "gzip" || coding === "x-gzip") gzip = weight;
    else if (coding === "*") star = weight;
  }
  return (gzip ?? star ?? 0) > 0;
}

export function xmlFile(gzipped: Uint8Array, request: Request): Response {
  const headers: Record<string, string> = { "content-type": "application/xml; charset=utf-8", vary: "Accept-Encoding" };
  if (acceptsGzip(request.headers.get("accept-encoding"))) {
    return new Response(gzipped as Uint8Array<ArrayBuffer>, { headers: { ...headers, "content-encoding": "gzip" } });
  }
  return new Response(Bun.gunzipSync(gzipped as Uint8Array<ArrayBuffer>), { headers });
}

/** links.json: JSON, gzip-compressed as stored when the client accepts it. */
function jsonFile(gzipped: Uint8Array, request: Request): Response {
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8", vary: "Accept-Encoding" };
  if (acceptsGzip(request.headers.get("accept-encoding"))) {
    return new Response(gzipped as Uint8Array<ArrayBuffer>, { headers: { ...headers, "content-encoding": "gzip" } });
  }
  return new Response(Bun.gunzipSync(gzipped as Uint8Array<ArrayBuffer>), { headers });
}

const idParam = t.Object({ id: t.String({ description: "The job id from POST /api/jobs." }) });
const secured = { security: [{ [API_KEY_SCHEME]: [] }], tags: ["jobs"] };

export const jobRoutes = (deps: JobsDeps) => {
  const credentials = deps.credentials ?? noJobCredentials;
  const validate = validateJobBody(deps.maxPages, deps.hostConcurrency, deps.renderAvailable, credentials);

  const ownJob = ownership({ authenticate: deps.authenticate, load: (id) => deps.store.get(id), notFound: JOB_NOT_FOUND });

  /**
   * A cancelled running job once its runner has published its outcome (the result, or the 409 error
   * when nothing was listed), looked for every CANCEL_POLL_MS; after CANCEL_OUTCOME_MS (a runner
   * that died: the next claim publishes it) the job as it stands.
   */
  async function outcomeOf(id: string): Promise<StoredJob | null> {
    const deadline = Date.now() + CANCEL_OUTCOME_MS;
    for (;;) {
      const current = await deps.store.get(id);
      if (!current || current.result !== null || current.error !== null || Date.now() >= deadline) return current;
      await Bun.sleep(CANCEL_POLL_MS);
    }
  }

  return new Elysia({ name: "jobs" })
    .onError(answerErrors(deps.log))
    .macro({
      /** `ownJob: "header"` on a `:id` route: the handler gets `job`, the request's key's own; else 401 or 404. */
      ownJob: (keyIn: KeyIn) => ({
        resolve: async ({ request, params }: { request: Request; params: Record<string, string | undefined> }) => ({
          job: await ownJob(request, params.id ?? "", keyIn),
        }),
      }),
    })
    .post(
      "/api/jobs",
      async ({ request }) => {
        // The callback's address is judged at creation, as the target is (and again when sending).
        const admitted = await deps.admit(request, validate, ({ callbackUrl }) =>
          callbackUrl ? [{ field: "callback_url", url: new URL(callbackUrl) }] : [],
        );
        const { options, callbackUrl } = admitted.value;
        const now = deps.now().toISOString();
        const id = newJobId();
        const callbackSecret = callbackUrl ? newCallbackSecret() : null;
        let created: boolean;
        try {
          // The row keeps `auth` redacted in its options, and sealed (with this job's id) beside them.
          const sealed = options.auth ? await credentials.seal(id, options.auth) : null;
          created = await deps.store.create(
            {
              id,
              keyId: admitted.keyId,
              url: admitted.sent,
              options: redactCrawlOptions(options),
              callbackUrl,
              callbackSecret,
              createdAt: now,
              credentials: sealed,
            },
            deps.maxQueued,
          );
        } catch (error) {
          await admitted.release().catch(() => {});
          throw error;
        }
        if (!created) {
          const headers = await admitted.release();
          throw queueFull(headers);
        }
        deps.wake();
        const job = (await deps.store.get(id))!;
        const data = callbackSecret ? { ...jobView(job), callback_secret: callbackSecret } : jobView(job);
        return Response.json(
          { success: true, message: "Sitemap job accepted.", data },
          { status: 202, headers: { ...admitted.headers, Location: `/api/jobs/${id}` } },
        );
      },
      {
        parse: "none",
        detail: {
          ...secured,
          summary: "Start a sitemap job",
          description:
            "For crawls that take minutes or hours, or list more than 50,000 URLs. Checks and quota as POST /api/generate " +
            "(a job counts once, at creation); then 202 with the job. Watch it with GET /api/jobs/{id}/events or poll " +
            "GET /api/jobs/{id}; with `callback_url`, the finished job is POSTed there, signed `X-Genapi-Signature: " +
            "sha256=<hex HMAC-SHA256 of the body>` with the `callback_secret` shown once in this answer.",
          requestBody: {
            required: true,
            content: {
              "application/json": { schema: JobRequestModel as never, example: { url: "https://example.com/", max_pages: 20000 } },
            },
          },
          responses: with429Example(createJobResponses, rateLimitMessage(deps.freeDailyLimit)),
        },
      },
    )
    .get(
      "/api/jobs",
      async ({ request }) => {
        const keyId = await deps.authenticate(request);
        if (keyId === null) throw new HttpError(401, AUTH_FAILED_MESSAGE);
        const { limit, before } = paging(request);
        const rows = await deps.store.list(keyId, limit + 1, before);
        const page = rows.slice(0, limit);
        const next = rows.length > limit ? cursorOf(page[page.length - 1]!.seq) : null;
        return Response.json({ success: true, message: "Jobs listed.", data: { jobs: page.map(jobView), next_cursor: next } });
      },
      {
        query: t.Object({
          limit: t.Optional(t.String({ description: "Jobs per page, 1 to 100 (default 20).", examples: ["20"] })),
          cursor: t.Optional(t.String({ description: "`data.next_cursor` of the previous page." })),
        }),
        detail: { ...secured, summary: "List your jobs, newest first", responses: listJobsResponses },
      },
    )
    .get("/api/jobs/:id", ({ job }) => Response.json({ success: true, message: "Job found.", data: jobView(job) }), {
      ownJob: "header",
      params: idParam,
      detail: { ...secured, summary: "A job: status, progress, result", responses: getJobResponses },
    })
    .get(
      "/api/jobs/:id/events",
      ({ request, job }) =>
        jobEvents(jobView(job), {
          load: async () => {
            const current = await deps.store.get(job.id);
            return current ? jobView(current) : null;
          },
          // Final once it has its outcome; a cancelled job's runner publishes it within moments.
          isFinished: (view) => FINISHED.includes(view.status) && (view.result !== undefined || view.error !== undefined),
          pollMs: deps.eventsPollMs ?? 1000,
          signal: deps.stopSignal ? AbortSignal.any([request.signal, deps.stopSignal]) : request.signal,
          first: jobView(job),
        }),
      {
        // A browser's EventSource cannot send headers: it may name the key in `api_key` instead.
        ownJob: "header or query",
        params: idParam,
        query: t.Object({
          api_key: t.Optional(t.String({ description: "The API key, for clients that cannot send X-API-Key (a browser's EventSource)." })),
        }),
        detail: {
          ...secured,
          // Either the header or `?api_key=`: a validating proxy must let a browser's request through.
          security: [{ [API_KEY_SCHEME]: [] }, { [API_KEY_QUERY_SCHEME]: [] }],
          summary: "Watch a job (Server-Sent Events)",
          description:
            "`curl -N`, a browser's EventSource (which cannot send headers: pass the key as `?api_key=`) or Swagger UI. " +
            "Finished jobs get their `done` event at once.",
          responses: eventsResponses,
        },
      },
    )
    .get(
      "/api/jobs/:id/sitemap.xml",
      async ({ request, job }) => {
        const file = job.result && job.status !== "failed" ? await deps.store.getPart(job.id, 0) : null;
        if (!file) throw new HttpError(409, `Job ${job.id} is ${job.status}.`);
        return xmlFile(file, request);
      },
      {
        ownJob: "header",
        params: idParam,
        detail: { ...secured, summary: "The job's sitemap (or sitemap index)", responses: sitemapResponses },
      },
    )
    .get(
      "/api/jobs/:id/links.json",
      async ({ request, job }) => {
        if (!job.options.link_report) throw new HttpError(404, `Job ${job.id} was run without link_report.`);
        const file = job.result?.links && job.status !== "failed" ? await deps.store.getPart(job.id, LINKS_PART) : null;
        if (!file) throw new HttpError(404, `Job ${job.id} is ${job.status}.`);
        return jsonFile(file, request);
      },
      {
        ownJob: "header",
        params: idParam,
        detail: {
          ...secured,
          summary: "The job's link report: broken links, redirects, sitemap errors",
          description:
            "For a job run with `link_report`: the full lists (`result.links` holds their lengths), each sorted by url. A job cancelled while queued crawled nothing and has none.",
          responses: linksResponses,
        },
      },
    )
    .get(
      "/api/jobs/:id/:part",
      async ({ request, params, job }) => {
        const gzipped = job.options.gzip_files === true;
        const n = partNumber(params.part, gzipped);
        const parts = job.result?.sitemap_parts ?? 0;
        const file = n !== null && n <= parts ? await deps.store.getPart(job.id, n) : null;
        if (!file) throw new HttpError(404, `Not found: ${new URL(request.url).pathname}`);
        // gzip_files: the part is a .gz file, served as the stored bytes.
        if (gzipped) return new Response(file as Uint8Array<ArrayBuffer>, { headers: { "content-type": "application/gzip" } });
        return xmlFile(file, request);
      },
      {
        ownJob: "header",
        params: t.Object({
          id: t.String({ description: "The job id." }),
          part: t.String({
            description: "`sitemap-<n>.xml` (`sitemap-<n>.xml.gz` for a job with `gzip_files`), n from 1 to result.sitemap_parts.",
            examples: ["sitemap-1.xml"],
          }),
        }),
        detail: {
          ...secured,
          summary: "Part n of a split sitemap: sitemap-<n>.xml, or sitemap-<n>.xml.gz (application/gzip) with gzip_files",
          responses: partResponses,
        },
      },
    )
    .delete(
      "/api/jobs/:id",
      async ({ job }) => {
        if (FINISHED.includes(job.status)) {
          await deps.store.remove(job.id);
          return Response.json({ success: true, message: "Job deleted." });
        }
        const now = deps.now().toISOString();
        // A queued job listed nothing: it ends with the 409 error at once. A running one's runner
        // stops its crawl and publishes what it found (on whichever instance runs it).
        const before = await deps.store.cancel(job.id, now, CANCELLED_EMPTY);
        if (before === null) throw new HttpError(404, JOB_NOT_FOUND);
        if (before === "running") deps.cancelled?.(job.id);
        if (FINISHED.includes(before)) {
          // It finished meanwhile: DELETE of a finished job deletes it.
          await deps.store.remove(job.id);
          return Response.json({ success: true, message: "Job deleted." });
        }
        // A running job's runner (here or on another instance) stops its crawl and publishes what
        // it found within moments: the answer waits for that, so it holds the result or the error.
        const current = before === "running" ? await outcomeOf(job.id) : await deps.store.get(job.id);
        return Response.json({ success: true, message: "Job cancelled.", data: current ? jobView(current) : undefined });
      },
      {
        ownJob: "header",
        params: idParam,
        detail: { ...secured, summary: "Cancel a running job, or delete a finished one", responses: deleteJobResponses },
      },
    );
};
