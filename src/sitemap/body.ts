// Bounded body reads: an untrusted body is never read whole (Bun's fetch has no decompressed-size cap).

export interface CappedBody {
  bytes: Uint8Array;
  /** The body had more than maxBytes bytes; `bytes` holds only the first maxBytes. */
  overflow: boolean;
}

/**
 * Reads at most `maxBytes` of the (already decoded) body, then cancels the rest so the socket is freed.
 * Rejects with the signal's reason when it aborts, even for bodies that do not watch the signal themselves.
 */
export async function readCapped(res: Response, maxBytes: number, signal: AbortSignal): Promise<CappedBody> {
  if (res.body === null) return { bytes: new Uint8Array(0), overflow: false };
  const reader = res.body.getReader();
  const onAbort = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  let overflow = false;
  try {
    signal.throwIfAborted();
    for (;;) {
      const { done, value } = await reader.read();
      signal.throwIfAborted();
      if (done) break;
      if (size + value.byteLength > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - size));
        size = maxBytes;
        overflow = true;
        await reader.cancel().catch(() => {});
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  return { bytes: concat(chunks, size), overflow };
}

/** Cancels a body nobody will read (redirects, errors, non-HTML), so the connection is released. */
export function discardBody(res: Response): void {
  if (res.body !== null && !res.body.locked) void res.body.cancel().catch(() => {});
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
