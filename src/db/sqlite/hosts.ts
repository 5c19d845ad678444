// Host politeness shared by every process on one SQLite file (the HostCoordinator of
// src/crawler/net/politeness.ts): each process's share of a host's slots is a lease row that
// expires unless renewed, so a process that dies frees its slots within LEASE_MS; pauses and
// reserved start times are one row per host. Each call is one short write transaction.
import type { HostCoordinator, HostGrant } from "../../crawler/index.ts";
import type { SqliteAccess } from "./database.ts";

/** A block of start times begins this far ahead of the store's now (the answer's way back). */
export const RESERVE_LEAD_MS = 50;

/** A lease not renewed for this long is another process's to take. Renewals come every second. */
export const HOST_LEASE_MS = 10_000;

/**
 * The share of `cap` an owner is granted: what it wants, no more than the others leave free, and no
 * more than an even share (at least 1) when others want slots too (they get theirs as this one's in-flight
 * requests end; the claim's `held` stays counted until then).
 */
export function fairGrant(want: number, cap: number, others: { slots: number; want: number }[]): number {
  const held = others.reduce((sum, lease) => sum + lease.slots, 0);
  const wanting = 1 + others.filter((lease) => lease.want > 0).length;
  // Rounded down, so that the shares add up to the cap at most: rounded up, three processes on a
  // cap of 4 took 2, 2 and 0, and the third waited for as long as the others stayed busy.
  return Math.max(0, Math.min(want, cap - held, Math.max(1, Math.floor(cap / wanting))));
}

export function createSqliteHostLeases(access: SqliteAccess, owner: string, now: () => number = Date.now): HostCoordinator {
  return {
    claim: (host, want, cap, held = 0) =>
      access.write((db): HostGrant => {
        const at = now();
        return db
          .transaction((): HostGrant => {
            db.query("DELETE FROM host_leases WHERE host = ? AND expires_at < ?").run(host, at);
            const others = db.query("SELECT slots, want FROM host_leases WHERE host = ? AND owner <> ?").all(host, owner) as {
              slots: number;
              want: number;
            }[];
            const slots = fairGrant(want, cap, others);
            db.query(
              `INSERT INTO host_leases (host, owner, slots, want, expires_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (host, owner) DO UPDATE SET slots = excluded.slots, want = excluded.want, expires_at = excluded.expires_at`,
            ).run(host, owner, Math.max(slots, held), want, at + HOST_LEASE_MS);
            const state = db.query("SELECT paused_until FROM host_state WHERE host = ?").get(host) as { paused_until: number } | null;
            return { slots, pausedUntil: state?.paused_until ?? 0 };
          })
          .immediate();
      }),
    release: (host) =>
      access.write((db) => {
        db.query("DELETE FROM host_leases WHERE host = ? AND owner = ?").run(host, owner);
      }),
    releaseAll: () =>
      access.write((db) => {
        db.query("DELETE FROM host_leases WHERE owner = ?").run(owner);
      }),
    pause: (host, at) =>
      access.write((db) => {
        db.query(
          `INSERT INTO host_state (host, paused_until) VALUES (?, ?)
           ON CONFLICT (host) DO UPDATE SET paused_until = max(paused_until, excluded.paused_until)`,
        ).run(host, Math.ceil(at));
      }),
    reserveStarts: (host, interval, count) =>
      access.write((db) => {
        // Whole milliseconds: the column is an integer.
        const intervalMs = Math.ceil(interval);
        // A block starts a little ahead, so that its first start has not passed by the time the answer is back.
        const at = now() + RESERVE_LEAD_MS;
        const row = db
          .query(
            `INSERT INTO host_state (host, next_start) VALUES (?1, ?2 + ?3 * ?4)
             ON CONFLICT (host) DO UPDATE SET next_start = max(next_start, ?2) + ?3 * ?4
             RETURNING next_start - ?3 * ?4 AS first`,
          )
          .get(host, at, count, intervalMs) as { first: number };
        return row.first;
      }),
  };
}
