// The route template a request path belongs to (`/api/jobs/:id`), for metric labels: a label
// never holds the path itself, which carries job ids and whatever a client typed.

/** The one label value of every path no route serves. */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * Builds a lookup from the app's route templates (Elysia's `app.routes[].path`). Static paths are
 * one Map lookup (the /api.php hot path); templates with `:params` are tried after, those with
 * fewer parameters first, so `/api/jobs/:id/sitemap.xml` wins over `/api/jobs/:id/:part`.
 * A trailing slash is ignored, as the app ignores it (strictPath: false).
 */
export function routeTemplates(templates: Iterable<string>): (path: string) => string {
  const exact = new Map<string, string>();
  const patterns: { segments: string[]; template: string; params: number }[] = [];
  for (const template of new Set(templates)) {
    if (!template.includes(":") && !template.includes("*")) {
      exact.set(trimSlash(template), template);
      continue;
    }
    const segments = template.split("/");
    patterns.push({ segments, template, params: segments.filter((s) => s.startsWith(":") || s === "*").length });
  }
  patterns.sort((a, b) => a.params - b.params);
  return (path) => {
    const trimmed = trimSlash(path);
    const found = exact.get(trimmed);
    if (found !== undefined) return found;
    if (patterns.length === 0) return UNMATCHED_ROUTE;
    const segments = trimmed.split("/");
    for (const pattern of patterns) {
      if (matches(pattern.segments, segments)) return pattern.template;
    }
    return UNMATCHED_ROUTE;
  };
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

function matches(pattern: string[], segments: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p === "*") return i < segments.length;
    if (i >= segments.length) return false;
    if (p.startsWith(":") ? segments[i] === "" : p !== segments[i]) return false;
  }
  return pattern.length === segments.length;
}
