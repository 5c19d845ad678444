// Serves the app: opens the database, listens, logs each request, and stops gracefully on
// SIGTERM/SIGINT (stop accepting, refuse queued crawls, let running requests finish within the
// crawl timeout plus 5 s, close the database).
import type { Server } from "bun";
import { createApp } from "./app.ts";
import { type ServeConfig, UsageError } from "./config/config.ts";
import { openStore } from "./open-store.ts";
import { isPostgresUrl, redactSpec, type Store } from "./db/store.ts";
import { INTERNAL_ERROR_MESSAGE, jsonError } from "./http/errors.ts";
import { createJobService } from "./jobs/service.ts";
import { createSiteService } from "./sites/service.ts";
import { batchedWriter } from "./http/log-writer.ts";
import { routableRequest } from "./http/entry.ts";
import { withRequestLog } from "./http/request-log.ts";
import { createMetrics } from "./metrics/metrics.ts";
import { metricsRoutes } from "./metrics/routes.ts";
import { passwordFastLane } from "./password/fast-lane.ts";
import { clientAddressResolver } from "./quota/client-address.ts";
import { CrawlSlots } from "./sitemap/crawl-slots.ts";
import { createAdmission } from "./admission/admission.ts";
import { createSitemapService } from "./sitemap/service.ts";
import { VERSION } from "./config/version.ts";
import { Browser, createCrawlNetwork, findChromium, type Renderer, systemResolver } from "./crawler/index.ts";
import { openSecretKeys } from "./secrets/secret-key.ts";
import { jobCredentials } from "./jobs/job-credentials.ts";

/**
 * Bun answers a bare 413 itself above this. The endpoints enforce their own caps (64 KiB, 16 KiB)
 * while streaming, after their own earlier checks (the API key comes first), so Bun's is set far
 * above theirs and never answers instead of them.
 */
const MAX_REQUEST_BODY = 1024 * 1024 * 1024;
/** Seconds a connection may stay silent; crawl requests lift it for themselves. */
const IDLE_TIMEOUT = 30;
/** Extra time on top of the crawl timeout that running requests get at shutdown. */
const SHUTDOWN_GRACE_MS = 5000;
/** After that, crawls are stopped and get this long to send what they found. */
const HARD_STOP_MS = 2000;

export interface RunningServer {
  server: Server<undefined>;
  url: string;
  stop: () => Promise<void>;
}

export interface ServerIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
}

export class ListenError extends Error {
  override name = "ListenError";
}

/**
 * Listens (ListenError) and opens the store (StoreOpenError). With SQLite the port is bound first,
 * so a start that fails (a port in use) leaves no new database file behind; requests that arrive
 * in the few milliseconds before the store is open wait for it. PostgreSQL opens first: its first
 * connection may be retried for 30 s, during which the port stays closed rather than hold requests.
 */
