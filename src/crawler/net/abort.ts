// Timers and aborts shared by the network path: a work that ignores its signal still ends when the
// signal aborts, and delays too long for setTimeout are clamped.

/** setTimeout fires at once for delays past 2^31 - 1 ms: clamp instead (about 24.8 days). */
export function timerDelay(ms: number): number {
  return Math.min(ms, 2 ** 31 - 1);
}

/**
 * Settles with `work`, or rejects as soon as `signal` aborts even if the work ignores the signal
 * (a fetcher, a DNS lookup). A result that arrives after the abort goes to `discard`.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, discard?: (late: T) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) discard?.(value);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
