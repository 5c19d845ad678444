// Schemas that document the password endpoint in the OpenAPI spec. Elysia validates none of
// them: the handler parses every field itself and answers with the contract's error texts.

import { t, type DocumentDecoration } from "elysia";
import { asSchema, jsonInteger, type Responses } from "../http/openapi.ts";
import { MAX_COUNT, MAX_EXCLUDE, MAX_LENGTH, MAX_SEPARATOR, MAX_SYMBOL_SET, MAX_WORDS, MIN_LENGTH, MIN_WORDS } from "./params.ts";

/**
 * The text booleans the server accepts: true, false, 1, 0 in any case. A case-insensitive
 * pattern spelled with character classes, because JSON Schema patterns (ECMA-262) have no
 * portable inline flag; test/password/routes.test.ts checks it against the parser on every spelling.
 */
export const BOOLEAN_TEXT_PATTERN = "^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|1|0)$";
/** symbol_set: the 32 ASCII punctuation characters, 1 to 32 of them (distinct: not expressible here). */
export const SYMBOL_SET_PATTERN = "^[!-/:-@\\[-`{-~]{1,32}$";
/** separator: 0 to 3 printable ASCII characters (space to tilde). */
export const SEPARATOR_PATTERN = "^[ -~]{0,3}$";

const booleanText = (description: string, byDefault: "true" | "false") =>
  t.Optional(
    t.String({
      description: `${description} One of true, false, 1, 0 (any case). Default ${byDefault}.`,
      pattern: BOOLEAN_TEXT_PATTERN,
      default: byDefault,
    }),
  );

const minimumText = (name: string, chars: string) =>
  t.Optional(
    jsonInteger({
      description: `At least this many ${chars}: 1 to length (at most ${MAX_LENGTH}); ${name} must be on, and all minimums together at most length. Default 1 when ${name} is on.`,
      minimum: 1,
      maximum: MAX_LENGTH,
    }),
  );

const textFields = {
  length: t.Optional(
    jsonInteger({ description: `Password length: ${MIN_LENGTH} to ${MAX_LENGTH}.`, minimum: MIN_LENGTH, maximum: MAX_LENGTH, default: 16 }),
  ),
  uppercase: booleanText("Use A-Z.", "true"),
  lowercase: booleanText("Use a-z.", "true"),
  numbers: booleanText("Use 0-9.", "true"),
  symbols: booleanText("Use the 28 symbols !#$%&()*+,-./:;<=>?@[]^_{|}~ (or symbol_set).", "true"),
  exclude_similar: booleanText("Remove the look-alikes 0 O 1 l I |.", "false"),
  exclude: t.Optional(
    t.String({ description: `Characters to remove: at most ${MAX_EXCLUDE}.`, maxLength: MAX_EXCLUDE, examples: ["{}[]"] }),
  ),
  min_uppercase: minimumText("uppercase", "A-Z"),
  min_lowercase: minimumText("lowercase", "a-z"),
  min_numbers: minimumText("numbers", "0-9"),
  min_symbols: minimumText("symbols", "symbols"),
  symbol_set: t.Optional(
    t.String({
      description: `The symbols to use instead of the 28 default ones: 1 to ${MAX_SYMBOL_SET} distinct ASCII punctuation characters (the four left out by default may be chosen). exclude still applies.`,
      minLength: 1,
      maxLength: MAX_SYMBOL_SET,
      pattern: SYMBOL_SET_PATTERN,
      examples: ["!@#$%^&*"],
    }),
  ),
  count: t.Optional(
    jsonInteger({
      description: `How many independent passwords (or passphrases): 1 to ${MAX_COUNT}. Above 1 the answer holds \`passwords\` in place of \`password\`.`,
      minimum: 1,
      maximum: MAX_COUNT,
      default: 1,
    }),
  ),
  type: t.Optional(
    t.String({
      description:
        "password, or passphrase: words from the EFF large word list (7,776 words). Length and class parameters do not apply to a passphrase.",
      enum: ["password", "passphrase"],
      default: "password",
    }),
  ),
  words: t.Optional(
    jsonInteger({ description: `Passphrase words: ${MIN_WORDS} to ${MAX_WORDS}.`, minimum: MIN_WORDS, maximum: MAX_WORDS, default: 6 }),
  ),
  separator: t.Optional(
    t.String({
      description: `Between passphrase words: 0 to ${MAX_SEPARATOR} printable ASCII characters.`,
      maxLength: MAX_SEPARATOR,
      pattern: SEPARATOR_PATTERN,
      default: "-",
    }),
  ),
  capitalize: booleanText("Passphrase: first letter of every word upper-case.", "false"),
  include_number: booleanText("Passphrase: one random digit appended to one random word.", "false"),
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
    t.Union([t.Boolean(), t.Literal(1), t.Literal(0), t.String({ pattern: BOOLEAN_TEXT_PATTERN })], {
      description: `${description} JSON true/false, 1/0, or the text true, false, 1, 0 (any case).`,
    }),
  );

