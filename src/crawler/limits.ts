// The crawl's fixed limits, written once: the URL length every <loc> and every accepted start URL
// obeys, and the sitemaps.org bounds of one sitemap file.

/** sitemaps.org: a <loc> has fewer than 2,048 characters; the contract allows exactly 2,048. */
export const MAX_URL_LENGTH = 2_048;
/** sitemaps.org: URLs in one sitemap file. */
export const SITEMAP_MAX_URLS = 50_000;
/** sitemaps.org: bytes of one (uncompressed) sitemap file. */
export const SITEMAP_MAX_BYTES = 52_428_800;
