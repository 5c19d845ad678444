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
