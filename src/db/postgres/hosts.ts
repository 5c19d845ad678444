// Host politeness shared by every process on one PostgreSQL database (the HostCoordinator of
// src/crawler/net/politeness.ts), as on SQLite (src/db/sqlite/hosts.ts): a lease row per process
// and host that expires unless renewed, one row per host for its pause and reserved start times.
// A claim locks the host's state row, so two processes' grants are computed one after the other.
import type { HostCoordinator, HostGrant } from "../../crawler/index.ts";
import { fairGrant, HOST_LEASE_MS, RESERVE_LEAD_MS } from "../sqlite/hosts.ts";
import type { PgAccess } from "./database.ts";

export function createPostgresHostLeases(access: PgAccess, owner: string, now: () => number = Date.now): HostCoordinator {
  return {
    claim: (host, want, cap, held) =>
      access.query((sql) =>
        sql.begin(async (tx): Promise<HostGrant> => {
          const at = now();
          // The host's row serialises claims: every claim for the host locks it first.
          const [state] = await tx`INSERT INTO host_state (host) VALUES (${host})
            ON CONFLICT (host) DO UPDATE SET host = excluded.host RETURNING paused_until`;
          await tx`DELETE FROM host_leases WHERE host = ${host} AND expires_at < ${at}`;
          const others = (await tx`SELECT slots, want FROM host_leases WHERE host = ${host} AND owner <> ${owner}`) as {
            slots: number;
            want: number;
          }[];
          const slots = fairGrant(want, cap, others);
          await tx`INSERT INTO host_leases (host, owner, slots, want, expires_at)
            VALUES (${host}, ${owner}, ${Math.max(slots, held)}, ${want}, ${at + HOST_LEASE_MS})
            ON CONFLICT (host, owner) DO UPDATE SET slots = excluded.slots, want = excluded.want, expires_at = excluded.expires_at`;
          return { slots, pausedUntil: Number(state.paused_until) };
        }),
      ),
    release: (host) =>
      access.query(async (sql) => {
        await sql`DELETE FROM host_leases WHERE host = ${host} AND owner = ${owner}`;
      }),
    releaseAll: () =>
      access.query(async (sql) => {
        await sql`DELETE FROM host_leases WHERE owner = ${owner}`;
      }),
    pause: (host, at) =>
      access.query(async (sql) => {
        const until = Math.ceil(at);
        await sql`INSERT INTO host_state (host, paused_until) VALUES (${host}, ${until})
          ON CONFLICT (host) DO UPDATE SET paused_until = GREATEST(host_state.paused_until, excluded.paused_until)`;
      }),
    reserveStarts: (host, interval, count) =>
      access.query(async (sql) => {
        const at = now() + RESERVE_LEAD_MS;
        const span = Math.ceil(interval) * count;
        const [row] = await sql`INSERT INTO host_state (host, next_start) VALUES (${host}, ${at + span})
          ON CONFLICT (host) DO UPDATE SET next_start = GREATEST(host_state.next_start, ${at}) + ${span}
          RETURNING next_start - ${span} AS first`;
        return Number(row.first);
      }),
  };
}
