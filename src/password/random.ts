// Unbiased random indices from a cryptographically secure source. The source is injected so
// tests can script exact uint32 values.

/** Fills the array with uniformly random uint32 values. */
export type FillUint32 = (target: Uint32Array) => void;

const cryptoFill: FillUint32 = (target) => {
  crypto.getRandomValues(target);
};

const TWO_POW_32 = 2 ** 32;

/**
 * The number of uint32 values accepted for a draw below `n`: the largest multiple of `n` that
 * fits in 2^32. Values at or above it are rejected, so each residue keeps the same count.
 */
export function acceptLimit(n: number): number {
  return TWO_POW_32 - (TWO_POW_32 % n);
}

export interface Random {
  /** A uniform integer in [0, n), for an integer n from 1 to 2^32. */
  uniformIndex(n: number): number;
}

/**
 * A Random that draws uint32 values from `fill` in batches of `batchSize`, so the cost of the
 * underlying call is shared by many draws.
 */
export function createRandom(fill: FillUint32 = cryptoFill, batchSize = 1024): Random {
  const buffer = new Uint32Array(batchSize);
  let next = batchSize;
  const nextUint32 = (): number => {
    if (next === batchSize) {
      fill(buffer);
      next = 0;
    }
    return buffer[next++]!;
  };
  return {
    uniformIndex(n) {
      const limit = acceptLimit(n);
      for (;;) {
        const value = nextUint32();
        if (value < limit) return value % n;
      }
    },
  };
}

const TWO_POW_32_BIG = 2n ** 32n;

/** The number of bits of a positive BigInt. */
export function bitLength(value: bigint): number {
  let bits = 0;
  // 32 bits a step, then bit by bit: a few dozen operations for the 800-bit counts used here.
  while (value >= TWO_POW_32_BIG) {
    value >>= 32n;
    bits += 32;
  }
  return bits + (value === 0n ? 0 : 32 - Math.clz32(Number(value)));
}

/**
 * A uniform BigInt in [0, limit), for any positive `limit`: as many random bits as `limit - 1`
 * has, redrawn whole while the value is `limit` or more (each draw succeeds with probability
 * above 1/2), so no value is favoured. The bits come from `random` as full 32-bit words
 * (uniformIndex(2^32) rejects nothing) and one shorter top word.
 */
export function uniformBigInt(random: Random, limit: bigint): bigint {
  if (limit <= 0n) throw new RangeError("limit must be positive");
  if (limit <= TWO_POW_32_BIG) return BigInt(random.uniformIndex(Number(limit)));
  const bits = bitLength(limit - 1n);
  const words = Math.ceil(bits / 32);
  const topBits = bits - 32 * (words - 1);
  for (;;) {
    let value = BigInt(random.uniformIndex(2 ** topBits));
    for (let i = 1; i < words; i++) value = (value << 32n) | BigInt(random.uniformIndex(TWO_POW_32));
    if (value < limit) return value;
  }
}
