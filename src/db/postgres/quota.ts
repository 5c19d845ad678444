// The quota statements on PostgreSQL: one atomic upsert per admission, so every instance sharing the
// database admits exactly the limit; counters older than yesterday are pruned once a day.
import { admissionOf, assertLimit, pruneBefore, stateOf, utcDay } from "../../quota/quota.ts";
import type { QuotaStore } from "../store.ts";
import type { PgAccess } from "./database.ts";

export function createPostgresQuotaStore(access: PgAccess): QuotaStore {
  const q = access.query;
  let lastPrunedDay = "";
  return {
    async admit(bucket, limit, now) {
      assertLimit(limit);
      const day = utcDay(now);
      if (lastPrunedDay !== day) {
        await q((s) => s.unsafe(`DELETE FROM usage_counters WHERE day < $1`, [pruneBefore(now)]));
        lastPrunedDay = day;
      }
      const rows = await q((s) =>
        s.unsafe(
          `INSERT INTO usage_counters (day, bucket, count) VALUES ($1, $2, 1)
           ON CONFLICT (day, bucket) DO UPDATE SET count = usage_counters.count + 1 WHERE usage_counters.count < $3
           RETURNING count`,
          [day, bucket, limit],
        ),
      );
      return admissionOf(rows.length === 1 ? Number(rows[0].count) : null, limit, now);
    },
    async release(bucket, day) {
      await q((s) => s.unsafe(`UPDATE usage_counters SET count = count - 1 WHERE day = $1 AND bucket = $2 AND count > 0`, [day, bucket]));
    },
    async peek(bucket, limit, now) {
      assertLimit(limit);
      const rows = await q((s) => s.unsafe(`SELECT count FROM usage_counters WHERE day = $1 AND bucket = $2`, [utcDay(now), bucket]));
      return stateOf(rows.length === 1 ? Number(rows[0].count) : 0, limit, now);
    },
  };
}
