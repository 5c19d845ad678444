// The key statements on SQLite. Functions take the clock as `now` so tests control time.
// Statements go through `db.query()`, which compiles each SQL text once per Database and
// caches it there, so the hot path (authenticate) does not re-prepare.
import type { Database } from "bun:sqlite";
import { generateApiKey, hashApiKey, hasValidChecksum, keyPrefix, type RandomBytes } from "../../keys/key-format.ts";
import { keyLookup, validateDailyLimit, validateKeyName, type KeyRecord, type RevokeResult } from "../../keys/key-store.ts";
import { RECORD_COLUMNS } from "../rows.ts";

/** Creates a key; `key` is the only time the secret exists outside its holder. */
export function createKey(
  db: Database,
  input: { name: string; dailyLimit: number | null },
  now: Date,
  randomBytes?: RandomBytes,
): { key: string; record: KeyRecord } {
  const name = validateKeyName(input.name);
  const dailyLimit = validateDailyLimit(input.dailyLimit);
  const key = generateApiKey(randomBytes);
  const record = db
    .query<KeyRecord, [string, string, Uint8Array, number | null, string]>(
      `INSERT INTO api_keys (name, prefix, key_hash, daily_limit, created_at) VALUES (?, ?, ?, ?, ?)
       RETURNING ${RECORD_COLUMNS}`,
    )
    .get(name, keyPrefix(key), hashApiKey(key), dailyLimit, now.toISOString());
  if (!record) throw new Error("The new key was not stored.");
  return { key, record };
}

export function activeKey(db: Database, id: number): KeyRecord | null {
  return db.query<KeyRecord, [number]>(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE id = ? AND revoked_at IS NULL`).get(id);
}

export function listKeys(db: Database): KeyRecord[] {
  return db.query<KeyRecord, []>(`SELECT ${RECORD_COLUMNS} FROM api_keys ORDER BY id`).all();
}

/**
 * Revokes by id (all digits) or by the start of the key (at least 8 characters, matched
 * against the stored 12-character prefix; a whole valid key is matched exactly by its hash).
 * Ids and prefixes cannot be confused: prefixes start with `genapi_`.
 */
export function revokeKey(db: Database, idOrPrefix: string, now: Date): RevokeResult {
  const matches = findKeys(db, idOrPrefix);
  if (matches.length === 0) return { status: "not_found" };
  if (matches.length > 1) return { status: "ambiguous", matches };
  const id = matches[0]!.id;
  // One conditional UPDATE, so two concurrent revokes cannot both report "revoked".
  const revoked = db
    .query<KeyRecord, [string, number]>(
      `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING ${RECORD_COLUMNS}`,
    )
    .get(now.toISOString(), id);
  if (revoked) return { status: "revoked", record: revoked };
  const current = findById(db, id);
  return current ? { status: "already_revoked", record: current } : { status: "not_found" };
}

/**
 * The key's record when it is valid and not revoked, else null. A key with a bad checksum is
 * refused before any database access. Success records the time in `last_used_at`.
 */
export function authenticate(db: Database, key: string | null, now: Date): KeyRecord | null {
  if (!key || !hasValidChecksum(key)) return null;
  return db
    .query<KeyRecord, [string, Uint8Array]>(
      `UPDATE api_keys SET last_used_at = ? WHERE key_hash = ? AND revoked_at IS NULL RETURNING ${RECORD_COLUMNS}`,
    )
    .get(now.toISOString(), hashApiKey(key));
}

function findKeys(db: Database, idOrPrefix: string): KeyRecord[] {
  const lookup = keyLookup(idOrPrefix);
  if (lookup === null) return [];
  if (lookup.by === "id") {
    const record = findById(db, lookup.id);
    return record ? [record] : [];
  }
  if (lookup.by === "hash") {
    const record = db.query<KeyRecord, [Uint8Array]>(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE key_hash = ?`).get(lookup.hash);
    return record ? [record] : [];
  }
  // substr, not LIKE: `_` in `genapi_` is a LIKE wildcard.
  return db
    .query<KeyRecord, [number, string]>(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE substr(prefix, 1, ?) = ? ORDER BY id`)
    .all(lookup.prefix.length, lookup.prefix);
}

function findById(db: Database, id: number): KeyRecord | null {
  if (!Number.isSafeInteger(id)) return null;
  return db.query<KeyRecord, [number]>(`SELECT ${RECORD_COLUMNS} FROM api_keys WHERE id = ?`).get(id);
}
