// Writing to a streamed HTTP response with backpressure, and noticing when the client went away.
import type { Response } from 'express';

/**
 * Writes `chunk` and resolves once it has been handed to the socket (or the connection is gone). Waiting for the
 * write callback both applies backpressure and guarantees that a later `destroy()` (mid-stream failure) does not
 * discard bytes that were still corked.
 */
export async function writeChunk(res: Response, chunk: string | Buffer): Promise<void> {
  if (res.destroyed || res.writableEnded) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('close', done);
      resolve();
    };
    res.on('close', done);
    res.write(chunk, () => done());
  });
}

/** Calls `onGone` once if the connection closes before the response was completely sent. */
export function onClientGone(res: Response, onGone: () => void): void {
  res.on('close', () => {
    if (!res.writableFinished) onGone();
  });
}
