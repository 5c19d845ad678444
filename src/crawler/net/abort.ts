// Timers and aborts shared by the network path: a work that ignores its signal still ends when the
// signal aborts, and delays too long for setTimeout are clamped.
//
// A page's request raced the same signal three times (the requester, politeness and the HTTP
// client's pool, each an add/removeEventListener pair: 1.1 µs of 2.4 for a controller and three
// pairs, medians of 7 x 100,000, Bun 1.4.4, load ~15). A promise that settles by itself when its
// signal aborts (the pool's, politeness's) is marked with `settlesOnAbort`, and `untilAborted` of
// it under the same signal puts no listener on the signal: it reads the signal when the work settles.
// The requester and the guarded fetcher over a sender that settles on its signal: 8.2-9.7 -> 6.9-8.4
// µs a request (medians of 7 x 50,000, 4 alternating runs, load ~10; notes/bench-profile.md
// section 16).

/** Promises marked by settlesOnAbort, and the signal each settles on. */
const settling = new WeakMap<Promise<unknown>, AbortSignal>();

/**
 * Marks `work` as settling (rejected with `signal.reason`, or with a value or error of its own that
 * untilAborted then overrides) no later than a few microtasks after `signal` aborts, so that
 * untilAborted need not race it. Returns `work`.
 */
export function settlesOnAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  settling.set(work, signal);
  return work;
}

/** setTimeout fires at once for delays past 2^31 - 1 ms: clamp instead (about 24.8 days). */
export function timerDelay(ms: number): number {
  return Math.min(ms, 2 ** 31 - 1);
}

/**
 * Settles with `work`, or rejects as soon as `signal` aborts even if the work ignores the signal
 * (a fetcher, a DNS lookup). A result that arrives after the abort goes to `discard`.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, discard?: (late: T) => void): Promise<T> {
  // Work that settles on this signal by itself: what it settles with, unless the signal aborted
  // first (as the listener below would have seen it first).
  if (settling.get(work) === signal)
    return work.then(
      (value) => {
        if (!signal.aborted) return value;
        discard?.(value);
        throw signal.reason;
      },
      (err) => {
        throw signal.aborted ? signal.reason : err;
      },
    );
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
