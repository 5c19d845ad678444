// Schemas that document the password endpoint in the OpenAPI spec. Elysia validates none of
// them: the handler parses every field itself and answers with the contract's error texts.

import { t, type DocumentDecoration } from "elysia";
import { asSchema, jsonInteger, type Responses } from "../http/openapi.ts";

const booleanText = (description: string, byDefault: "true" | "false") =>
  t.Optional(
    t.String({
      description: `${description} One of true, false, 1, 0 (any case). Default ${byDefault}.`,
      enum: ["true", "false", "1", "0"],
      default: byDefault,
    }),
  );

const textFields = {
  length: t.Optional(jsonInteger({ description: "Password length.", minimum: 8, maximum: 128, default: 16 })),
  uppercase: booleanText("Use A-Z.", "true"),
  lowercase: booleanText("Use a-z.", "true"),
  numbers: booleanText("Use 0-9.", "true"),
  symbols: booleanText("Use the 28 symbols !#$%&()*+,-./:;<=>?@[]^_{|}~.", "true"),
  exclude_similar: booleanText("Remove the look-alikes 0 O 1 l I |.", "false"),
  exclude: t.Optional(t.String({ description: "Characters to remove.", maxLength: 128, examples: ["{}[]"] })),
};

/** Options in the query string (GET and POST), and in urlencoded and multipart POST bodies. */
export const PasswordQuery = t.Object(textFields, { description: "Password options. Unknown parameters are ignored." });
export const PasswordFormBody = t.Object(textFields, { description: "Password options; body fields win over the query string." });

type Parameters = NonNullable<DocumentDecoration["parameters"]>;

/** The query parameters, each with its description where Swagger UI shows it. */
export const passwordQueryParameters: Parameters = Object.entries(PasswordQuery.properties).map(([name, schema]) => ({
  name,
  in: "query",
  required: false,
  description: schema.description,
  schema: asSchema(schema),
}));

const integer = jsonInteger;

const jsonBoolean = (description: string) =>
  t.Optional(
    t.Union([t.Boolean(), t.Literal(1), t.Literal(0), t.String()], {
      description: `${description} JSON true/false, 1/0, or the text true, false, 1, 0.`,
    }),
  );

export const PasswordJsonBody = t.Object(
  {
    length: t.Optional(t.Union([integer(), t.String()], { description: "Password length, 8 to 128. Default 16.", examples: [24] })),
    uppercase: jsonBoolean("Use A-Z. Default true."),
    lowercase: jsonBoolean("Use a-z. Default true."),
    numbers: jsonBoolean("Use 0-9. Default true."),
    symbols: jsonBoolean("Use the 28 symbols. Default true."),
    exclude_similar: jsonBoolean("Remove the look-alikes 0 O 1 l I |. Default false."),
    exclude: t.Optional(t.String({ description: "Characters to remove, at most 128.", examples: ["{}[]"] })),
  },
  { description: "Password options as a JSON object; body fields win over the query string." },
);

export const PasswordSuccessModel = t.Object({
  success: t.Literal(true),
  password: t.String({ description: "The generated password." }),
  length: integer({ description: "Length of the password." }),
  parameters: t.Object(
    {
      requested_length: integer(),
      uppercase: t.Boolean(),
      lowercase: t.Boolean(),
      numbers: t.Boolean(),
      symbols: t.Boolean(),
      exclude_similar: t.Optional(t.Boolean({ description: "Only when sent." })),
      exclude: t.Optional(t.String({ description: "Only when sent." })),
    },
    { description: "The settings used." },
  ),
  entropy_bits: t.Number({ description: "log2 of the number of passwords the request could produce, 2 decimals." }),
});

export const PasswordErrorModel = t.Object({
  success: t.Literal(false),
  error: t.String({ description: "What is wrong with the request." }),
});

const errorContent = (example: string) => ({
  "application/json": { schema: asSchema(PasswordErrorModel), example: { success: false, error: example } },
});

export const passwordResponses = {
  200: {
    description: "The generated password.",
    content: {
      "application/json": {
        schema: asSchema(PasswordSuccessModel),
        example: {
          success: true,
          password: "q7#Rm]x2Lp_9vT!a",
          length: 16,
          parameters: { requested_length: 16, uppercase: true, lowercase: true, numbers: true, symbols: true },
          entropy_bits: 103.61,
        },
      },
    },
  },
  400: {
    description: "A parameter is invalid or no class is selected; for POST also a body that does not parse.",
    content: errorContent("length must be an integer from 8 to 128."),
  },
} satisfies Responses;

export const passwordPostResponses = {
  ...passwordResponses,
  413: { description: "The body is larger than 64 KiB.", content: errorContent("Request body is larger than 64 KiB.") },
} satisfies Responses;

export const passwordRequestBody = {
  required: false,
  content: {
    "application/x-www-form-urlencoded": { schema: asSchema(PasswordFormBody), example: { length: 24, symbols: "false" } },
    "multipart/form-data": { schema: asSchema(PasswordFormBody), example: { length: 24, exclude_similar: "true" } },
    "application/json": { schema: asSchema(PasswordJsonBody), example: { length: 24, symbols: false, exclude: "{}[]" } },
  },
} satisfies NonNullable<DocumentDecoration["requestBody"]>;
