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
export const jsonInteger = (options: { description?: string; minimum?: number; maximum?: number; default?: number } = {}) =>
  t.Unsafe<number>({ type: "integer", ...options });
