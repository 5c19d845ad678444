// Admission on each store. POST /api/generate through key lookup, body, URL and target
// checks and the one-statement admission, on SQLite, on PostgreSQL with one genapi instance and
// with three instances sharing the database. Two paths: refused at the quota (429), and admitted
// (a premium key; the target is a closed loopback port, so the crawl fails at once with 502 and
// the figure is the store's, not a crawl's). Then, to say where the time goes, the store calls of
// one request timed one by one in this process against the same two stores.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../../src/open-store.ts";
import { createDatabase } from "../../../test/support/postgres.ts";
import type { Context } from "../harness/context.ts";
import { freePort } from "../harness/proc.ts";
import { missing, ratios, row, summarize, type Row, type SectionResult, type Summary } from "../harness/results.ts";
import { createKey, newDb, startGenapi, type Server } from "../harness/servers.ts";
import { runWrk, type WrkResult } from "../harness/wrk.ts";

const CONNECTIONS = 32;
const TITLE = "Admission on SQLite and PostgreSQL";
const VARIANTS = ["SQLite, 1 instance", "PostgreSQL, 1 instance", "PostgreSQL, 3 instances"] as const;
type Variant = (typeof VARIANTS)[number];
type Path = "429" | "admitted";

/** A database on a throwaway cluster (the tests' harness), or undefined without PostgreSQL installed. */
async function postgresUrl(): Promise<string | undefined> {
  try {
    return await createDatabase();
  } catch {
    return undefined;
  }
}

