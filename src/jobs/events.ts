// GET /api/jobs/<id>/events: Server-Sent Events (WHATWG HTML "server-sent events"). While the job
// runs, a `progress` event carries the job at least every 2 s; then one `done` event carries the
// final job and the stream ends. The job is read from the store each time, so the stream shows a
// job that runs on another instance as well as one that runs here.
import type { Job } from "./model.ts";

/**
 * A cancelled job is final: its runner publishes what it found within moments (the result or the
 * 409 error), and the stream waits that long for it, looking every CANCEL_POLL_MS, then sends
 * `done` with the job as it is. Every open stream of the job ends so, whichever instance cancelled it.
 */
export const CANCEL_GRACE_MS = 1_200;
const CANCEL_POLL_MS = 200;

export interface EventSourceDeps {
  /** The job now, or null when it was deleted meanwhile. */
  load: () => Promise<Job | null>;
  /** The job has its outcome (a result or an error). */
  isFinished: (job: Job) => boolean;
  pollMs: number;
  /** Milliseconds now (tests may pass a clock). */
  now?: () => number;
  signal: AbortSignal;
  /** The job as the request found it. */
  first: Job;
}

/** One event: each line of the JSON is its own `data:` line (JSON.stringify makes one). */
export function sseEvent(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function jobEvents(job: Job, deps: EventSourceDeps): Response {
  const encoder = new TextEncoder();
  let closed = false;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (text: string) => {
        if (!closed) controller.enqueue(encoder.encode(text));
      };
      const finish = () => {
        if (closed) return;
        closed = true;
        controller.close();
      };
      deps.signal.addEventListener("abort", finish, { once: true });
      const now = deps.now ?? Date.now;
      let current: Job | null = deps.first;
      /** When the job was cancelled, as far as this stream can tell. */
      let cancelledAt: number | null = null;
      // No reconnection after `done`: a client that reconnects anyway gets `done` again at once.
      send("retry: 2000\n\n");
      while (!closed) {
        if (current === null) {
          send(sseEvent("done", { ...job, status: "cancelled" }));
          return finish();
        }
        if (current.status === "cancelled" && cancelledAt === null) {
          // From the DELETE (finished_at), unless another instance's clock puts that in the future.
          const at = Date.parse(current.finished_at ?? "");
          cancelledAt = Number.isFinite(at) ? Math.min(now(), at) : now();
        }
        if (deps.isFinished(current) || (cancelledAt !== null && now() - cancelledAt >= CANCEL_GRACE_MS)) {
          send(sseEvent("done", current));
          return finish();
        }
        // While a cancelled job's outcome is on its way, no more `progress`: look again shortly.
        if (cancelledAt === null) send(sseEvent("progress", current));
        await Bun.sleep(cancelledAt === null ? deps.pollMs : CANCEL_POLL_MS);
        if (closed) return;
        try {
          current = await deps.load();
        } catch {
          // The store is busy or unreachable: say so as a comment and try again.
          send(": store unavailable, retrying\n\n");
        }
      }
    },
    cancel() {
      closed = true;
    },
  });
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      // Proxies such as nginx must pass events on as they come.
      "x-accel-buffering": "no",
    },
  });
}
