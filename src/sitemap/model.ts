// The request and response models of POST /api/generate, for the OpenAPI document.
import { t } from "elysia";
import { asSchema, jsonInteger, type ResponseHeaders, type Responses } from "../http/openapi.ts";

export const GenerateRequestModel = t.Object(
  {
    url: t.String({
      format: "uri",
      maxLength: 2048,
      description: "Absolute http:// or https:// URL of the site's start page.",
      examples: ["https://example.com/"],
    }),
  },
  { examples: [{ url: "https://example.com/" }] },
);

export const GenerateSuccess = t.Object({
  success: t.Literal(true),
  message: t.Literal("Sitemap generated successfully."),
  data: t.Object({
    url: t.String({ description: "The start URL after redirects." }),
    sitemap: t.String({ description: "sitemaps.org 0.9 <urlset>, UTF-8." }),
    url_count: jsonInteger({ description: "URLs listed in the sitemap." }),
    pages_crawled: jsonInteger({ description: "Page requests made, redirect hops included; robots.txt excluded." }),
    truncated: t.Boolean({ description: "True when a page, time or size limit stopped the crawl before it ran out of links." }),
    duration_ms: jsonInteger(),
    generated_at: t.String({ format: "date-time" }),
  }),
});

export const GenerateError = t.Object({
  success: t.Literal(false),
  message: t.String(),
});

const successExample = {
  success: true,
  message: "Sitemap generated successfully.",
  data: {
    url: "https://example.com/",
    sitemap:
      '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
      "<url><loc>https://example.com/</loc><lastmod>2026-11-20T08:00:00Z</lastmod></url>" +
      "<url><loc>https://example.com/about</loc></url></urlset>\n",
    url_count: 2,
    pages_crawled: 3,
    truncated: false,
    duration_ms: 412,
    generated_at: "2026-11-21T10:15:00.000Z",
  },
};

const rateLimitHeaders = {
  "X-RateLimit-Limit": { description: "Requests allowed per UTC day.", schema: { type: "integer" as const } },
  "X-RateLimit-Remaining": { description: "Requests left today.", schema: { type: "integer" as const } },
  "X-RateLimit-Reset": { description: "Unix seconds of the next reset (00:00 UTC).", schema: { type: "integer" as const } },
  "RateLimit-Policy": { description: 'IETF draft, e.g. `"daily";q=5;w=86400`.', schema: { type: "string" as const } },
  RateLimit: { description: 'IETF draft, e.g. `"daily";r=4;t=3600`.', schema: { type: "string" as const } },
} satisfies ResponseHeaders;

const error = (description: string, message: string, headers: ResponseHeaders = rateLimitHeaders) => ({
  description,
  headers,
  content: { "application/json": { schema: asSchema(GenerateError), example: { success: false, message } } },
});

export const generateResponses = {
  200: {
    description: "The sitemap.",
    headers: rateLimitHeaders,
    content: { "application/json": { schema: asSchema(GenerateSuccess), example: successExample } },
  },
  400: error("Bad body, invalid URL, or a target address that is not allowed.", "Invalid URL. Provide a full URL that includes http:// or https://."),
  401: error("Missing, unknown or revoked API key.", "Authentication failed. Invalid or missing API key.", {}),
  413: error("Body over 16 KiB.", "Request body is larger than 16 KiB."),
  429: error("Daily quota used up.", "API rate limit exceeded (5 requests per day). Please contact us for premium access.", {
    ...rateLimitHeaders,
    "Retry-After": { description: "Seconds until the next reset.", schema: { type: "integer" as const } },
  }),
  502: error("The start page could not be crawled.", "Could not crawl https://example.com/: HTTP 404"),
  503: error("Too many crawls running and queued; the request did not count.", "The service is busy: too many sitemap crawls are running. Try again shortly.", {
    ...rateLimitHeaders,
    "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" as const } },
  }),
} satisfies Responses;

export const GenerateRequest = asSchema(GenerateRequestModel);
