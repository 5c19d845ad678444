// The HTTP client's options and their defaults.

export interface HttpClientOptions {
  /** Idle connections kept per (scheme, address, TLS options); more are closed. The crawl's concurrency. */
  maxIdlePerKey?: number;
  /** Idle connections kept in all. */
  maxIdle?: number;
  /** An idle connection is closed after this long. */
  idleTimeoutMs?: number;
  /** The status line and header fields of one response, interim ones included. */
  maxHeaderBytes?: number;
  /**
   * A body is read up to this many bytes (before decoding) before the answer is handed over:
   * one that ends within it is handed over as its bytes, a longer one as a stream that starts
   * with them.
   */
  bufferBytes?: number;
  /** A body within bufferBytes is decoded at once when it decodes to at most this many bytes, else as a stream. */
  maxSyncDecodedBytes?: number;
}

export const DEFAULTS: Required<HttpClientOptions> = {
  maxIdlePerKey: 8,
  maxIdle: 256,
  idleTimeoutMs: 4_000,
  maxHeaderBytes: 64 * 1024,
  bufferBytes: 256 * 1024,
  maxSyncDecodedBytes: 1024 * 1024,
};
