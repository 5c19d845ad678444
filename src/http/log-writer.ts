// Request log lines are gathered and written once per event-loop turn: under load one write
// call then carries many lines instead of a system call per request.

export interface LogWriter {
  write(line: string): void;
  /** Writes what is pending now (at shutdown). */
  flush(): void;
}

export function batchedWriter(write: (chunk: string) => void): LogWriter {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const chunk = pending.join("");
    pending = [];
    write(chunk);
  };
  return {
    write(line) {
      pending.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}
