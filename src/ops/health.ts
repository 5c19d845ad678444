import { Elysia, t } from "elysia";
import { OPEN_ENDPOINT } from "../http/openapi.ts";

const Health = t.Object({ status: t.String({ examples: ["ok"] }) });

/** Liveness (the process serves) and readiness (the database answers). */
export const healthRoutes = (isReady: () => Promise<boolean>) =>
  new Elysia({ name: "health" })
    .get("/healthz", () => ({ status: "ok" }), {
      detail: {
        ...OPEN_ENDPOINT,
        tags: ["operations"],
        summary: "Liveness",
        description: "200 while the process serves requests.",
        responses: { 200: { description: "Serving", content: { "application/json": { schema: Health, example: { status: "ok" } } } } },
      },
    })
    .get("/readyz", async ({ status }) => ((await isReady()) ? { status: "ok" } : status(503, { status: "database unavailable" })), {
      detail: {
        ...OPEN_ENDPOINT,
        tags: ["operations"],
        summary: "Readiness",
        description:
          "200 when the database takes writes (one is made and rolled back), 503 otherwise: read-only, full, corrupted, locked past the wait, or unreachable.",
        responses: {
          200: { description: "Ready", content: { "application/json": { schema: Health, example: { status: "ok" } } } },
          503: {
            description: "Database unavailable",
            content: { "application/json": { schema: Health, example: { status: "database unavailable" } } },
          },
        },
      },
    });
