// Timers and aborts shared by the network path: a work that ignores its signal still ends when the
// signal aborts, and delays too long for setTimeout are clamped.
//
// A crawl's request went through four races of its signal (the requester's, politeness's slot and
// its send, the HTTP client's pool), each an add/removeEventListener pair: 3.4 µs a page of the
// profile. A sender whose promise settles by itself as its signal aborts (the pool rejects it with
// the signal's reason) is marked with `settlesOnAbort`, as are the layers over it that keep that
// promise (politeness, credentials, the guarded fetcher); a caller over a marked sender reads the
// signal when the promise settles instead of racing it, so that the pool's is the one listener
// left (notes/bench-profile.md section 16, step 6). The listeners on a request's signal are added
// without `{ once: true }`: a signal fires "abort" only once, so none runs twice; each is removed
// when its work settles first, and one that has run stays on a signal of its own request (never on
// the crawl's). The option cost 0.34 µs a listener on this machine (a fresh signal's add and remove:
// 1,408 ns with it, 1,071 without, the fastest of 7 runs of a million each; notes/sites.md, ninth
// session).

/** Senders marked by settlesOnAbort. */
const settling = new WeakSet<object>();

/**
 * Marks `send` (a function taking a signal among its options) as one whose promise settles no later
 * than a few microtasks after that signal aborts: rejected with the signal's reason, or with a value
 * or error that came first. Returns `send`.
 */
export function settlesOnAbort<F extends object>(send: F): F {
  settling.add(send);
  return send;
}

/** `outer` marked as `inner` is: for a wrapper that hands back its inner sender's promise (or waits that settle on the signal too). */
export function settlesLike<F extends object>(inner: object, outer: F): F {
  return settling.has(inner) ? settlesOnAbort(outer) : outer;
}

/** `send` was marked by settlesOnAbort. */
export function isSettlingOnAbort(send: object): boolean {
  return settling.has(send);
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
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort);
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
