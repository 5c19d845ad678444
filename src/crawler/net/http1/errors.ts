// The HTTP client's failures: one Error class whose `code` says which, and the messages each is made with.

/** A protocol or connection failure; `code` is what describeFailure (request.ts) reads. */
export class HttpClientError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = "HttpClientError";
  }
}

export function malformed(what: string): HttpClientError {
  return new HttpClientError(`malformed HTTP response (${what})`, "ERR_HTTP_MALFORMED");
}

export function headersTooLarge(max: number): HttpClientError {
  return new HttpClientError(`HTTP response header section larger than ${max} bytes`, "ERR_HTTP_HEADERS_TOO_LARGE");
}

export function decodeError(err: unknown): HttpClientError {
  return new HttpClientError(`cannot decode the response body (${(err as Error).message})`, "ERR_HTTP_DECODE");
}
