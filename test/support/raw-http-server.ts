// Raw HTTP/1.1 servers for the HTTP client's tests: Bun.listen on a 127.0.0.1 ephemeral port,
// parsing request heads and letting each test write byte for byte what it needs, well-behaved or
// hostile. stopRawServers() (in afterEach) stops every server started since.
import type { Socket } from "bun";

export interface RawRequest {
  method: string;
  target: string;
  version: string;
  /** Header lines as sent, in order. */
  lines: string[];
  /** Lower-cased names. */
  headers: Record<string, string>;
}

export interface RawConnection {
  id: number;
  socket: Socket<RawConnection>;
  requests: RawRequest[];
  closed: boolean;
  buffer: string;
  queue: Uint8Array[];
  drained: (() => void)[];
}

export type Responder = (req: RawRequest, conn: RawConnection) => void | Promise<void>;

export interface RawServer {
  url: string;
  port: number;
  connections: RawConnection[];
  requests(): RawRequest[];
  stop(): void;
}

const running: RawServer[] = [];

/** Stops the servers started since the last call, closing their connections. */
export function stopRawServers(): void {
  for (const server of running.splice(0)) server.stop();
}

/** A TCP server that parses request heads and lets `respond` write whatever it wants. */
export function rawServer(respond: Responder): RawServer {
  const connections: RawConnection[] = [];
  const listener = Bun.listen<RawConnection>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(socket) {
        const conn: RawConnection = { id: connections.length, socket, requests: [], closed: false, buffer: "", queue: [], drained: [] };
        socket.data = conn;
        connections.push(conn);
      },
      data(socket, chunk) {
        const conn = socket.data;
        conn.buffer += Buffer.from(chunk).toString("latin1");
        for (let end = conn.buffer.indexOf("\r\n\r\n"); end >= 0; end = conn.buffer.indexOf("\r\n\r\n")) {
          const head = conn.buffer.slice(0, end);
          conn.buffer = conn.buffer.slice(end + 4);
          const [requestLine, ...lines] = head.split("\r\n");
          const [method, target, version] = requestLine!.split(" ");
          const headers: Record<string, string> = {};
          for (const line of lines) headers[line.slice(0, line.indexOf(":")).toLowerCase()] = line.slice(line.indexOf(":") + 1).trim();
          const req = { method: method!, target: target!, version: version!, lines, headers };
          conn.requests.push(req);
          void respond(req, conn);
        }
      },
      drain(socket) {
        flush(socket.data);
      },
      close(socket) {
        socket.data.closed = true;
      },
    },
  });
  const server: RawServer = {
    url: `http://127.0.0.1:${listener.port}`,
    port: listener.port,
    connections,
    requests: () => connections.flatMap((c) => c.requests),
    stop: () => listener.stop(true),
  };
  running.push(server);
  return server;
}

/** Writes bytes in order, waiting for the socket to drain; resolves once all are handed to the kernel. */
export function send(conn: RawConnection, data: string | Uint8Array): Promise<void> {
  conn.queue.push(typeof data === "string" ? Buffer.from(data, "latin1") : data);
  const done = new Promise<void>((resolve) => conn.drained.push(resolve));
  flush(conn);
  return done;
}

function flush(conn: RawConnection): void {
  while (conn.queue.length > 0) {
    if (conn.closed) {
      conn.queue.length = 0;
      break;
    }
    const head = conn.queue[0]!;
    const written = conn.socket.write(head);
    if (written < head.byteLength) {
      conn.queue[0] = head.subarray(Math.max(0, written));
      return;
    }
    conn.queue.shift();
  }
  for (const resolve of conn.drained.splice(0)) resolve();
}
