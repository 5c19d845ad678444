// GET /api/jobs/<id>/events: Server-Sent Events (WHATWG HTML "server-sent events"). While the job
// runs, a `progress` event carries the job at least every 2 s; then one `done` event carries the
// final job and the stream ends. The job is read from the store each time, so the stream shows a
// job that runs on another instance as well as one that runs here.
import type { Job } from "./model.ts";

export interface EventSourceDeps {
  /** The job now, or null when it was deleted meanwhile. */
  load: () => Promise<Job | null>;
  isFinished: (job: Job) => boolean;
  pollMs: number;
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
      let current: Job | null = deps.first;
      // No reconnection after `done`: a client that reconnects anyway gets `done` again at once.
      send("retry: 2000\n\n");
      while (!closed) {
        if (current === null) {
          send(sseEvent("done", { ...job, status: "cancelled" }));
          return finish();
        }
        if (deps.isFinished(current)) {
          send(sseEvent("done", current));
          return finish();
        }
        send(sseEvent("progress", current));
        await Bun.sleep(deps.pollMs);
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
