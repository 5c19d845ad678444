// Content-Encoding: gzip, deflate and br bodies decoded at once when small, else as they are read
// (so that a reader's cap on decoded bytes stops a bomb early).
import { trimOws } from "./head.ts";
import { HttpClientError } from "./errors.ts";

type Format = "gzip" | "deflate" | "deflate-raw" | "brotli";

const DECODERS = new Set(["gzip", "x-gzip", "deflate", "br"]);

/**
 * The codings a Content-Encoding value applied, in order ("identity" left out): null when none, an
 * error for one that cannot be decoded.
 */
export function contentCodings(value: string): string[] | null | HttpClientError {
  const codings = codingList(value);
  for (const coding of codings) {
    if (!DECODERS.has(coding))
      return new HttpClientError(`unsupported content encoding ${JSON.stringify(coding)}`, "ERR_HTTP_UNSUPPORTED_ENCODING");
  }
  return codings.length > 0 ? codings : null;
}

/** The codings of a Content-Encoding value, lower-cased, "identity" and empty elements left out. */
function codingList(value: string): string[] {
  return value
    .toLowerCase()
    .split(",")
    .map(trimOws)
    .filter((c) => c !== "" && c !== "identity");
}

/**
 * The decompression format of one coding. "deflate" is meant to be zlib-wrapped (RFC 9110 8.4.1.2)
 * but some servers send raw deflate: the first bytes tell (a zlib header is a multiple of 31).
 */
function formatOf(coding: string, first: Uint8Array | undefined): Format {
  if (coding === "br") return "brotli";
  if (coding === "deflate") {
    const zlibHeader =
      first !== undefined && first.byteLength >= 2 && (first[0]! & 0x0f) === 8 && ((first[0]! << 8) | first[1]!) % 31 === 0;
    return zlibHeader || first === undefined ? "deflate" : "deflate-raw";
  }
  return "gzip";
}

// node:zlib takes ~9 ms to load: start-up leaves it until a page first arrives encoded.
let zlibModule: typeof import("node:zlib") | undefined;

/** Decodes at once, the last coding applied first; throws ERR_BUFFER_TOO_LARGE past `max` bytes. */
export function decodeSync(bytes: Uint8Array, encodings: string[], max: number): Uint8Array {
  zlibModule ??= require("node:zlib") as typeof import("node:zlib");
  const zlib = zlibModule;
  let out = bytes;
  for (let i = encodings.length - 1; i >= 0; i--) {
    const options = { maxOutputLength: max };
    switch (formatOf(encodings[i]!, out)) {
      case "gzip":
        out = zlib.gunzipSync(out, options);
        break;
      case "deflate":
        out = zlib.inflateSync(out, options);
        break;
      case "deflate-raw":
        out = zlib.inflateRawSync(out, options);
        break;
      case "brotli":
        out = zlib.brotliDecompressSync(out, options);
        break;
    }
  }
  return out;
}

/** Decodes as the reader reads: a gzip bomb costs what is read of it, not what it would expand to. */
export function decodeStream(
  raw: ReadableStream<Uint8Array>,
  encodings: string[],
  first: Uint8Array | undefined,
): ReadableStream<Uint8Array> {
  let stream = raw;
  for (let i = encodings.length - 1; i >= 0; i--) {
    const format = formatOf(encodings[i]!, i === encodings.length - 1 ? first : undefined);
    stream = stream.pipeThrough(new DecompressionStream(format as "gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>);
  }
  return stream;
}

export function erroredStream(err: unknown): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.error(err);
    },
  });
}
