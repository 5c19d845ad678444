// Checks a response against the OpenAPI document it came with: the status must be documented for
// the operation, and a JSON body must match the schema declared for that status (ajv).
import Ajv, { type ValidateFunction } from "ajv";
import { expect } from "bun:test";

type Document = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: object }> }> }>> };

export function contract(document: Document) {
  // The document's schemas carry OpenAPI's `example`, and formats (date-time) that ajv needs a
  // plugin for: both are annotations here, not checks.
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  const compiled = new Map<string, ValidateFunction>();

  return {
    /** `template` is the document's path (`/api/jobs/{id}`); `body` the parsed JSON or the text. */
    check(method: string, template: string, response: Response, body: unknown) {
      const operation = document.paths[template]?.[method.toLowerCase()];
      expect(operation, `${method} ${template} is in the document`).toBeDefined();
      const documented = operation!.responses[String(response.status)];
      expect({ method, template, status: response.status, documented: documented !== undefined }).toEqual({
        method,
        template,
        status: response.status,
        documented: true,
      });
      const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
      const content = documented!.content?.[type];
      expect({ status: response.status, type, declared: content !== undefined }).toEqual({ status: response.status, type, declared: true });
      const key = `${method} ${template} ${response.status} ${type}`;
      let validate = compiled.get(key);
      if (!validate) {
        validate = ajv.compile(content!.schema ?? {});
        compiled.set(key, validate);
      }
      const valid = validate(body);
      expect({ key, errors: valid ? null : validate.errors }).toEqual({ key, errors: null });
    },
  };
}
