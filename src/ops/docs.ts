// The OpenAPI document at /swagger/json and Swagger UI at /swagger, with the UI's assets
// embedded in the executable (pinned swagger-ui-dist) so the page works with no internet access.
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { VERSION } from "../config/version.ts";
import { HttpError } from "../http/errors.ts";

const ASSETS = "/swagger/assets";

// A Map, not an object literal: the name comes from the URL, and `constructor` or `__proto__`
// must find nothing rather than Object.prototype's members.
const assets = new Map<string, { file: string; type: string }>([
  ["swagger-ui-bundle.js", { file: swaggerBundle, type: "text/javascript; charset=utf-8" }],
  ["swagger-ui.css", { file: swaggerCss, type: "text/css; charset=utf-8" }],
]);

export const API_KEY_SCHEME = "ApiKeyAuth";
/** The key as `?api_key=`: only the events stream takes it, for a browser's EventSource. */
export const API_KEY_QUERY_SCHEME = "ApiKeyQuery";

export interface DocsOptions {
  /** --free-daily-limit: the document states the free tier this server applies. */
  freeDailyLimit: number;
}

export const docs = ({ freeDailyLimit }: DocsOptions) =>
  new Elysia({ name: "docs" })
    .use(
      openapi({
        path: "/swagger",
        specPath: "/swagger/json",
        provider: "swagger-ui",
        // The plugin drops every path containing a dot unless told otherwise (/api.php).
        exclude: { staticFile: false, paths: [/^\/swagger/] },
        swagger: { theme: `${ASSETS}/swagger-ui.css`, cdn: `${ASSETS}/swagger-ui-bundle.js`, autoDarkMode: false },
        documentation: {
          info: {
            title: "genapi",
            version: VERSION,
            description:
              "Self-hosted generator API: an open password generator (`/api.php`) and an API-key-protected " +
              `sitemap crawler (\`/api/generate\`) with a free tier of ${freeDailyLimit} requests per client address per UTC day. ` +
              "The project has no license yet, so the document states none.",
            // Self-hosted: whoever runs this server answers for it; the project publishes no address.
            contact: { name: "The operator of this genapi server" },
          },
          servers: [{ url: "/", description: "This server" }],
          tags: [
            { name: "password", description: "Random passwords from chosen character classes. No credentials." },
            { name: "sitemap", description: "Crawl a website and return its XML sitemap. Needs an X-API-Key." },
            {
              name: "jobs",
              description:
                "Crawl jobs: long crawls of large sites, durable in the store, with progress events and split sitemaps. Needs an X-API-Key.",
            },
            {
              name: "sites",
              description:
                "Sites: crawls repeated on a schedule, with change sets, lastmod dates kept while a page's content is unchanged, a public sitemap URL and IndexNow. Needs a premium X-API-Key (the public URL needs none).",
            },
            { name: "operations", description: "Health checks for load balancers and service managers." },
          ],
          components: {
            securitySchemes: {
              [API_KEY_SCHEME]: {
                type: "apiKey",
                in: "header",
                name: "X-API-Key",
                description: "Create one on the server with `genapi keys create --name NAME`.",
              },
              [API_KEY_QUERY_SCHEME]: {
                type: "apiKey",
                in: "query",
                name: "api_key",
                description:
                  "The same key as a query parameter, accepted only by GET /api/jobs/{id}/events: a browser's EventSource cannot send X-API-Key.",
              },
            },
          },
        },
      }),
    )
    .get(
      `${ASSETS}/:name`,
      ({ params, set }) => {
        const asset = assets.get(params.name);
        if (!asset) throw new HttpError(404, `Not found: ${ASSETS}/${params.name}`);
        set.headers["content-type"] = asset.type;
        set.headers["cache-control"] = "public, max-age=86400";
        return Bun.file(asset.file);
      },
      { detail: { hide: true } },
    );
