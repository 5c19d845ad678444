// HTTP binding of the password generator: GET and POST /api.php. CORS, Cache-Control, logging
// and 404/405 are added by the app for every route. The server answers a plain `GET /api.php`
// through fast-lane.ts with this route's result (passwordFromQuery) and the app's headers.

import { Elysia } from "elysia";
import { BadBodyError, PayloadTooLargeError, readParsedBody } from "../http/body.ts";
import { passwordErrorBody } from "../http/errors.ts";
import { passwordPostResponses, passwordQueryParameters, passwordRequestBody, passwordResponses } from "./model.ts";
import { createRandom } from "./random.ts";
import { generateFromFields, type PasswordResult } from "./service.ts";
import { OPEN_ENDPOINT } from "../http/openapi.ts";

const BODY_LIMIT = 64 * 1024;

const random = createRandom();

/** Query-string fields; for a repeated name the last value wins, as in PHP. */
function queryFields(url: string): Record<string, unknown> {
  const fields: Record<string, unknown> = Object.create(null);
  const start = url.indexOf("?");
  if (start === -1) return fields;
  const end = url.indexOf("#", start);
  for (const [name, value] of new URLSearchParams(url.slice(start + 1, end === -1 ? undefined : end))) fields[name] = value;
  return fields;
}

/**
 * GET /api.php's result for a request URL: the query's fields through the generator. The one
 * implementation of GET, shared by the route below and the fast lane (fast-lane.ts).
 */
export function passwordFromQuery(url: string): PasswordResult {
  return generateFromFields(queryFields(url), random);
}

type PostFields = { ok: true; fields: Record<string, unknown> } | { ok: false; status: 400 | 413; error: string };

/** Body fields laid over the query fields, or why the body cannot be used. */
async function postFields(request: Request): Promise<PostFields> {
  const fields = queryFields(request.url);
  let body: unknown;
  try {
    const parsed = await readParsedBody(request, BODY_LIMIT);
    if (parsed.kind === "empty" || parsed.kind === "other") return { ok: true, fields };
    body = parsed.value;
  } catch (error) {
    if (error instanceof PayloadTooLargeError) return { ok: false, status: 413, error: "Request body is larger than 64 KiB." };
    if (error instanceof BadBodyError) return { ok: false, status: 400, error: error.message };
    throw error;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, status: 400, error: "Request body must be a JSON object." };
  }
  for (const [name, value] of Object.entries(body)) fields[name] = value;
  return { ok: true, fields };
}

const description =
  "Returns a random password. Every selected class appears at least once (or at least its `min_<class>`), and the " +
  "password is drawn uniformly from all such strings with a cryptographically secure source. `entropy_bits` is log2 " +
  "of the number of passwords the request could produce. `count` above 1 answers `passwords`, an array, in place of " +
  "`password`. `type=passphrase` answers words from the EFF large word list (7,776 words, CC BY 3.0 US, Electronic " +
  "Frontier Foundation) instead; length and class parameters do not apply to it, and with `count` above 1 `lengths` " +
  "(one per phrase) stands in place of `length`.";

export const passwordRoutes = new Elysia({ name: "password" })
  .get(
    "/api.php",
    ({ request, status }) => {
      const result = passwordFromQuery(request.url);
      return result.status === 200 ? result.body : status(result.status, result.body);
    },
    {
      detail: {
        ...OPEN_ENDPOINT,
        summary: "Generate a password",
        description: `${description} Options come from the query string.`,
        tags: ["password"],
        parameters: passwordQueryParameters,
        responses: passwordResponses,
      },
    },
  )
  .post(
    "/api.php",
    async ({ request, status }) => {
      const read = await postFields(request);
      if (!read.ok) return status(read.status, passwordErrorBody(read.error));
      const result = generateFromFields(read.fields, random);
      return result.status === 200 ? result.body : status(result.status, result.body);
    },
    {
      // The handler reads the body itself, with a size cap, so Elysia must leave it untouched.
      // Elysia 1.4.30 fails on "none" (TypeError, answered 400) when a global onParse hook
      // exists, so the app must not add one.
      parse: "none",
      detail: {
        ...OPEN_ENDPOINT,
        summary: "Generate a password (form or JSON body)",
        description: `${description} Options come from the body (urlencoded, multipart or JSON) and the query string; body fields win.`,
        tags: ["password"],
        parameters: passwordQueryParameters,
        requestBody: passwordRequestBody,
        responses: passwordPostResponses,
      },
    },
  );
