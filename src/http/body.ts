// Reads a request body with a byte cap enforced while streaming, so an oversized or endless
// body is cut off before it is buffered or parsed.

export class PayloadTooLargeError extends Error {
  override name = "PayloadTooLargeError";
  constructor(readonly limit: number) {
    super(`Request body is larger than ${limit} bytes.`);
  }
}

export class BadBodyError extends Error {
  override name = "BadBodyError";
}

/**
 * How long a whole body may take to arrive. The largest body any endpoint takes (64 KiB) arrives
 * in 10 s at 52 kbit/s, so only a stalled or trickling client meets it; it is well under Bun's 30 s
 * idle timeout, which would close the connection with no answer at all. The error's status is the
 * answer the global error handler gives, in the endpoint's own error shape.
 */
export const BODY_DEADLINE_MS = 10_000;

/** A body that could not be read whole; `status` and `message` are the answer, in any error shape. */
export abstract class BodyReadError extends Error {
  override name = "BodyReadError";
  abstract readonly status: number;
}

export class BodyTimeoutError extends BodyReadError {
  override name = "BodyTimeoutError";
  readonly status = 408;
  constructor(readonly deadlineMs: number) {
    super(`Request body did not arrive within ${deadlineMs / 1000} s.`);
  }
}

/** The client closed the connection before the body's end (nobody is left to read the answer). */
export class IncompleteBodyError extends BodyReadError {
  override name = "IncompleteBodyError";
  readonly status = 400;
  constructor() {
    super("Request body ended early: the connection was closed.");
  }
}

/**
 * Body reads under way, each with its deadline. One sweep every SWEEP_MS cancels the late ones (a
 * cancelled reader's pending read resolves as done): no timer or promise per request, which on
 * the /api.php hot path cost more than the read of a small body itself.
 */
interface Watched {
  deadline: number;
  expired: boolean;
  reader: { cancel(): Promise<void> };
}
const SWEEP_MS = 250;
const watched = new Set<Watched>();
let sweeper: Timer | undefined;

function sweep() {
  const now = performance.now();
  for (const read of watched) {
    if (read.deadline > now) continue;
    read.expired = true;
    watched.delete(read);
    read.reader.cancel().catch(() => {});
  }
  if (watched.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/**
 * Reads at most `limit` bytes of the body within `deadlineMs`; throws PayloadTooLargeError beyond
 * the limit, BodyTimeoutError past the deadline, IncompleteBodyError when the connection closes.
 */
export async function readBodyBytes(request: Request, limit: number, deadlineMs = BODY_DEADLINE_MS): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) throw new PayloadTooLargeError(limit);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const read: Watched = { deadline: performance.now() + deadlineMs, expired: false, reader };
  watched.add(read);
  sweeper ??= setInterval(sweep, Math.min(SWEEP_MS, deadlineMs)).unref();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (read.expired) throw new BodyTimeoutError(deadlineMs);
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        throw new PayloadTooLargeError(limit);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof PayloadTooLargeError || error instanceof BodyTimeoutError) throw error;
    // Bun rejects a read with an AbortError when the connection closes mid-body.
    if ((error as Error)?.name === "AbortError") throw new IncompleteBodyError();
    throw error;
  } finally {
    watched.delete(read);
  }
  return Buffer.concat(chunks);
}

export type BodyKind = "json" | "form" | "multipart" | "empty" | "other";

/** The media type of a request, lower-cased, without parameters. */
export function mediaType(request: Request): string {
  return (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * Reads and parses a body by its media type: JSON, urlencoded or multipart forms. Returns the
 * parsed value (`unknown` for JSON, a field record for forms). Throws BadBodyError when the body
 * does not parse, PayloadTooLargeError when it is over the cap.
 */
export async function readParsedBody(
  request: Request,
  limit: number,
  deadlineMs = BODY_DEADLINE_MS,
): Promise<{ kind: BodyKind; value: unknown }> {
  const bytes = await readBodyBytes(request, limit, deadlineMs);
  const type = mediaType(request);
  if (bytes.byteLength === 0) return { kind: "empty", value: undefined };
  const text = () => new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  if (type === "application/json" || type.endsWith("+json")) {
    try {
      return { kind: "json", value: JSON.parse(text()) };
    } catch {
      throw new BadBodyError("Request body is not valid JSON.");
    }
  }
  if (type === "application/x-www-form-urlencoded") {
    return { kind: "form", value: Object.fromEntries(new URLSearchParams(text())) };
  }
  if (type === "multipart/form-data") {
    try {
      const form = await new Response(bytes, { headers: { "content-type": request.headers.get("content-type")! } }).formData();
      // Field names come from the client: no prototype, so `__proto__` is just a name.
      const fields: Record<string, string> = Object.create(null);
      for (const [key, value] of form) if (typeof value === "string") fields[key] = value;
      return { kind: "multipart", value: fields };
    } catch {
      throw new BadBodyError("Request body is not valid multipart/form-data.");
    }
  }
  return { kind: "other", value: text() };
}
