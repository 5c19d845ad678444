// Bounded body reads: an untrusted body is never read whole (Bun's fetch has no decompressed-size cap).
import { untilAborted } from "./abort.ts";
import type { Answer } from "./answer.ts";
import { ClientAnswer } from "./http1/answer.ts";
import { BODY_IN_MEMORY, BufferedResponse } from "./http1/buffered-response.ts";

export { BODY_IN_MEMORY };

export interface CappedBody {
  bytes: Uint8Array;
  /** The body had more than maxBytes bytes; `bytes` holds only the first maxBytes. */
  overflow: boolean;
}

/** Called once when the body is known to exceed `threshold` bytes, before more is read. */
export interface LargeBodyHook {
  threshold: number;
  enter: () => Promise<void>;
}

/**
 * Reads at most `maxBytes` of the (already decoded) body, then cancels the rest so the socket is freed.
 * Rejects with the signal's reason when it aborts, even for bodies that do not watch the signal themselves.
 * `large.enter` runs (and is awaited) as soon as the body is known to be larger than its threshold:
 * from an unencoded Content-Length before the first read, else when the bytes read cross it.
 */
export async function readCapped(res: Answer, maxBytes: number, signal: AbortSignal, large?: LargeBodyHook): Promise<CappedBody> {
  const declared = declaredLength(res);
  let entered = false;
  if (large && declared > large.threshold) {
    entered = true;
    await large.enter();
  }
  // A body already in memory is taken as it is: no reader, no copy.
  if (res instanceof ClientAnswer ? res.inMemory : BODY_IN_MEMORY in res) {
    signal.throwIfAborted();
    const now = res instanceof ClientAnswer || res instanceof BufferedResponse ? res.takeNow() : null;
    const bytes = now ?? (await untilAborted(res.bytes(), signal));
    if (large && !entered && bytes.byteLength > large.threshold) await large.enter();
    return bytes.byteLength > maxBytes ? { bytes: bytes.subarray(0, maxBytes), overflow: true } : { bytes, overflow: false };
  }
  if (res.body === null) return { bytes: new Uint8Array(0), overflow: false };
  const reader = res.body.getReader();
  const onAbort = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener("abort", onAbort);
  // Pieces are copied into one buffer as they come: a server that trickles its body a byte per
  // read would otherwise cost an array per byte (a 2 MiB page held ~250 MB as 2 million pieces).
  let buffer = new Uint8Array(Math.min(maxBytes, declared > 0 ? declared : INITIAL_BUFFER));
  let size = 0;
  let overflow = false;
  try {
    signal.throwIfAborted();
    for (;;) {
      const { done, value } = await reader.read();
      signal.throwIfAborted();
      if (done) break;
      if (large && !entered && size + value.byteLength > large.threshold) {
        entered = true;
        await large.enter();
      }
      const room = maxBytes - size;
      const piece = value.byteLength > room ? value.subarray(0, room) : value;
      if (size + piece.byteLength > buffer.byteLength) {
        const grown = new Uint8Array(Math.min(maxBytes, Math.max(size + piece.byteLength, buffer.byteLength * 2)));
        grown.set(buffer.subarray(0, size));
        buffer = grown;
      }
      buffer.set(piece, size);
      size += piece.byteLength;
      if (piece !== value) {
        overflow = true;
        await reader.cancel().catch(() => {});
        break;
      }
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  return { bytes: buffer.subarray(0, size), overflow };
}

/** The first buffer of a body of unknown length; it doubles as needed, up to the cap. */
const INITIAL_BUFFER = 64 * 1024;

/** The body's length from Content-Length when it is not content-encoded (then it is the compressed length), else 0. */
function declaredLength(res: Answer): number {
  const encoding = res.headers.get("content-encoding");
  if (encoding !== null && encoding.toLowerCase() !== "identity") return 0;
  const length = Number(res.headers.get("content-length") ?? "");
  return Number.isSafeInteger(length) ? length : 0;
}

/** Cancels a body nobody will read (redirects, errors, non-HTML), so the connection is released. */
export function discardBody(res: Answer): void {
  if (res instanceof ClientAnswer) {
    res.discard();
    return;
  }
  // A body read already has nothing to release; asking for its stream would make one.
  if (res.bodyUsed) return;
  if (res.body !== null && !res.body.locked) void res.body.cancel().catch(() => {});
}
