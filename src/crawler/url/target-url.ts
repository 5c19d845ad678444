// Step 3 of admission (src/admission/admission.ts): is the `url` field a full http(s) URL we are willing to crawl?

import { MAX_URL_LENGTH, normaliseUrl } from "./url.ts";

export const INVALID_URL_MESSAGE = "Invalid URL. Provide a full URL that includes http:// or https://.";

/**
 * The text itself must start with `http://` or `https://` and a non-empty authority: the URL
 * parser alone would accept `http:example.com` or `http:///example.com` and invent a host.
 * The authority ends where the URL parser ends it for http(s): at `/`, `\`, `?` or `#`.
 */
const SCHEME_AND_AUTHORITY = /^https?:\/\/([^/\\?#]*)/i;

/**
 * The URL to crawl, or null when `raw` is not a string, is over 2,048 characters (UTF-16 code
 * units) as sent or once normalised (2,048 `é` are 12,288 characters as a <loc>), is not an
 * absolute http:// or https:// URL with a host, or carries userinfo. Any `@`
 * in the authority is refused, even an empty `http://@host/`: userinfo has no use here and is
 * the classic way to disguise a host (`http://trusted.example@evil.example/`).
 * Leading or trailing whitespace is refused rather than trimmed.
 */
export function parseTargetUrl(raw: unknown): URL | null {
  if (typeof raw !== "string" || raw.length > MAX_URL_LENGTH) return null;
  const authority = SCHEME_AND_AUTHORITY.exec(raw)?.[1];
  if (!authority || authority.includes("@") || raw.trim() !== raw) return null;
  const normalised = normaliseUrl(raw);
  if (normalised === null || normalised.length > MAX_URL_LENGTH) return null;
  return new URL(raw);
}
