// API keys in the database: only a SHA-256 of each key is stored, next to its 12-character
// prefix for display. What every backend shares lives here: the record, the checks of a new key's
// name and limit, and how `keys revoke` finds a key. The statements are each backend's
// (src/db/sqlite/keys.ts, src/db/postgres/keys.ts).
import { hashApiKey, hasValidChecksum, keyPrefix } from "./key-format.ts";

/** A key as `keys list --json` shows it. */
export interface KeyRecord {
  id: number;
  name: string;
  prefix: string;
  daily_limit: number | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export type RevokeResult =
  | { status: "revoked"; record: KeyRecord }
  | { status: "already_revoked"; record: KeyRecord }
  | { status: "not_found" }
  | { status: "ambiguous"; matches: KeyRecord[] };

const MAX_NAME_LENGTH = 100;
export const MAX_DAILY_LIMIT = 10_000_000;
/** Shortest prefix accepted by revoke: `genapi_` and one random character. */
const MIN_REVOKE_PREFIX = 8;
// Controls, line/paragraph separators and bidi overrides would garble or spoof `keys list`.
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

/** What the keys need from the store; each backend implements it (src/db/sqlite/keys.ts, src/db/postgres/keys.ts). */
export interface KeyStore {
  create(input: { name: string; dailyLimit: number | null }, now: Date): Promise<{ key: string; record: KeyRecord }>;
  list(): Promise<KeyRecord[]>;
  revoke(idOrPrefix: string, now: Date): Promise<RevokeResult>;
  /** The key with this id when it is not revoked, else null (a site's runs belong to its key). */
  active(id: number): Promise<KeyRecord | null>;
  /** The key's record when valid and not revoked (and `last_used_at` set), else null. */
  authenticate(key: string | null, now: Date): Promise<KeyRecord | null>;
}

export function validateKeyName(name: string): string {
  if (name.trim() === "") throw new Error("--name must not be empty.");
  if ([...name].length > MAX_NAME_LENGTH) throw new Error(`--name must be at most ${MAX_NAME_LENGTH} characters.`);
  if (UNPRINTABLE.test(name)) throw new Error("--name must not contain control characters.");
  return name;
}

export function validateDailyLimit(limit: number | null): number | null {
  if (limit === null) return null;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DAILY_LIMIT) {
    throw new Error(`--daily-limit must be an integer from 1 to ${MAX_DAILY_LIMIT}.`);
  }
  return limit;
}

/** How `keys revoke` finds a key: by id (all digits), by a whole valid key's hash, or by the start of its prefix. */
export type KeyLookup = { by: "id"; id: number } | { by: "hash"; hash: Uint8Array } | { by: "prefix"; prefix: string } | null;

export function keyLookup(idOrPrefix: string): KeyLookup {
  if (/^\d+$/.test(idOrPrefix)) {
    const id = Number(idOrPrefix);
    return Number.isSafeInteger(id) ? { by: "id", id } : null;
  }
  if (hasValidChecksum(idOrPrefix)) return { by: "hash", hash: hashApiKey(idOrPrefix) };
  const prefix = keyPrefix(idOrPrefix);
  if (prefix.length < MIN_REVOKE_PREFIX || prefix !== idOrPrefix) return null;
  return { by: "prefix", prefix };
}
