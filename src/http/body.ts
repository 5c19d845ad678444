// Reads a request body with a byte cap enforced while streaming, so an oversized or endless
// body is cut off before it is buffered or parsed.

export class PayloadTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`Request body is larger than ${limit} bytes.`);
  }
}

export class BadBodyError extends Error {}

/** Reads at most `limit` bytes of the body; throws PayloadTooLargeError beyond that. */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) throw new PayloadTooLargeError(limit);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw new PayloadTooLargeError(limit);
    }
    chunks.push(value);
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
): Promise<{ kind: BodyKind; value: unknown }> {
  const bytes = await readBodyBytes(request, limit);
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
      const fields: Record<string, string> = {};
      for (const [key, value] of form) if (typeof value === "string") fields[key] = value;
      return { kind: "multipart", value: fields };
    } catch {
      throw new BadBodyError("Request body is not valid multipart/form-data.");
    }
  }
  return { kind: "other", value: text() };
}
