// A process-wide bound on the memory that large pages take. A page body costs its bytes and its
// decoded text (twice its size for UTF-16) until the collector runs. Small pages go freely; a page past `threshold`
// bytes waits for one of a few permits before it reads on, holds it until its links are extracted,
// and the collector runs after every `gcEveryBytes` of large pages, so hostile sites of multi-MB
// pages under --max-crawls crawls cost a few permits' worth of memory, not crawls x concurrency.

export class LargePageGate {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  private bytesSinceGc = 0;

  constructor(
    /** Bytes a page may read without a permit. */
    readonly threshold: number,
    permits: number,
    private readonly gcEveryBytes: number,
  ) {
    this.free = permits;
  }

  /** Waits for a permit (rejects with the signal's reason on abort); the release takes the bytes read. */
  async acquire(signal: AbortSignal): Promise<(bytes: number) => void> {
    signal.throwIfAborted();
    if (this.free > 0) this.free--;
    else {
      await new Promise<void>((resolve, reject) => {
        const grant = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          this.waiting.splice(this.waiting.indexOf(grant), 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        this.waiting.push(grant);
      });
    }
    let released = false;
    return (bytes) => {
      if (released) return;
      released = true;
      this.bytesSinceGc += bytes;
      if (this.bytesSinceGc >= this.gcEveryBytes) {
        this.bytesSinceGc = 0;
        // Large strings and buffers live outside the collector's heap accounting: without this the
        // process grows by hundreds of MB before a collection returns them.
        Bun.gc(true);
      }
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}

/** Pages over 512 KiB: two at a time in the process, a full collection every 8 MiB of them. */
export const largePages = new LargePageGate(512 * 1024, 2, 8 * 1024 * 1024);
