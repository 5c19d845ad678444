// Helpers for documenting routes with `t` models in `detail` (the OpenAPI document only).
import { t, type DocumentDecoration, type TSchema } from "elysia";

// The OpenAPI types of `detail` do not recognise TypeBox schemas, which are plain JSON Schema at
// run time; this is the one place that says so.
export type Responses = NonNullable<DocumentDecoration["responses"]>;
type Response = Exclude<Responses[string], { $ref: string }>;
export type ResponseHeaders = NonNullable<Response["headers"]>;
type SchemaObject = NonNullable<NonNullable<Response["content"]>[string]["schema"]>;
export const asSchema = (schema: TSchema) => schema as unknown as SchemaObject;

// Elysia's t.Integer also accepts numeric strings and documents itself as "string or integer";
// these schemas describe JSON values, so they state the plain JSON Schema integer.
export const jsonInteger = (
  options: { description?: string; minimum?: number; maximum?: number; default?: number; examples?: number[] } = {},
) => t.Unsafe<number>({ type: "integer", ...options });

/**
 * Spread into the `detail` of an endpoint that needs no key: OpenAPI reads an operation without
 * `security` as "unstated", which Redocly's recommended rules refuse (test/ops/redocly.test.ts
 * lints the served document, so a new route that forgets it fails there).
 */
export const OPEN_ENDPOINT = { security: [] as { [scheme: string]: string[] }[] };

/**
 * `responses` with the 429's example message replaced by `message`: the models are built once at
 * load, while the free tier's limit (--free-daily-limit) is known when the routes are composed.
 */
export function with429Example<T extends Responses>(responses: T, message: string): T {
  const refused = responses["429"] as Response | undefined;
  const json = refused?.content?.["application/json"];
  if (!refused || !json) return responses;
  const example = { ...(json.example as Record<string, unknown>), message };
  return { ...responses, 429: { ...refused, content: { ...refused.content, "application/json": { ...json, example } } } };
}
