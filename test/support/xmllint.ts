// Validates XML against the sitemaps.org and extension schemas in test/fixtures/xsd with `xmllint
// --schema` (Debian's libxml2-utils; .ci/run installs it where missing).
import { join } from "node:path";

const XSD = join(import.meta.dir, "../fixtures/xsd");

/** sitemap: the sitemaps.org 0.9 <urlset>; siteindex: <sitemapindex>; extensions: <urlset> with image and xhtml. */
export type SchemaName = "sitemap" | "siteindex" | "extensions";

const FILES: Record<SchemaName, string> = {
  sitemap: "sitemap.xsd",
  siteindex: "siteindex.xsd",
  extensions: "urlset-extensions.xsd",
};

export interface Validation {
  valid: boolean;
  /** xmllint's messages, one per line, without the "- validates" summary. */
  errors: string[];
}

/** Validates `xml` against the named schema. */
export async function validateXml(xml: string, schema: SchemaName): Promise<Validation> {
  const proc = Bun.spawn(["xmllint", "--noout", "--nonet", "--schema", join(XSD, FILES[schema]), "-"], {
    stdin: new TextEncoder().encode(xml),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  const errors = stderr.split("\n").filter((line) => line !== "" && line !== "- validates" && line !== "- fails to validate");
  return { valid: code === 0, errors };
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
