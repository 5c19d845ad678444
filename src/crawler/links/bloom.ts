// A Bloom filter over URL strings: says "certainly not seen" for most new URLs without asking the
// store, in about 10 bits a URL (2.5 MB for 2,000,000), where a Set of the URLs would take
// hundreds of megabytes. A "maybe" is answered by the store.

export class BloomFilter {
  private readonly bits: Uint32Array;
  private readonly size: number;

  /** For about `capacity` items at a false-positive rate near 1% (10 bits and 7 hashes an item). */
  constructor(
    capacity: number,
    private readonly hashes = 7,
    /** The bits of a filter of the same capacity (`bytes()`), to carry it on. */
    bits?: Uint8Array,
  ) {
    this.size = Math.max(1024, Math.ceil(capacity * 10));
    this.bits = new Uint32Array(Math.ceil(this.size / 32));
    if (bits !== undefined) {
      if (bits.byteLength !== this.bits.byteLength) throw new RangeError("BloomFilter: bits of another size");
      new Uint8Array(this.bits.buffer).set(bits);
    }
  }

  /** The filter's bits, for `new BloomFilter(capacity, hashes, bits)`. */
  bytes(): Uint8Array {
    return new Uint8Array(this.bits.buffer.slice(0));
  }

  add(item: string): void {
    const [a, b] = this.hash(item);
    for (let i = 0; i < this.hashes; i++) {
      const bit = (a + i * b) % this.size;
      this.bits[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  /** Adds `item`; whether it was new (certainly not there before), with one hash for both. */
  addIfNew(item: string): boolean {
    const [a, b] = this.hash(item);
    let fresh = false;
    for (let i = 0; i < this.hashes; i++) {
      const bit = (a + i * b) % this.size;
      const mask = 1 << (bit & 31);
      if ((this.bits[bit >>> 5]! & mask) === 0) {
        fresh = true;
        this.bits[bit >>> 5]! |= mask;
      }
    }
    return fresh;
  }

  mayHave(item: string): boolean {
    const [a, b] = this.hash(item);
    for (let i = 0; i < this.hashes; i++) {
      const bit = (a + i * b) % this.size;
      if ((this.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }

  /** Two independent 32-bit hashes from one 64-bit wyhash (Kirsch-Mitzenmacher double hashing). */
  private hash(item: string): [number, number] {
    const h = BigInt.asUintN(64, BigInt(Bun.hash.wyhash(item)));
    return [Number(h & 0xffffffffn), (Number(h >> 32n) | 1) >>> 0];
  }
}