export async function startServer(config: ServeConfig, io: ServerIo): Promise<RunningServer> {
  // Problems worth an operator's attention: one stderr line each (stdout holds the request log).
  const log = (message: string) => io.stderr(`genapi: ${message}\n`);
  const renderer = rendererFor(config, log);
  // Before the port and the database: a bad key file stops serve with nothing left behind (SecretKeyError).
  const secretKeys = await openSecretKeys({
    file: config.secretKeyFile,
    sqlitePath: isPostgresUrl(config.dbPath) ? null : config.dbPath,
    log,
  });
  const peers = new WeakMap<Request, string>();
  const clientAddress = clientAddressResolver(config.trustProxy);
  let handle: ((request: Request) => Response | Promise<Response>) | undefined;
  let opened: (ready: NonNullable<typeof handle>) => void = () => {};
  const whenOpen = new Promise<NonNullable<typeof handle>>((resolve) => (opened = resolve));
  let server!: Server<undefined>;
  const listen = () => {
    try {
      server = Bun.serve({
        hostname: config.host,
        port: config.port,
        // Bun shares a port between processes by default; a second genapi must fail instead.
        reusePort: false,
        maxRequestBodySize: MAX_REQUEST_BODY,
        idleTimeout: IDLE_TIMEOUT,
        fetch(request, srv) {
          const peer = srv.requestIP(request)?.address ?? null;
          peers.set(request, clientAddress(peer, request.headers.get("x-forwarded-for")));
          // Before anything reads the URL: a short or odd Host must not steer routing or the log.
          const routable = routableRequest(request);
          return handle ? handle(routable) : whenOpen.then((ready) => ready(routable));
        },
        error(error) {
          io.stderr(`genapi: unhandled error: ${error.stack || `${error.name}: ${error.message}`}\n`);
          return jsonError(null, 500, INTERNAL_ERROR_MESSAGE);
        },
      });
    } catch (error) {
      const code = (error as { code?: string }).code;
      const reason = code === "EADDRINUSE" ? "address in use" : (error as Error).message;
      throw new ListenError(`cannot listen on ${config.host}:${config.port}: ${reason}`);
    }
  };
  const bindFirst = !isPostgresUrl(config.dbPath);
  if (bindFirst) listen();
  let store: Store;
  try {
    // While PostgreSQL is still unreachable at start: a log line on stdout, so stderr keeps the one
    // line that says why serve gave up, if it does.
    store = await openStore(config.dbPath, {
      purpose: "serve",
      log: (msg) => io.stdout(`${JSON.stringify({ time: new Date().toISOString(), msg })}\n`),
    });
  } catch (error) {
    if (bindFirst) await server.stop(true);
    throw error;
  }
  const clientIp = (request: Request) => peers.get(request) ?? "unknown";
  const slots = new CrawlSlots(config.maxCrawls, config.crawlQueue);
  const hardStop = new AbortController();
  // One network for every crawl of the process, /api/generate's and the jobs', so that each host
  // has one gate here, and through the store's host leases, one share among all processes.

  const metrics = createMetrics({
    crawls: () => ({ running: slots.active, queued: slots.queued }),
    jobCounts: () => store.jobs.counts(),
  });
  const network = createCrawlNetwork({
    policy: { allowPrivate: config.allowPrivateTargets, allowTargets: config.allowTargets },
    politeness: { hostConcurrency: config.hostConcurrency, hostDelayMs: config.hostDelayMs },
    coordinator: store.hosts,
    onThrottled: () => metrics.crawlThrottled(),
  });
  const sitemap = createSitemapService(config, { stopSignal: hardStop.signal, network, renderer });
  const admissionDeps = {
    keys: store.keys,
    quota: store.quota,
    now: () => new Date(),
    clientIp,
    freeDailyLimit: config.freeDailyLimit,
    checkTarget: sitemap.checkTarget,
  };
  const admission = createAdmission(admissionDeps);
  const credentials = jobCredentials(secretKeys);
  const sites = createSiteService(config, {
    store: store.sites,
    background: store.backgroundSites,
    jobs: store.jobs,
    keys: store.keys,
    quota: store.quota,
    check: admission.check,
    credentials,
    renderAvailable: renderer !== null,
    wake: () => jobs.runner.wake(),
    resolve: systemResolver,
    log,
  });
  const jobs = createJobService(config, {
    store: store.jobs,
    background: store.backgroundJobs,
    authenticate: admission.authenticate,
    admit: admission.admit,
    log,
    network,
    renderer,
    countPages: (pages) => metrics.crawlPages(pages),
    credentials,
    siteRuns: sites.siteRuns,
    succeeded: sites.succeeded,
  });
  const app = createApp({
    jobs: jobs.routes,
    sites: sites.routes,
    metrics: metricsRoutes(metrics.scrape),
    isReady: () => store.ready(),
    log,
    sitemap: {
      ...admissionDeps,
      log,
      slots,
      crawl: async (url, signal, options) => {
        const result = await sitemap.crawl(url, signal, options);
        metrics.crawlPages(result.pagesCrawled);
        return result;
      },
      maxPages: config.maxPages,
      hostConcurrency: config.hostConcurrency,
      renderAvailable: renderer !== null,
      // A crawl (and its wait for a slot) may outlast the idle timeout: its own deadline bounds it.
      holdConnection: (request) => server.timeout(request, 0),
    },
  });
  metrics.setRoutes(app.routes.map((route) => route.path));
  const requestLog = batchedWriter(io.stdout);
  const logged = withRequestLog((request) => passwordFastLane(request) ?? app.handle(request), {
    clientIp,
    write: requestLog.write,
    now: () => performance.timeOrigin + performance.now(),
    observe: metrics.observe,
  });

  if (!bindFirst) {
    try {
      listen();
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  handle = logged;
  opened(logged);

  const url = `http://${server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname}:${server.port}`;
  io.stdout(
    `${JSON.stringify({
      time: new Date().toISOString(),
      msg: `genapi ${VERSION} listening on ${url}`,
      version: VERSION,
      address: url,
      db: redactSpec(config.dbPath),
      store: store.kind,
    })}\n`,
  );
  jobs.start();
  sites.start();

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      const graceMs = config.crawlTimeoutSeconds * 1000 + SHUTDOWN_GRACE_MS;
      // Queued crawls answer 503 and get their admission back; running ones may finish. Running
      // jobs are handed back with their progress, for the next process to continue.
      slots.close();
      const handedBack = Promise.all([jobs.stop(), sites.stop()]);
      const finished = server.stop(false).then(() => true);
      const within = (ms: number) => Promise.race([finished, Bun.sleep(ms).then(() => false)]);
      if (!(await within(graceMs))) {
        // Crawls still running answer with what they found (truncated); then connections are cut.
        hardStop.abort();
        if (!(await within(HARD_STOP_MS))) await server.stop(true);
      }
      await handedBack;
      await renderer?.browser.close();
      // The host slots this process held, given back now: a process started in its place (a
      // restart, a deploy) would otherwise wait out their leases before crawling those hosts.
      await store.hosts
        .releaseAll()
        .catch((error: Error) => log(`host slots not given back (they expire with their leases): ${error.message}`));
      requestLog.flush();
      await store.close();
    })());

  return { server, url, stop };
}

/**
 * The browser for rendered crawls: the Chromium --chromium names, else the first found on PATH;
 * none: `render` answers 400. It starts with the first rendered page, not with the server.
 * GENAPI_CHROMIUM_NO_SANDBOX=1 turns Chromium's sandbox off, for tests and containers that run
 * as root (Chromium refuses to start there with it); the systemd unit never sets it.
 */
function rendererFor(config: ServeConfig, log: (message: string) => void): Renderer | null {
  const executable = findChromium(config.chromium);
  if (executable === null) {
    if (config.chromium !== null) throw new UsageError(`--chromium: no browser at ${config.chromium}`);
    return null;
  }
  const noSandbox = process.env.GENAPI_CHROMIUM_NO_SANDBOX === "1";
  const intercept = process.env.GENAPI_RENDER_TEST_NO_INTERCEPT !== "1";
  return {
    browser: new Browser({ executable, tabs: config.renderTabs, noSandbox, log, intercept }),
    timeoutMs: config.renderTimeoutSeconds * 1000,
  };
}