const jsonIntegerField = (description: string, minimum: number, maximum: number, example?: number) =>
  t.Optional(
    t.Union([integer({ minimum, maximum }), t.String({ pattern: "^[0-9]+$" })], {
      description: `${description} An integer from ${minimum} to ${maximum}, as a JSON number or decimal digits.`,
      ...(example === undefined ? {} : { examples: [example] }),
    }),
  );

export const PasswordJsonBody = t.Object(
  {
    length: jsonIntegerField("Password length. Default 16.", MIN_LENGTH, MAX_LENGTH, 24),
    uppercase: jsonBoolean("Use A-Z. Default true."),
    lowercase: jsonBoolean("Use a-z. Default true."),
    numbers: jsonBoolean("Use 0-9. Default true."),
    symbols: jsonBoolean("Use the 28 symbols (or symbol_set). Default true."),
    exclude_similar: jsonBoolean("Remove the look-alikes 0 O 1 l I |. Default false."),
    exclude: t.Optional(t.String({ description: `Characters to remove, at most ${MAX_EXCLUDE}.`, examples: ["{}[]"] })),
    min_uppercase: jsonIntegerField("At least this many A-Z, up to length. Default 1 when uppercase is on.", 1, MAX_LENGTH),
    min_lowercase: jsonIntegerField("At least this many a-z, up to length. Default 1 when lowercase is on.", 1, MAX_LENGTH),
    min_numbers: jsonIntegerField("At least this many 0-9, up to length. Default 1 when numbers is on.", 1, MAX_LENGTH),
    min_symbols: jsonIntegerField("At least this many symbols, up to length. Default 1 when symbols is on.", 1, MAX_LENGTH),
    symbol_set: textFields.symbol_set,
    count: jsonIntegerField("How many independent passwords. Default 1.", 1, MAX_COUNT),
    type: textFields.type,
    words: jsonIntegerField("Passphrase words. Default 6.", MIN_WORDS, MAX_WORDS),
    separator: textFields.separator,
    capitalize: jsonBoolean("Passphrase: first letter of every word upper-case. Default false."),
    include_number: jsonBoolean("Passphrase: one random digit appended to one random word. Default false."),
  },
  { description: "Password options as a JSON object; body fields win over the query string." },
);

const sentOnly = "Only when sent.";

const PasswordParametersModel = t.Object(
  {
    requested_length: integer(),
    uppercase: t.Boolean(),
    lowercase: t.Boolean(),
    numbers: t.Boolean(),
    symbols: t.Boolean(),
    exclude_similar: t.Optional(t.Boolean({ description: sentOnly })),
    exclude: t.Optional(t.String({ description: sentOnly })),
    min_uppercase: t.Optional(integer({ description: sentOnly, minimum: 1, maximum: MAX_LENGTH })),
    min_lowercase: t.Optional(integer({ description: sentOnly, minimum: 1, maximum: MAX_LENGTH })),
    min_numbers: t.Optional(integer({ description: sentOnly, minimum: 1, maximum: MAX_LENGTH })),
    min_symbols: t.Optional(integer({ description: sentOnly, minimum: 1, maximum: MAX_LENGTH })),
    symbol_set: t.Optional(t.String({ description: sentOnly })),
    count: t.Optional(integer({ description: sentOnly, minimum: 1, maximum: MAX_COUNT })),
    type: t.Optional(t.Literal("password", { description: sentOnly })),
  },
  { description: "The settings used." },
);

