// What the per-host limiter costs a request, alone and with its state shared through
// each store: genapi's own politeness (src/crawler/net/politeness.ts) wrapped around a sender that
// answers at once, so that nothing but the limiter is measured, in this process.
//
// Variants, alternating round by round: no limiter (the sender alone), the limiter of one process
// (genapi crawl: no store), and the limiter sharing the host through the SQLite store and through
// a PostgreSQL store (a throwaway cluster, as the tests start one). Each round sends `requests`
// requests to one host from 8 workers (a crawl's concurrency) under the default --host-concurrency,
// reading every body. Figures: CPU µs a request of this process (user + system), its excess over
// the no-limiter run of the same round, and the store calls the limiter made (claims, renewals,
// releases) with the wall time they were spread over. A PostgreSQL server's own CPU is not in the
// figure; its calls are.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { defaultPolitenessConfig, type HostCoordinator } from "../../../src/crawler/index.ts";
import { Politeness, type Sender } from "../../../src/crawler/net/politeness.ts";
import { openStore } from "../../../src/open-store.ts";
import { createDatabase } from "../../../test/support/postgres.ts";
import type { Context } from "../harness/context.ts";
import { missing, ratios, row, type Row, summarize, type Table } from "../harness/results.ts";

const WORKERS = 8;
const URL_OF = (i: number) => `http://127.0.0.1:9/page/${i}`;

interface Round {
  cpuMicros: number;
  wallMs: number;
  storeCalls: number;
}

type Variant = "none" | "alone" | "sqlite" | "postgres";

/** Counts the calls a coordinator gets. */
function counted(inner: HostCoordinator): HostCoordinator & { calls: number } {
  const wrapper = {
    calls: 0,
    claim: (...args: Parameters<HostCoordinator["claim"]>) => {
      wrapper.calls++;
      return inner.claim(...args);
    },
    release: (host: string) => {
      wrapper.calls++;
      return inner.release(host);
    },
    pause: (host: string, until: number) => {
      wrapper.calls++;
      return inner.pause(host, until);
    },
    reserveStarts: (host: string, interval: number, count: number) => {
      wrapper.calls++;
      return inner.reserveStarts(host, interval, count);
    },
    releaseAll: () => {
      wrapper.calls++;
      return inner.releaseAll();
    },
  };
  return wrapper;
}

const answer: Sender = async () => new Response("ok");

async function round(send: Sender, requests: number): Promise<{ cpuMicros: number; wallMs: number }> {
  let next = 0;
  const signal = new AbortController().signal;
  const cpu = process.cpuUsage();
  const began = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      for (let i = next++; i < requests; i = next++) {
        const res = await send(URL_OF(i), { signal });
        await res.bytes();
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return { cpuMicros: used.user + used.system, wallMs: performance.now() - began };
}

export async function limiterCost(ctx: Context, requests: number): Promise<Table> {
  const title = `What the per-host limiter costs a request (${requests.toLocaleString("en-US")} requests a round, ${WORKERS} workers)`;
  const dir = mkdtempSync(join(ctx.workDir, "limiter-"));
  const sqlite = await openStore(join(dir, "genapi.db"), { purpose: "serve" });
  const pgSpec = await createDatabase().catch(() => undefined);
  const postgres = pgSpec ? await openStore(pgSpec, { purpose: "serve" }) : undefined;
  const coordinators: Partial<Record<Variant, ReturnType<typeof counted>>> = {
    sqlite: counted(sqlite.hosts),
    ...(postgres ? { postgres: counted(postgres.hosts) } : {}),
  };
  const variants: Variant[] = ["none", "alone", "sqlite", ...(postgres ? (["postgres"] as const) : [])];
  const measured: Record<Variant, Round[]> = { none: [], alone: [], sqlite: [], postgres: [] };
  try {
    // A first round of each, not counted: the JIT and the store's first statements.
    for (let r = -1; r < ctx.plan.runs; r++) {
      for (const variant of r % 2 === 0 ? variants : [...variants].reverse()) {
        const coordinator = coordinators[variant];
        const before = coordinator?.calls ?? 0;
        let send = answer;
        let politeness: Politeness | undefined;
        if (variant !== "none") {
          politeness = new Politeness(defaultPolitenessConfig, coordinator ?? null);
          send = politeness.open().wrap(answer);
        }
        const result = await round(send, requests);
        // The host's slots are given back once idle; wait for it so that rounds do not share a lease.
        if (coordinator) await Bun.sleep(2_500);
        if (r >= 0) measured[variant].push({ ...result, storeCalls: (coordinator?.calls ?? 0) - before });
      }
    }
  } finally {
    await sqlite.close();
    await postgres?.close();
  }
  const per = (list: Round[]) => list.map((m) => m.cpuMicros / requests);
  const excess = (variant: Variant) => {
    const base = per(measured.none);
    return summarize(per(measured[variant]).map((value, i) => value - base[i]!));
  };
  const label: Record<Variant, string> = {
    none: "no limiter (the sender alone)",
    alone: "limiter, one process (genapi crawl: no store)",
    sqlite: "limiter sharing the host through SQLite",
    postgres: "limiter sharing the host through PostgreSQL",
  };
  const rows: Row[] = variants.map((variant) =>
    row(label[variant], {
      "CPU µs a request": summarize(per(measured[variant])),
      "over no limiter, µs": variant === "none" ? undefined : excess(variant),
      "÷ no limiter": variant === "none" ? undefined : summarize(ratios(per(measured[variant]), per(measured.none))),
      "requests/s": summarize(measured[variant].map((m) => (requests / m.wallMs) * 1000)),
      "store calls a round": variant === "none" || variant === "alone" ? undefined : summarize(measured[variant].map((m) => m.storeCalls)),
    }),
  );
  if (!postgres) rows.push(missing(label.postgres, "not installed", "PostgreSQL not installed"));
  return {
    title,
    columns: ["CPU µs a request", "over no limiter, µs", "÷ no limiter", "requests/s", "store calls a round"],
    rows,
    notes: [
      `In this process (scripts/bench/sections/limiter-cost.ts): ${WORKERS} workers send ${requests.toLocaleString("en-US")} requests a round to one host through genapi's politeness (--host-concurrency ${defaultPolitenessConfig.hostConcurrency}, no delay) wrapped around a sender that answers at once, so the limiter is all that is measured; rounds alternate the variants and their order. CPU: user + system of this process over the round, a request. over no limiter: the same round's difference, per request.`,
      "store calls: the claims, renewals and releases the limiter made over the round (a renewal a second while the host is busy, a release when it is idle): the store is not asked per request, so its cost per request falls as the rate rises. A PostgreSQL server's own CPU is not counted here.",
    ],
  };
}
