// A crawl's request (createRequester) over the crawl's own network (createCrawlNetwork: the address
// guard, politeness, the HTTP client) against a loopback server that holds its answers: how it ends
// when the crawl stops or its time limit runs out at each place it can wait (the server, a polite
// host's turn, the address lookup), and what becomes of an answer that comes after the abort.
import { afterEach, describe, expect, test } from "bun:test";
import { settlesOnAbort } from "../../../src/crawler/net/abort.ts";
import type { Resolver } from "../../../src/crawler/net/address-guard.ts";
import type { Answer } from "../../../src/crawler/net/answer.ts";
import { readCapped } from "../../../src/crawler/net/body.ts";
import { createCrawlNetwork } from "../../../src/crawler/net/crawl-fetch.ts";
import { CrawlStopped, createRequester, type HopFetcher, RequestTimedOut } from "../../../src/crawler/net/request.ts";
import { waitFor, within } from "../../support/wait.ts";

/** Timers may fire a little early or late (ms). */
const JITTER_MS = 5;

interface HeldRequest {
  path: string;
  at: number;
  /** The client went away before an answer (the connection closed). */
  gone: boolean;
  answer: (body: string) => void;
}

/** A loopback server that answers each request only when the test says so. */
function holdingServer() {
  const held: HeldRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    reusePort: false,
    fetch(req) {
      return new Promise<Response>((resolve) => {
        const entry: HeldRequest = {
          path: new URL(req.url).pathname,
          at: performance.now(),
          gone: false,
          answer: (body) => resolve(new Response(body, { headers: { "content-type": "text/plain" } })),
        };
        req.signal.addEventListener("abort", () => {
          entry.gone = true;
          resolve(new Response("gone"));
        });
        held.push(entry);
      });
    },
  });
  return { held, url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

const servers: { stop: () => void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop();
});
const serve = () => {
  const server = holdingServer();
  servers.push(server);
  return server;
};

const network = (hostConcurrency: number, resolve?: Resolver) =>
  createCrawlNetwork({ policy: { allowPrivate: true, allowTargets: [] }, politeness: { hostConcurrency, hostDelayMs: 0 }, resolve });
const connection = (hostConcurrency: number, resolve?: Resolver) =>
  network(hostConcurrency, resolve).open({ maxConcurrency: hostConcurrency });

/** The answer's body as text, read as the crawl reads a page (capped, under the request's signal). */
const text = async (res: Answer, signal: AbortSignal) => new TextDecoder().decode((await readCapped(res, 1 << 20, signal)).bytes);

/** The promise's rejection, or a failure if it settles otherwise within `ms`. */
async function rejection(promise: Promise<unknown>, ms: number, what: string): Promise<unknown> {
  return within(
    promise.then(
      (value) => new Error(`${what}: settled with ${JSON.stringify(value)}`),
      (error: unknown) => ({ error }),
    ),
    ms,
    what,
  ).then((outcome) => {
    if (outcome instanceof Error) throw outcome;
    return outcome.error;
  });
}

