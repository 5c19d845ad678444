// A fixture website on an ephemeral loopback port that records every request it receives.
import { afterEach } from "bun:test";

/** An HTML string (200, text/html), a Response (cloned per request), or a handler. */
export type Route = string | Response | ((req: Request) => Response | Promise<Response>);

export interface Site {
  /** "http://127.0.0.1:<port>", no trailing slash. */
  url: string;
  port: number;
  /** Every request as the server saw it: its absolute URL, whose host comes from the Host header. */
  requests: string[];
  stop(): Promise<void>;
}

/**
 * A `serve` for one test file: every site it starts is stopped after each test (call at top level).
 */
export function sitesStoppedAfterEach(): (routes: Record<string, Route>) => Promise<Site> {
  const sites: Site[] = [];
  afterEach(async () => {
    await Promise.all(sites.splice(0).map((site) => site.stop()));
  });
  return async (routes) => {
    const site = await serveSite(routes);
    sites.push(site);
    return site;
  };
}

/**
 * Serves `routes`, keyed by path with its query ("/a?b=1") or by path alone ("/a"; matches any
 * query); anything else answers 404.
 */
export async function serveSite(routes: Record<string, Route>): Promise<Site> {
  const requests: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      requests.push(req.url);
      const url = new URL(req.url);
      const route = routes[url.pathname + url.search] ?? routes[url.pathname];
      if (route === undefined) return new Response("not found", { status: 404 });
      if (typeof route === "string") return new Response(route, { headers: { "content-type": "text/html; charset=utf-8" } });
      return typeof route === "function" ? route(req) : (route.clone() as Response); // Bun types clone() as undici's Response
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    port: server.port!,
    requests,
    stop: () => server.stop(true),
  };
}
