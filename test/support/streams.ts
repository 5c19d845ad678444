// A body stream for tests of readers: it yields `chunks` one pull at a time and records how many
// were pulled and whether the reader cancelled it.
export function chunkStream(chunks: string[]): { stream: ReadableStream<Uint8Array>; state: { pulled: number; cancelled: boolean } } {
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[state.pulled++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(new TextEncoder().encode(chunk));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}
