// A fixture website on an ephemeral loopback port that records every request it receives.

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
