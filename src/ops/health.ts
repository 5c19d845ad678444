import { Elysia, t } from "elysia";

const Health = t.Object({ status: t.String({ examples: ["ok"] }) });

/** Liveness (the process serves) and readiness (the database answers). */
export const healthRoutes = (isReady: () => boolean) =>
  new Elysia({ name: "health" })
    .get("/healthz", () => ({ status: "ok" }), {
      detail: {
        tags: ["operations"],
        summary: "Liveness",
        description: "200 while the process serves requests.",
        responses: { 200: { description: "Serving", content: { "application/json": { schema: Health } } } },
      },
    })
    .get(
      "/readyz",
      ({ status }) => (isReady() ? { status: "ok" } : status(503, { status: "database unavailable" })),
      {
        detail: {
          tags: ["operations"],
          summary: "Readiness",
          description: "200 when the database is usable, 503 otherwise.",
          responses: {
            200: { description: "Ready", content: { "application/json": { schema: Health } } },
            503: { description: "Database unavailable", content: { "application/json": { schema: Health } } },
          },
        },
      },
    );