describe("a request over the crawl's network", () => {
  test("the crawl stopped while the server holds the answer: CrawlStopped, and the connection is closed", async () => {
    const site = serve();
    const stop = new AbortController();
    const request = createRequester(connection(2).fetch, {}, 60_000, stop.signal);
    const pending = request(`${site.url}/held`, text);
    await waitFor(() => site.held.length === 1, 5_000, "the request at the server");
    const reason = new CrawlStopped("aborted");
    stop.abort(reason);
    expect(await rejection(pending, 2_000, "the stopped request")).toBe(reason);
    await waitFor(() => site.held[0]!.gone, 5_000, "the server to see the connection closed");
  });

  test("its time limit runs out while the server holds the answer: RequestTimedOut, after the limit", async () => {
    const site = serve();
    const request = createRequester(connection(2).fetch, {}, 300, new AbortController().signal);
    const started = performance.now();
    const error = await rejection(request(`${site.url}/held`, text), 5_000, "the request past its limit");
    expect(error).toBeInstanceOf(RequestTimedOut);
    expect(performance.now() - started).toBeGreaterThanOrEqual(300 - JITTER_MS);
    await waitFor(() => site.held[0]!.gone, 5_000, "the server to see the connection closed");
  });

  for (const slot of ["the crawl's own slot", "the host's slot, held by another crawl"]) {
    test(`the crawl stopped while a request waits for ${slot}: CrawlStopped, and it never reaches the server`, async () => {
      const site = serve();
      const net = network(1);
      const holder = net.open({ maxConcurrency: 1 });
      const waiter = slot.startsWith("the crawl's") ? holder : net.open({ maxConcurrency: 1 });
      const holderStop = new AbortController();
      const first = createRequester(holder.fetch, {}, 60_000, holderStop.signal)(`${site.url}/first`, text);
      await waitFor(() => site.held.length === 1, 5_000, "the first request at the server");
      const stop = new AbortController();
      const second = createRequester(waiter.fetch, {}, 60_000, stop.signal)(`${site.url}/second`, text);
      await Bun.sleep(50);
      const reason = new CrawlStopped("aborted");
      stop.abort(reason);
      expect(await rejection(second, 2_000, "the waiting request")).toBe(reason);
      site.held[0]!.answer("first");
      expect(await first).toBe("first");
      expect(site.held.map((h) => h.path)).toEqual(["/first"]);
    });
  }

  test("its time limit stands still while it waits its turn at the host, and runs whole once it goes", async () => {
    const site = serve();
    const net = connection(1);
    const never = new AbortController().signal;
    // The first request has all the time it needs; the second 400 ms.
    const first = createRequester(net.fetch, {}, 60_000, never)(`${site.url}/first`, text);
    const request = createRequester(net.fetch, {}, 400, never);
    await waitFor(() => site.held.length === 1, 5_000, "the first request at the server");
    const queued = performance.now();
    const second = request(`${site.url}/second`, text);
    // The second waits 600 ms for the host's one slot, longer than its 400 ms limit.
    await Bun.sleep(600);
    site.held[0]!.answer("first");
    expect(await first).toBe("first");
    await waitFor(() => site.held.length === 2, 5_000, "the second request at the server");
    const sent = site.held[1]!.at;
    const error = await rejection(second, 5_000, "the second request past its limit");
    expect(error).toBeInstanceOf(RequestTimedOut);
    expect(sent - queued).toBeGreaterThanOrEqual(600 - JITTER_MS);
    expect(performance.now() - sent).toBeGreaterThanOrEqual(400 - JITTER_MS);
  });

  test("the crawl stopped while the address is looked up: CrawlStopped, and nothing is sent", async () => {
    const site = serve();
    let lookups = 0;
    const neverAnswers: Resolver = () => {
      lookups++;
      return new Promise(() => {});
    };
    const stop = new AbortController();
    const request = createRequester(connection(2, neverAnswers).fetch, {}, 60_000, stop.signal);
    const pending = request(`http://site.test:${new URL(site.url).port}/`, text);
    await waitFor(() => lookups === 1, 5_000, "the lookup");
    const reason = new CrawlStopped("aborted");
    stop.abort(reason);
    expect(await rejection(pending, 2_000, "the request whose lookup never ends")).toBe(reason);
    expect(site.held).toEqual([]);
  });
});

describe("a fetcher's answer after the abort", () => {
  /** A fetcher that answers only when told, ignoring its signal; its answers' bodies say whether they were cancelled. */
  function lateFetcher() {
    const cancelled: string[] = [];
    let answer: (() => void) | undefined;
    const fetch: HopFetcher<Response> = (url) =>
      new Promise<Response>((resolve) => {
        answer = () =>
          resolve(
            new Response(
              new ReadableStream({
                cancel: () => {
                  cancelled.push(url.pathname);
                },
              }),
            ),
          );
      });
    return { fetch, cancelled, answer: () => answer!() };
  }

  for (const marked of [false, true]) {
    test(`is dropped and the abort's reason thrown (a fetcher ${marked ? "marked as settling on its signal" : "that ignores its signal"})`, async () => {
      const late = lateFetcher();
      const stop = new AbortController();
      let used = false;
      const request = createRequester(marked ? settlesOnAbort(late.fetch) : late.fetch, {}, 60_000, stop.signal);
      const pending = request("http://127.0.0.1:1/late", async () => {
        used = true;
        return "used";
      });
      await Bun.sleep(0);
      const reason = new CrawlStopped("aborted");
      stop.abort(reason);
      late.answer();
      expect(await rejection(pending, 2_000, "the aborted request")).toBe(reason);
      expect(used).toBe(false);
      await waitFor(() => late.cancelled.length === 1, 2_000, "the late answer's body cancelled");
      expect(late.cancelled).toEqual(["/late"]);
    });
  }

  test("a fetcher that ignores its signal still ends at the time limit", async () => {
    const late = lateFetcher();
    const request = createRequester(late.fetch, {}, 150, new AbortController().signal);
    const started = performance.now();
    expect(await rejection(request("http://127.0.0.1:1/late", text), 2_000, "the request past its limit")).toBeInstanceOf(RequestTimedOut);
    expect(performance.now() - started).toBeGreaterThanOrEqual(150 - JITTER_MS);
  });
});
