// Bounds how many crawls run at once (--max-crawls) and how many may wait (--crawl-queue).
// A request beyond both is turned away at once (503) rather than left to pile up.

export class ServiceBusyError extends Error {
  override name = "ServiceBusyError";
  constructor(message = "The service is busy: too many sitemap crawls are running. Try again shortly.") {
    super(message);
  }
}

export class CrawlSlots {
  private running = 0;
  private readonly waiting: { grant: () => void; refuse: (error: Error) => void }[] = [];
  private closed = false;

  constructor(
    readonly maxRunning: number,
    readonly maxWaiting: number,
  ) {}

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Waits for a slot and resolves with its release function. Rejects with ServiceBusyError when
   * the queue is full, the service is stopping, or `signal` aborts while waiting.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.closed) return Promise.reject(new ServiceBusyError("The service is shutting down. Try again shortly."));
    if (this.running < this.maxRunning) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= this.maxWaiting) return Promise.reject(new ServiceBusyError());
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          this.running++;
          resolve(this.releaser());
        },
        refuse: (error: Error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      const onAbort = () => {
        const index = this.waiting.indexOf(entry);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(new ServiceBusyError("The request was cancelled while waiting for a crawl slot."));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Refuses every waiting request (they get their quota back) and any later one. */
  close(): void {
    this.closed = true;
    for (const entry of this.waiting.splice(0)) {
      entry.refuse(new ServiceBusyError("The service is shutting down. Try again shortly."));
    }
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.waiting.shift()?.grant();
    };
  }
}
