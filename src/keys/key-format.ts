// API key format: `genapi_` + 32 random base62 characters + a 6-character base62 CRC32 checksum
// of the random part (as GitHub tokens do), so a mistyped key is refused without a lookup.
// 32 base62 characters carry 190 bits of entropy: a plain SHA-256 of the key is safe to store.
import { createHash, randomBytes as cryptoRandomBytes } from "node:crypto";

const KEY_TAG = "genapi_";
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32, so every CRC32 value has its own encoding
const PREFIX_LENGTH = 12;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
// Bytes at or above 248 (= 4 × 62) are dropped so that `byte % 62` is uniform.
const UNBIASED_BYTE_LIMIT = 248;
const KEY_SHAPE = new RegExp(`^${KEY_TAG}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

export type RandomBytes = (n: number) => Uint8Array;

export function generateApiKey(randomBytes: RandomBytes = cryptoRandomBytes): string {
  let body = "";
  while (body.length < RANDOM_LENGTH) {
    for (const byte of randomBytes(RANDOM_LENGTH - body.length + 8)) {
      if (byte >= UNBIASED_BYTE_LIMIT) continue;
      body += BASE62[byte % 62];
      if (body.length === RANDOM_LENGTH) break;
    }
  }
  return KEY_TAG + body + checksum(body);
}

/** True when the key has the right shape and its checksum matches its random part. */
export function hasValidChecksum(key: string): boolean {
  if (!KEY_SHAPE.test(key)) return false;
  const body = key.slice(KEY_TAG.length, KEY_TAG.length + RANDOM_LENGTH);
  return key.slice(KEY_TAG.length + RANDOM_LENGTH) === checksum(body);
}

/** SHA-256 of the key: the only form in which a key is stored. */
export function hashApiKey(key: string): Uint8Array {
  return createHash("sha256").update(key, "utf8").digest();
}

/** The key's first 12 characters, shown to recognise a key (5 of them random). */
export function keyPrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}

function checksum(body: string): string {
  let value = Bun.hash.crc32(body);
  let encoded = "";
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    encoded = BASE62[value % 62] + encoded;
    value = Math.floor(value / 62);
  }
  return encoded;
}
