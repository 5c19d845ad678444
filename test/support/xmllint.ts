// Validates XML against the sitemaps.org and extension schemas in test/fixtures/xsd with xmllint
// --schema: libxml2's own xmllint compiled to WebAssembly (the npm package xmllint-wasm, a
// devDependency), so `npm test` needs no system program for it. The schema files are handed to it
// as they are, under their own names, so urlset-extensions.xsd's imports (schemaLocation
// "sitemap.xsd", "sitemap-image.xsd", "xhtml-link.xsd") resolve in its in-memory file system; it
// has no network, as `--nonet` had.
//
// Cost: about 50 ms a call for a small sitemap (a worker thread that compiles the WebAssembly
// module, then the schemas, each time) against 3 ms for Debian's xmllint binary; a 50,000-URL part
// 0.4 s against 0.1 s. The suite (its PostgreSQL tests aside) makes 94 calls, 6.2 s in all: under
// 1% of its time.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { memoryPages, validateXML } from "xmllint-wasm";

const XSD = join(import.meta.dir, "../fixtures/xsd");

/** sitemap: the sitemaps.org 0.9 <urlset>; siteindex: <sitemapindex>; extensions: <urlset> with image and xhtml. */
export type SchemaName = "sitemap" | "siteindex" | "extensions";

const FILES: Record<SchemaName, string> = {
  sitemap: "sitemap.xsd",
  siteindex: "siteindex.xsd",
  extensions: "urlset-extensions.xsd",
};

/** Every schema file, read once: the one named is the schema, the others are there for its imports. */
const SCHEMAS = ["sitemap.xsd", "siteindex.xsd", "sitemap-image.xsd", "xhtml-link.xsd", "urlset-extensions.xsd"].map((fileName) => ({
  fileName,
  contents: readFileSync(join(XSD, fileName), "utf8"),
}));

/** The name xmllint's messages give the document ("sitemap.xml:3: Schemas validity error : ..."). */
const DOCUMENT = "sitemap.xml";

export interface Validation {
  valid: boolean;
  /** xmllint's messages, one per line, without the "sitemap.xml validates" / "fails to validate" summary. */
  errors: string[];
}

/**
 * Validates `xml` against the named schema. A document that is not well-formed or does not
 * validate is `valid: false` with xmllint's messages; anything else xmllint fails at (a schema
 * that does not compile, memory) rejects with its output.
 */
export async function validateXml(xml: string, schema: SchemaName): Promise<Validation> {
  const main = FILES[schema];
  const result = await validateXML({
    xml: { fileName: DOCUMENT, contents: xml },
    schema: SCHEMAS.find((file) => file.fileName === main)!,
    preload: SCHEMAS.filter((file) => file.fileName !== main),
    // Its memory grows as the document needs, up to WebAssembly's 4 GiB. The package's default cap
    // of 32 MiB fails a 15.6 MB, 50,000-URL part with hreflang links and images (so does 64 MiB;
    // 128 MiB passes), and fails it as a parse error in the document.
    maxMemoryPages: memoryPages.max,
  });
  const errors = result.rawOutput
    .split("\n")
    .filter((line) => line !== "" && line !== `${DOCUMENT} validates` && line !== `${DOCUMENT} fails to validate`);
  return { valid: result.valid, errors };
}

/**
 * Validates a sitemap document against the schema its root element and namespaces call for: a
 * <sitemapindex> against siteindex.xsd, a <urlset> against sitemap.xsd, or, when it declares the
 * image or xhtml namespace, against sitemap.xsd together with those extensions' schemas.
 */
export function validateSitemap(xml: string): Promise<Validation> {
  if (/<sitemapindex[\s>]/.test(xml)) return validateXml(xml, "siteindex");
  const extended = xml.includes('"http://www.google.com/schemas/sitemap-image/1.1"') || xml.includes('"http://www.w3.org/1999/xhtml"');
  return validateXml(xml, extended ? "extensions" : "sitemap");
}