const PassphraseParametersModel = t.Object(
  {
    type: t.Literal("passphrase"),
    words: integer({ minimum: MIN_WORDS, maximum: MAX_WORDS }),
    separator: t.String(),
    capitalize: t.Boolean(),
    include_number: t.Boolean(),
    count: t.Optional(integer({ description: sentOnly, minimum: 1, maximum: MAX_COUNT })),
  },
  { description: "The settings used." },
);

const entropyBits = (description: string) => t.Number({ description });
const passwordEntropy = entropyBits(
  "log2 of the number of passwords the request could produce (each selected class at least its minimum), 2 decimals.",
);
const passphraseEntropy = entropyBits("words x log2(7776), plus log2(10 x words) with include_number; 2 decimals.");

export const PasswordSuccessModel = t.Union([
  t.Object(
    {
      success: t.Literal(true),
      password: t.String({ description: "The generated password." }),
      length: integer({ description: "Length of the password." }),
      parameters: PasswordParametersModel,
      entropy_bits: passwordEntropy,
    },
    { title: "Password" },
  ),
  t.Object(
    {
      success: t.Literal(true),
      passwords: t.Array(t.String(), { description: "count independent passwords.", minItems: 2, maxItems: MAX_COUNT }),
      length: integer({ description: "Length of each password." }),
      parameters: PasswordParametersModel,
      entropy_bits: passwordEntropy,
    },
    { title: "Passwords (count above 1)" },
  ),
  t.Object(
    {
      success: t.Literal(true),
      password: t.String({ description: "The passphrase." }),
      length: integer({ description: "Characters of the passphrase." }),
      parameters: PassphraseParametersModel,
      entropy_bits: passphraseEntropy,
    },
    { title: "Passphrase" },
  ),
  t.Object(
    {
      success: t.Literal(true),
      passwords: t.Array(t.String(), { description: "count independent passphrases.", minItems: 2, maxItems: MAX_COUNT }),
      lengths: t.Array(integer(), { description: "Characters of each passphrase, in the order of passwords." }),
      parameters: PassphraseParametersModel,
      entropy_bits: passphraseEntropy,
    },
    { title: "Passphrases (count above 1)" },
  ),
]);

export const PasswordErrorModel = t.Object({
  success: t.Literal(false),
  error: t.String({ description: "What is wrong with the request." }),
});

const errorContent = (example: string) => ({
  "application/json": { schema: asSchema(PasswordErrorModel), example: { success: false, error: example } },
});

const DEFAULT_PARAMETERS = { requested_length: 16, uppercase: true, lowercase: true, numbers: true, symbols: true };

export const passwordResponses = {
  200: {
    description: "The generated password, passwords (count above 1), or passphrase.",
    content: {
      "application/json": {
        schema: asSchema(PasswordSuccessModel),
        examples: {
          password: {
            summary: "No parameters",
            value: { success: true, password: "q7#Rm]x2Lp_9vT!a", length: 16, parameters: DEFAULT_PARAMETERS, entropy_bits: 103.61 },
          },
          minimums: {
            summary: "min_symbols=4&min_numbers=3&count=2",
            value: {
              success: true,
              passwords: ["Kq~2#%e&/0C;7V^Z", "~5=wuQo%Dc2ld8Y~"],
              length: 16,
              parameters: { ...DEFAULT_PARAMETERS, min_numbers: 3, min_symbols: 4, count: 2 },
              entropy_bits: 101.35,
            },
          },
          passphrase: {
            summary: "type=passphrase",
            value: {
              success: true,
              password: "regular-pamperer-trickster-atop-griminess-mocha",
              length: 47,
              parameters: { type: "passphrase", words: 6, separator: "-", capitalize: false, include_number: false },
              entropy_bits: 77.55,
            },
          },
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
    "application/json": { schema: asSchema(PasswordJsonBody), example: { length: 24, symbols: false, exclude: "{}[]", min_numbers: 3 } },
  },
} satisfies NonNullable<DocumentDecoration["requestBody"]>;
