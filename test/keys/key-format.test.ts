import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { generateApiKey, hashApiKey, hasValidChecksum, keyPrefix } from "../../src/keys/key-format.ts";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
// Checksum computed independently (Python zlib.crc32, base62, 6 digits).
const KNOWN_KEY = "genapi_0123456789ABCDEFGHIJKLMNOPQRSTUV1ggZdL";

/** Serves bytes from a fixed list, whatever count is asked for. */
function byteStream(bytes: number[]): (n: number) => Uint8Array {
  let next = 0;
  return (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = bytes[next++ % bytes.length]!;
    return out;
  };
}

describe("generateApiKey", () => {
  test("has the tag, 32 random base62 characters and a 6-character checksum", () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey();
      expect(key).toMatch(/^genapi_[0-9A-Za-z]{38}$/);
      expect(hasValidChecksum(key)).toBe(true);
    }
  });

  test("drops bytes 248..255 and maps the rest modulo 62 (no bias)", () => {
    // Each wanted byte i + 62 * (i % 4) (< 248) follows a byte that must be dropped.
    const bytes: number[] = [];
    for (let i = 0; i < 32; i++) bytes.push(248 + (i % 8), i + 62 * (i % 4));
    expect(generateApiKey(byteStream(bytes))).toBe(KNOWN_KEY);
  });

  test("random characters are uniform over base62 (chi-square)", () => {
    const counts = new Map<string, number>();
    const keys = 4000;
    for (let i = 0; i < keys; i++) {
      for (const c of generateApiKey().slice(7, 39)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect(counts.size).toBe(62);
    const expected = (keys * 32) / 62;
    let chiSquare = 0;
    for (const c of BASE62) chiSquare += ((counts.get(c) ?? 0) - expected) ** 2 / expected;
    // 61 degrees of freedom: P(chi² > 130) < 1e-6 for a uniform source. Plain `byte % 62`
    // without rejection gives about 900 at this sample size.
    expect(chiSquare).toBeLessThan(130);
  });
});

describe("hasValidChecksum", () => {
  test("accepts the known key and rejects every single-character substitution", () => {
    expect(hasValidChecksum(KNOWN_KEY)).toBe(true);
    const sample = generateApiKey();
    for (const key of [KNOWN_KEY, sample]) {
      let tried = 0;
      for (let i = 0; i < key.length; i++) {
        for (const c of `${BASE62}_-. é`) {
          if (c === key[i]) continue;
          const mistyped = key.slice(0, i) + c + key.slice(i + 1);
          expect(hasValidChecksum(mistyped)).toBe(false);
          tried++;
        }
      }
      expect(tried).toBe(45 * 66);
    }
  });

  test("rejects swaps of adjacent different characters in the random part", () => {
    for (let i = 7; i < 38; i++) {
      const swapped = KNOWN_KEY.slice(0, i) + KNOWN_KEY[i + 1] + KNOWN_KEY[i] + KNOWN_KEY.slice(i + 2);
      expect(hasValidChecksum(swapped)).toBe(false);
    }
  });

  test("rejects wrong shapes", () => {
    for (const key of ["", "genapi_", KNOWN_KEY.slice(0, -1), `${KNOWN_KEY}0`, ` ${KNOWN_KEY}`, KNOWN_KEY.replace("genapi_", "GENAPI_")]) {
      expect(hasValidChecksum(key)).toBe(false);
    }
  });
});

test("hashApiKey is the SHA-256 of the key", () => {
  const expected = createHash("sha256").update(KNOWN_KEY).digest("hex");
  expect(Buffer.from(hashApiKey(KNOWN_KEY)).toString("hex")).toBe(expected);
  expect(hashApiKey(KNOWN_KEY).byteLength).toBe(32);
});

test("keyPrefix is the first 12 characters", () => {
  expect(keyPrefix(KNOWN_KEY)).toBe("genapi_01234");
});
