// The key statements on PostgreSQL, each raced against the store's deadline (PgAccess).
import { generateApiKey, hashApiKey, hasValidChecksum, keyPrefix } from "../../keys/key-format.ts";
import { keyLookup, validateDailyLimit, validateKeyName, type KeyRecord, type RevokeResult } from "../../keys/key-store.ts";
import { RECORD_COLUMNS } from "../rows.ts";
import type { KeyStore } from "../store.ts";
import type { PgAccess } from "./database.ts";

const toRecord = (row: Record<string, unknown>): KeyRecord => ({
  id: Number(row.id),
  name: row.name as string,
  prefix: row.prefix as string,
  daily_limit: row.daily_limit === null ? null : Number(row.daily_limit),
  created_at: row.created_at as string,
  last_used_at: (row.last_used_at as string | null) ?? null,
  revoked_at: (row.revoked_at as string | null) ?? null,
});

export function createPostgresKeyStore(access: PgAccess): KeyStore {
  const q = access.query;
  return {
    async create(input, now) {
      const name = validateKeyName(input.name);
      const dailyLimit = validateDailyLimit(input.dailyLimit);
      const key = generateApiKey();
      const rows = await q((s) =>
        s.unsafe(
          `INSERT INTO api_keys (name, prefix, key_hash, daily_limit, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${RECORD_COLUMNS}`,
          [name, keyPrefix(key), Buffer.from(hashApiKey(key)), dailyLimit, now.toISOString()],
        ),
      );
      return { key, record: toRecord(rows[0]) };
    },
    async active(id) {
      const rows = await q((s) => s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE id = $1 AND revoked_at IS NULL`, [id]));
      return rows.length ? toRecord(rows[0]) : null;
    },
    async list() {
      const rows = await q((s) => s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys ORDER BY id`));
      return [...rows].map(toRecord);
    },
    async revoke(idOrPrefix, now): Promise<RevokeResult> {
      const lookup = keyLookup(idOrPrefix);
      if (lookup === null) return { status: "not_found" };
      const rows = await q((s) =>
        lookup.by === "id"
          ? s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE id = $1`, [lookup.id])
          : lookup.by === "hash"
            ? s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE key_hash = $1`, [Buffer.from(lookup.hash)])
            : s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE substr(prefix, 1, $1) = $2 ORDER BY id`, [
                lookup.prefix.length,
                lookup.prefix,
              ]),
      );
      const matches = [...rows].map(toRecord);
      if (matches.length === 0) return { status: "not_found" };
      if (matches.length > 1) return { status: "ambiguous", matches };
      const id = matches[0]!.id;
      const revoked = await q((s) =>
        s.unsafe(`UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING ${RECORD_COLUMNS}`, [
          now.toISOString(),
          id,
        ]),
      );
      if (revoked.length === 1) return { status: "revoked", record: toRecord(revoked[0]) };
      const current = await q((s) => s.unsafe(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE id = $1`, [id]));
      return current.length === 1 ? { status: "already_revoked", record: toRecord(current[0]) } : { status: "not_found" };
    },
    async authenticate(key, now) {
      if (!key || !hasValidChecksum(key)) return null;
      const rows = await q((s) =>
        s.unsafe(`UPDATE api_keys SET last_used_at = $1 WHERE key_hash = $2 AND revoked_at IS NULL RETURNING ${RECORD_COLUMNS}`, [
          now.toISOString(),
          Buffer.from(hashApiKey(key)),
        ]),
      );
      return rows.length === 1 ? toRecord(rows[0]) : null;
    },
  };
}
