// The pool: connections kept alive per (scheme, IP address and port, TLS options), each request
// started on an idle one or a new one.
//
// A connection is reused only when nothing arrived on it after its last response: the request is
// written once the event loop has polled its socket (Pool.afterPoll), so bytes a server sent past a
// response (a body longer than its Content-Length, a 204's body) end the connection instead of
// answering the next request. Bytes sent after the next request was written are its answer: HTTP/1.1
// cannot tell them apart. So a server seen sending bytes nobody asked for is not trusted with a
// kept-alive connection again (its key's connections close after each response, DISTRUSTED_KEYS
// remembered at most): late stray bytes then have no next request to be taken for.
import type { ClientAnswer } from "./answer.ts";
import { Connection, type ConnectionPool, Pending } from "./connection.ts";
import type { HttpClientOptions } from "./options.ts";
import { type ClientInit, type PreparedRequest, Requests, type Target } from "./request.ts";

/** Keys (scheme, address and port, TLS options) whose server sent stray bytes, remembered at most: they get no kept-alive connection. */
const DISTRUSTED_KEYS = 1024;

export class Pool implements ConnectionPool {
  opened = 0;
  idleCount = 0;
  private readonly idle = new Map<string, Connection[]>();
  private sweeper: Timer | null = null;
  private readonly requests = new Requests();
  /** Connections taken from the pool, waiting for a poll before their request is written. */
  private reserved: Connection[] = [];
  /** Keys whose server sent bytes nobody asked for: their connections are not kept (insertion order: oldest first). */
  private readonly distrusted = new Set<string>();
  private polling = false;

  constructor(readonly options: Required<HttpClientOptions>) {}

  send(input: string, init: ClientInit): Promise<ClientAnswer> {
    let prepared: PreparedRequest;
    try {
      prepared = this.requests.prepare(input, init);
    } catch (err) {
      return Promise.reject(err);
    }
    const signal = init.signal ?? null;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<ClientAnswer>((resolve, reject) => {
      const { target, head, isHead, reusable } = prepared;
      const pending = new Pending(target, head, isHead, init.decompress !== false, reusable, signal, resolve, reject);
      if (signal !== null) {
        pending.onAbort = () => {
          pending.onAbort = null;
          const reason = signal.reason;
          const connection = pending.connection;
          if (connection !== null) connection.abort(pending, reason);
          pending.fail(reason);
        };
        signal.addEventListener("abort", pending.onAbort);
      }
      this.dispatch(pending, true);
    });
  }

  /** Starts `pending` on an idle connection of its key, else on a new one. */
  dispatch(pending: Pending, mayReuse: boolean): void {
    const connection = (mayReuse && this.take(pending.target.key)) || this.connect(pending.target);
    connection.start(pending);
  }

  private connect(target: Target): Connection {
    this.opened++;
    return new Connection(this, target);
  }

  private take(key: string): Connection | undefined {
    const list = this.idle.get(key);
    if (list === undefined) return undefined;
    const connection = list.pop();
    if (list.length === 0) this.idle.delete(key);
    if (connection !== undefined) this.idleCount--;
    return connection;
  }

  /** A connection whose response ended cleanly: kept for its key, or closed when there are enough (or its server is distrusted). */
  release(connection: Connection): void {
    const key = connection.target.key;
    let list = this.idle.get(key);
    if (this.distrusted.has(key)) {
      connection.close();
      return;
    }
    if ((list !== undefined && list.length >= this.options.maxIdlePerKey) || this.idleCount >= this.options.maxIdle) {
      connection.close();
      return;
    }
    if (list === undefined) {
      list = [];
      this.idle.set(key, list);
    }
    connection.idleSince = performance.now();
    list.push(connection);
    this.idleCount++;
    if (this.sweeper === null) {
      this.sweeper = setInterval(() => this.sweep(), Math.max(100, this.options.idleTimeoutMs / 4));
      this.sweeper.unref();
    }
  }

  /**
   * Writes the request of each connection taken from the pool once the event loop has polled the
   * sockets since it was taken. Bytes already sent on an idle connection when it is reused may
   * still wait in the kernel, their data event not run yet (the caller reuses it in the very turn
   * the last response ended): written at once, the request would get them as its answer. Two
   * setImmediate hops put a poll in between (one runs before the next poll, one scheduled from it
   * after); the data event then finds the connection not Busy and closes it (onData). One pair of
   * hops serves every connection taken in the same turn.
   */
  afterPoll(connection: Connection): void {
    this.reserved.push(connection);
    if (this.polling) return;
    this.polling = true;
    setImmediate(this.startPoll);
  }

  private readonly startPoll = (): void => {
    const batch = this.reserved;
    this.reserved = [];
    this.polling = false;
    setImmediate(() => {
      for (const connection of batch) connection.afterPoll();
    });
  };

  /** The server behind `key` sent stray bytes: no connection of it is kept alive from now on. */
  distrust(key: string): void {
    if (this.distrusted.has(key)) return;
    if (this.distrusted.size >= DISTRUSTED_KEYS) this.distrusted.delete(this.distrusted.values().next().value!);
    this.distrusted.add(key);
    for (const connection of [...(this.idle.get(key) ?? [])]) connection.close();
  }

  /** An idle connection that closed or misbehaved. */
  forget(connection: Connection): void {
    const list = this.idle.get(connection.target.key);
    const at = list?.indexOf(connection) ?? -1;
    if (at < 0) return;
    list!.splice(at, 1);
    if (list!.length === 0) this.idle.delete(connection.target.key);
    this.idleCount--;
  }

  private sweep(): void {
    const before = performance.now() - this.options.idleTimeoutMs;
    for (const list of [...this.idle.values()]) {
      // Oldest first: the list is a stack.
      while (list.length > 0 && list[0]!.idleSince <= before) {
        const oldest = list[0]!;
        oldest.close();
        if (list[0] === oldest) list.shift();
      }
    }
    if (this.idleCount === 0 && this.sweeper !== null) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  closeIdle(): void {
    for (const list of [...this.idle.values()]) {
      while (list.length > 0) {
        const oldest = list[0]!;
        oldest.close();
        if (list[0] === oldest) list.shift();
      }
    }
  }
}
