// Binds jobs to the server: the runner (crawls with the shared engine through the guarded fetcher),
// the routes' dependencies, retention. server.ts starts it after listening and stops it on SIGTERM
// (running jobs handed back), before the store closes.
import { hostname } from "node:os";
import type { ServeConfig } from "../config/config.ts";
import {
  type CrawlNetwork,
  createCrawlNetwork,
  quietPoliteness,
  type Renderer,
  type Resolver,
  systemResolver,
  type TargetPolicy,
} from "../crawler/index.ts";
import { USER_AGENT } from "../config/version.ts";
import { createNotifier } from "./callback.ts";
import { createJobCrawl, type SiteRuns } from "./job-crawl.ts";
import { type JobCredentials, noJobCredentials } from "./job-credentials.ts";
import type { JobStore } from "./job-store.ts";
import { publishResult } from "./publish.ts";
import { startRetention } from "./retention.ts";
import { jobRoutes, jobView, type JobsDeps } from "./routes.ts";
import { JobRunner, type RunnerDeps } from "./runner.ts";

export type JobConfig = Pick<
  ServeConfig,
  | "jobMaxPages"
  | "jobTimeoutSeconds"
  | "maxJobs"
  | "jobQueue"
  | "jobRetentionDays"
  | "jobLeaseSeconds"
  | "allowPrivateTargets"
  | "allowTargets"
  | "freeDailyLimit"
  | "hostConcurrency"
  | "hostDelayMs"
>;

export interface JobServiceDeps {
  /** The job store of requests (short deadline, 503). */
  store: JobStore;
  /** The job store of the runner, checkpoints, publishing, callbacks and retention (its own, longer deadline). */
  background: JobStore;
  authenticate: JobsDeps["authenticate"];
  admit: JobsDeps["admit"];
  log: (message: string) => void;
  resolve?: Resolver;
  /** The server's one network, shared with /api/generate's crawls; a service made alone has its own. */
  network?: CrawlNetwork;
  /** The process's browser, for jobs with `render`; none: render is refused (400). */
  renderer?: Renderer | null;
  /** Page requests of each job run, for the metrics. */
  countPages?: (pages: number) => void;
  /** Seals and opens jobs' credentials under the server's secret key; none: jobs with `auth` are refused. */
  credentials?: JobCredentials;
  /** Site runs: their history and pages (job-crawl.ts), and what a successful one adds to its result (its change set). */
  siteRuns?: SiteRuns;
  succeeded?: RunnerDeps["succeeded"];
}

export function createJobService(config: JobConfig, deps: JobServiceDeps) {
  // Requests use `deps.store`; everything below runs off the request path.
  const store = deps.background;
  const credentials = deps.credentials ?? noJobCredentials;
  const policy: TargetPolicy = { allowPrivate: config.allowPrivateTargets, allowTargets: config.allowTargets };
  const resolve = deps.resolve ?? systemResolver;
  const leaseMs = config.jobLeaseSeconds * 1000;
  // Unique per process, readable in the store when an operator wonders who holds a job.
  const owner = `${hostname()}:${process.pid}:${Buffer.from(crypto.getRandomValues(new Uint8Array(6))).toString("base64url")}`;
  const runner = new JobRunner({
    store,
    owner,
    maxJobs: config.maxJobs,
    leaseMs,
    jobTimeoutMs: config.jobTimeoutSeconds * 1000,
    pollMs: 1000,
    now: Date.now,
    crawl: createJobCrawl({
      store,
      owner,
      leaseMs,
      // The crawler's HTTP/1.1 client, one keep-alive pool for every job; callbacks POST with fetch (callback.ts).
      crawl: {
        fetch:
          deps.network ??
          createCrawlNetwork({ policy, resolve, politeness: { hostConcurrency: config.hostConcurrency, hostDelayMs: config.hostDelayMs } }),
        now: Date.now,
        userAgent: USER_AGENT,
        renderer: deps.renderer,
      },
      credentials,
      sites: deps.siteRuns,
    }),
    succeeded: deps.succeeded,
    publish: (job, truncated, progress, reports) =>
      publishResult(store, job, {
        truncated,
        progress,
        now: new Date(),
        // A job finished without this process's crawl (cancelled while its owner was gone): no counts.
        politeness:
          reports?.politeness ??
          quietPoliteness(job.options.max_concurrency ?? config.hostConcurrency, Math.max(job.options.delay_ms ?? 0, config.hostDelayMs)),
        render: reports?.render ?? { mode: job.options.render ?? "never", rendered: false, pages_rendered: 0 },
        ...(reports?.checks ? { checks: reports.checks } : {}),
      }),
    notify: createNotifier({
      store,
      policy,
      resolve,
      userAgent: USER_AGENT,
      view: async (id) => {
        const job = await store.get(id);
        return job ? jobView(job) : null;
      },
      log: deps.log,
    }),
    log: deps.log,
    countPages: deps.countPages,
    claimsCredentials: credentials.available,
  });
  let retention: { stop: () => Promise<void> } | undefined;
  const stopping = new AbortController();

  const routeDeps: JobsDeps = {
    store: deps.store,
    now: () => new Date(),
    authenticate: deps.authenticate,
    admit: deps.admit,
    maxPages: config.jobMaxPages,
    hostConcurrency: config.hostConcurrency,
    renderAvailable: Boolean(deps.renderer),
    maxQueued: config.jobQueue,
    freeDailyLimit: config.freeDailyLimit,
    wake: () => runner.wake(),
    cancelled: (id) => runner.cancel(id),
    log: deps.log,
    stopSignal: stopping.signal,
    credentials,
  };

  return {
    routes: jobRoutes(routeDeps),
    runner,
    start() {
      runner.start();
      retention = startRetention({ store, retentionDays: config.jobRetentionDays, now: Date.now, log: deps.log });
    },
    /** Hands running jobs back (their progress kept) and stops retention. */
    async stop() {
      stopping.abort();
      await Promise.all([runner.stop(), retention?.stop()]);
    },
  };
}
