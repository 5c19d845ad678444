// The Chrome DevTools Protocol over Bun's built-in WebSocket, in flat session mode: one socket to
// the browser, each target's messages tagged with its sessionId. Written here rather than taken
// from a library: puppeteer-core's maintainers do not support Bun, playwright-core cannot be
// bundled by `bun build --compile` (oven-sh/bun#18749) and chrome-remote-interface does not work
// under Bun (oven-sh/bun#9505); the protocol itself is JSON messages with ids, and its types come
// from the devtools-protocol package (types only, nothing at run time).
import type { ProtocolMapping } from "devtools-protocol/types/protocol-mapping.d.ts";

export type Commands = ProtocolMapping.Commands;
export type Events = ProtocolMapping.Events;

/** The browser answered a command with an error, or went away before answering. */
export class CdpError extends Error {
  override name = "CdpError";
}

type Listener = (params: unknown, sessionId: string | undefined) => void;

export class Cdp {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private closedWith: CdpError | null = null;
  private readonly closeHandlers = new Set<(error: CdpError) => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.onmessage = (event) => this.receive(String(event.data));
    socket.onclose = () => this.closed(new CdpError("the browser closed the DevTools connection"));
    socket.onerror = () => this.closed(new CdpError("the DevTools connection failed"));
  }

  static connect(url: string, timeoutMs = 10_000): Promise<Cdp> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      const timer = setTimeout(() => {
        socket.close();
        reject(new CdpError("the browser's DevTools endpoint did not answer"));
      }, timeoutMs);
      socket.onopen = () => {
        clearTimeout(timer);
        resolve(new Cdp(socket));
      };
      socket.onerror = () => {
        clearTimeout(timer);
        reject(new CdpError("cannot connect to the browser's DevTools endpoint"));
      };
    });
  }

  get isClosed(): boolean {
    return this.closedWith !== null;
  }

  send<M extends keyof Commands>(method: M, params?: Commands[M]["paramsType"][0], sessionId?: string): Promise<Commands[M]["returnType"]> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.socket.send(JSON.stringify({ id, method, params: params ?? {}, sessionId }));
    });
  }

  /** Listens to an event of every session; returns the removal. */
  on<E extends keyof Events>(event: E, listener: (params: Events[E][0], sessionId: string | undefined) => void): () => void {
    let set = this.listeners.get(event);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as Listener);
    return () => set.delete(listener as Listener);
  }

  onClose(handler: (error: CdpError) => void): () => void {
    this.closeHandlers.add(handler);
    return () => this.closeHandlers.delete(handler);
  }

  close(): void {
    this.socket.close();
    this.closed(new CdpError("closed"));
  }

  private receive(text: string): void {
    let message: { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: unknown; sessionId?: string };
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.id !== undefined) {
      const waiter = this.pending.get(message.id);
      if (waiter === undefined) return;
      this.pending.delete(message.id);
      if (message.error) waiter.reject(new CdpError(message.error.message));
      else waiter.resolve(message.result);
      return;
    }
    if (message.method === undefined) return;
    for (const listener of this.listeners.get(message.method) ?? []) {
      try {
        listener(message.params, message.sessionId);
      } catch {
        // A listener's failure is its own; the connection goes on.
      }
    }
  }

  private closed(error: CdpError): void {
    if (this.closedWith) return;
    this.closedWith = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
    for (const handler of this.closeHandlers) handler(error);
  }
}
