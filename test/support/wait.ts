// Waits for what a test can observe (a fixture site's request log, a job's status, a log line)
// instead of a guessed sleep before an assertion. A wait that times out throws naming what it waited
// for, so the failure says which step never happened rather than letting a later assertion fail on
// stale state.

/** Thrown when a wait runs out of time; the message names the condition waited for. */
export class WaitTimeoutError extends Error {
  override name = "WaitTimeoutError";
}

/**
 * Polls `condition` every `everyMs` until it returns a truthy value, and returns that value; past
 * `timeoutMs` throws "timed out after <timeoutMs> ms waiting for <what>".
 */
export async function waitFor<T>(condition: () => T | Promise<T>, timeoutMs: number, what: string, everyMs = 20): Promise<NonNullable<T>> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (performance.now() > deadline) throw new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

/** `promise`'s value if it settles within `timeoutMs`; otherwise throws "timed out after <timeoutMs> ms waiting for <what>". */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WaitTimeoutError(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The JSON access-log line of the request whose X-Request-Id was `id`, parsed, once the server has
 * written it to `stdout` (the lines read so far, as test/support/binary.ts collects them).
 */
export async function requestLogLine(stdout: readonly string[], id: string | null | undefined, timeoutMs = 2_000): Promise<any> {
  const line = await waitFor(() => stdout.find((l) => l.includes(`"request_id":"${id}"`)), timeoutMs, `the log line of request ${id}`);
  return JSON.parse(line);
}