export async function admissionBench(ctx: Context): Promise<SectionResult> {
  const started = performance.now();
  const { plan, binaries, tools, workDir } = ctx;
  const pg = await postgresUrl();
  if (tools.wrk.argv === undefined || pg === undefined) {
    const why = tools.wrk.argv === undefined ? "wrk not installed" : "PostgreSQL not installed";
    return {
      id: "admission",
      title: TITLE,
      tables: [{ title: TITLE, columns: [], rows: [missing("admission", "not installed", why)], notes: [] }],
      checks: [],
      targets: [],
      seconds: 0,
    };
  }
  const wrk = tools.wrk.argv[0]!;
  const closedUrl = `http://127.0.0.1:${freePort()}/`;
  const script = join(workDir, "admission.lua");
  writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = '${JSON.stringify({ url: closedUrl })}'\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["X-API-Key"] = os.getenv("BENCH_KEY")\n`,
  );
  const args = ["--allow-private-targets", "--free-daily-limit", "1"];
  const sqliteDb = newDb(workDir);
  const stores: Record<Variant, { db: string; count: number }> = {
    "SQLite, 1 instance": { db: sqliteDb, count: 1 },
    "PostgreSQL, 1 instance": { db: pg, count: 1 },
    "PostgreSQL, 3 instances": { db: pg, count: 3 },
  };
  const keys = Object.fromEntries(
    [sqliteDb, pg].map((db) => [db, { free: createKey(binaries.genapi, db), premium: createKey(binaries.genapi, db, 10_000_000) }]),
  );
  const results: Record<Variant, Record<Path, number[]>> = Object.fromEntries(
    VARIANTS.map((v) => [v, { "429": [], admitted: [] }]),
  ) as never;
  const p99: Record<Variant, Record<Path, number[]>> = Object.fromEntries(VARIANTS.map((v) => [v, { "429": [], admitted: [] }])) as never;
  const spotChecks: string[] = [];

  for (let r = 0; r < plan.runs; r++) {
    for (const variant of VARIANTS) {
      ctx.log(`admission: run ${r + 1}/${plan.runs}, ${variant}`);
      const { db, count } = stores[variant];
      const servers: Server[] = [];
      try {
        for (let i = 0; i < count; i++) servers.push(await startGenapi(binaries.genapi, workDir, args, db));
        const { free, premium } = keys[db]!;
        // The free key's one request of the day is used up first, so its requests all answer 429.
        const post = (key: string) =>
          fetch(`${servers[0]!.url}/api/generate`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": key },
            body: JSON.stringify({ url: closedUrl }),
          }).then((res) => res.status);
        // The first free request of the day may be admitted (502); the next is refused, the premium one admitted.
        await post(free);
        spotChecks.push(`${variant}: ${await post(free)},${await post(premium)}`);
        for (const [path, key] of [
          ["429", free],
          ["admitted", premium],
        ] as const) {
          // Every instance under load at once (one wrk each); the figure is their sum.
          const each: WrkResult[] = await Promise.all(
            servers.map((server) =>
              runWrk(wrk, {
                url: `${server.url}/api/generate`,
                connections: Math.ceil(CONNECTIONS / count),
                seconds: plan.wrkSeconds,
                script,
                env: { BENCH_KEY: key },
              }),
            ),
          );
          results[variant][path].push(each.reduce((sum, w) => sum + w.requestsPerSecond, 0));
          p99[variant][path].push(Math.max(...each.map((w) => w.p99Ms)));
        }
      } finally {
        await Promise.all(servers.map((server) => server.stop()));
      }
    }
  }

  const timing = await storeCallTimes(sqliteDb, pg, plan.runs === 1 ? 200 : 2000);
  const base = results["SQLite, 1 instance"];
  const rows: Row[] = VARIANTS.map((variant) =>
    row(variant, {
      "429 requests/s": summarize(results[variant]["429"]),
      "429 p99 ms": summarize(p99[variant]["429"]),
      "429 ratio to SQLite": summarize(ratios(results[variant]["429"], base["429"])),
      "admitted requests/s": summarize(results[variant].admitted),
      "admitted p99 ms": summarize(p99[variant].admitted),
      "admitted ratio to SQLite": summarize(ratios(results[variant].admitted, base.admitted)),
    }),
  );
  const ms = (s: Summary | undefined) => (s === undefined ? "?" : s.median.toFixed(3));
  return {
    id: "admission",
    title: TITLE,
    tables: [
      {
        title: `POST /api/generate, ${CONNECTIONS} connections in all, ${plan.wrkSeconds} s per run`,
        columns: [
          "429 requests/s",
          "429 p99 ms",
          "429 ratio to SQLite",
          "admitted requests/s",
          "admitted p99 ms",
          "admitted ratio to SQLite",
        ],
        rows,
        notes: [
          "429: a free key whose daily quota is used up. Admitted: a premium key (daily limit 10,000,000) crawling a closed loopback port, answered 502 at once: key check, body, URL, target, admission, then a failed connect.",
          "Three instances: three genapi processes on the one database, each loaded by its own wrk; the figure is their sum. On this 2-core machine they share the cores with PostgreSQL and wrk, so the sum shows coordination cost, not scale-out.",
          `Where the time goes: one request makes two store calls (authenticate: UPDATE ... RETURNING; admit: the upsert). Timed one by one in one process: authenticate ${ms(timing.sqlite.authenticate)} ms on SQLite vs ${ms(timing.postgres.authenticate)} ms on PostgreSQL, admit ${ms(timing.sqlite.admit)} vs ${ms(timing.postgres.admit)} ms (medians). SQLite runs in the process; each PostgreSQL call is a loopback round trip and a server-side statement with a WAL flush.`,
        ],
      },
    ],
    checks: [
      {
        label: "the 429 path refuses and the admitted path is admitted",
        passed: spotChecks.every((line) => line.endsWith(": 429,502")),
        detail: `spot checks (used-up free key, premium key), last run: ${spotChecks.slice(-VARIANTS.length).join("; ")}`,
      },
    ],
    targets: [
      {
        label: "admission on PostgreSQL (1 instance), 429 path, vs SQLite",
        goal: "report the cost of a shared store",
        measured: `${summarize(ratios(results["PostgreSQL, 1 instance"]["429"], base["429"]))?.median.toFixed(2) ?? "?"}×`,
        met: null,
      },
    ],
    seconds: (performance.now() - started) / 1000,
  };
}

/** Medians of the per-call time of authenticate and admit, each store opened as a server opens it. */
async function storeCallTimes(sqliteDb: string, pgUrl: string, calls: number) {
  const measure = async (spec: string) => {
    const store = await openStore(spec, { purpose: "serve" });
    try {
      const { key } = await store.keys.create({ name: "timing", dailyLimit: 10_000_000 }, new Date());
      const time = async (fn: () => Promise<unknown>) => {
        const samples: number[] = [];
        for (let i = 0; i < calls; i++) {
          const t = performance.now();
          await fn();
          samples.push(performance.now() - t);
        }
        return summarize(samples);
      };
      return {
        authenticate: await time(() => store.keys.authenticate(key, new Date())),
        admit: await time(() => store.quota.admit("key:timing", 10_000_000, new Date())),
      };
    } finally {
      await store.close();
    }
  };
  return { sqlite: await measure(sqliteDb), postgres: await measure(pgUrl) };
}
