// Binds sites to the server: the routes' dependencies, the scheduler (unless --site-scheduler off),
// and what the job runner needs of sites (a run's history and pages, a successful run's change
// set). server.ts starts it after listening and stops it before the store closes.
import type { ServeConfig } from "../config/config.ts";
import { USER_AGENT } from "../config/version.ts";
import type { Resolver, TargetPolicy } from "../crawler/index.ts";
import type { JobCredentials } from "../jobs/job-credentials.ts";
import type { SiteRuns } from "../jobs/job-crawl.ts";
import type { JobFiles, JobQueue } from "../jobs/job-store.ts";
import type { RunnerDeps } from "../jobs/runner.ts";
import type { KeyRecord, KeyStore } from "../keys/key-store.ts";
import type { QuotaStore } from "../quota/quota.ts";
import { siteRoutes, type SitesDeps } from "./routes.ts";
import { completeRun, type SiteRunDeps, siteRun, startScheduler } from "./runs.ts";
import type { SiteStore } from "./site-store.ts";

export type SiteConfig = Pick<
  ServeConfig,
  "jobMaxPages" | "hostConcurrency" | "jobQueue" | "freeDailyLimit" | "siteScheduler" | "allowPrivateTargets" | "allowTargets"
>;

export interface SiteServiceDeps {
  /** The site statements of requests (short deadline, 503), and of the scheduler and runs. */
  store: SiteStore;
  background: SiteStore;
  jobs: JobQueue & JobFiles;
  keys: KeyStore;
  quota: QuotaStore;
  /** Steps 1-4 of /api/generate (src/admission/admission.ts's check). */
  check: SitesDeps["check"];
  credentials: JobCredentials;
  renderAvailable: boolean;
  /** Tells this process's job runner that a job is waiting (set once the runner exists). */
  wake: () => void;
  resolve: Resolver;
  log: (message: string) => void;
}

export function createSiteService(config: SiteConfig, deps: SiteServiceDeps) {
  const policy: TargetPolicy = { allowPrivate: config.allowPrivateTargets, allowTargets: config.allowTargets };
  const runDeps = (sites: SiteStore): SiteRunDeps => ({
    sites,
    quota: deps.quota,
    keyOf: (keyId) => deps.keys.active(keyId),
    credentials: deps.credentials,
    maxQueued: config.jobQueue,
    freeDailyLimit: config.freeDailyLimit,
    wake: deps.wake,
    now: Date.now,
  });
  let scheduler: { stop: () => Promise<void> } | undefined;

  return {
    routes: siteRoutes({
      store: deps.store,
      jobs: deps.jobs,
      // Step 1 alone, as admission reads it.
      key: (request): Promise<KeyRecord | null> => deps.keys.authenticate(request.headers.get("x-api-key"), new Date()),
      check: deps.check,
      limits: { maxPagesCap: config.jobMaxPages, hostConcurrency: config.hostConcurrency, renderAvailable: deps.renderAvailable },
      credentials: deps.credentials,
      runs: runDeps(deps.store),
      now: Date.now,
      log: deps.log,
    }),
    /** For the job runner: a site's run reads its history and leaves its pages. */
    siteRuns: {
      open: async (siteId, jobId, upcoming) => {
        const site = await deps.background.get(siteId);
        return site ? siteRun(deps.background, jobId, site.lastSuccess, upcoming) : null;
      },
    } satisfies SiteRuns,
    /** For the job runner: a site's run that succeeded gains its change set (and IndexNow's answer). */
    succeeded: (async (job, result) =>
      job.siteId
        ? completeRun(
            { sites: deps.background, policy, resolve: deps.resolve, userAgent: USER_AGENT, log: deps.log },
            job.siteId,
            job.id,
            result,
          )
        : result) satisfies NonNullable<RunnerDeps["succeeded"]>,
    start() {
      if (config.siteScheduler) scheduler = startScheduler({ ...runDeps(deps.background), log: deps.log });
    },
    async stop() {
      await scheduler?.stop();
    },
  };
}
