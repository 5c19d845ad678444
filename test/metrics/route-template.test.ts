import { expect, test } from "bun:test";
import { routeTemplates, UNMATCHED_ROUTE } from "../../src/metrics/route-template.ts";

const routeOf = routeTemplates([
  "/api.php",
  "/healthz",
  "/api/jobs",
  "/api/jobs/:id",
  "/api/jobs/:id/:part",
  "/api/jobs/:id/sitemap.xml",
  "/swagger/assets/:name",
]);

test("static paths, trailing slash ignored", () => {
  expect(routeOf("/api.php")).toBe("/api.php");
  expect(routeOf("/healthz/")).toBe("/healthz");
  expect(routeOf("/api/jobs")).toBe("/api/jobs");
});

test("parameters give their template, the static segment winning over a parameter", () => {
  expect(routeOf("/api/jobs/q7Yc0JxkS1uQm3n2V5rT8w")).toBe("/api/jobs/:id");
  expect(routeOf("/api/jobs/abc/sitemap.xml")).toBe("/api/jobs/:id/sitemap.xml");
  expect(routeOf("/api/jobs/abc/sitemap-2.xml")).toBe("/api/jobs/:id/:part");
  expect(routeOf("/swagger/assets/constructor")).toBe("/swagger/assets/:name");
});

test("anything else is one fixed value, never the path", () => {
  for (const path of ["/", "/nope", "/api/jobs/a/b/c", "/api/jobs//", "/api.php/x", "/constructor", "/__proto__"]) {
    expect(routeOf(path)).toBe(UNMATCHED_ROUTE);
  }
});
