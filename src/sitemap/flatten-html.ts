// lol-html keeps an open-element record per nesting level (about 280 bytes): a 3.3 MB page of
// unclosed <b> tags made one parse take 305 MB, whatever the crawl's other bounds. Before a large
// page is read, flattenHtml removes every tag that neither carries what the crawler reads nor
// changes how the text after it is tokenised, and closes each <a> before the next one opens (as
// HTML's parser does), so no element nests: the links, base, canonical, meta and images read from
// the result are those of the page.

/**
 * Start and end tags of any element but a, area, base, link, meta, img (what extraction reads)
 * and script, style, textarea, title, xmp, iframe, noembed, noframes, plaintext (whose content is
 * text). Comments, doctypes and processing instructions do not start with a letter and stay;
 * tag-like text inside them, or inside a script or title, may go, as it is text there either way.
 */
const OTHER_TAGS = /<\/?(?!(?:a|area|base|link|meta|img|script|style|textarea|title|xmp|iframe|noembed|noframes|plaintext)[\s/>])[A-Za-z][^>]*>/gi;
const ANCHOR_START = /<a(?=[\s/>])/gi;

/** `html` without nesting (see above). Two native regular-expression passes, no callback per tag. */
export function flattenHtml(html: string): string {
  return html.replace(OTHER_TAGS, "").replace(ANCHOR_START, "</a><a");
}
