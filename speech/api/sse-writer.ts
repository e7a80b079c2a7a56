// A Server-Sent Events writer: `event:`/`data:` frames and a `: keepalive` comment whenever the stream is idle.
import type { Response } from 'express';
import { writeChunk } from './response-stream.js';

export interface SseWriter {
  /** Sends one event whose data is `payload` as one line of JSON. */
  send(event: string, payload: unknown): Promise<void>;
  /** Stops the keepalive timer and ends the response. Idempotent. */
  end(): void;
}

/** Sends the SSE headers now (plus `extraHeaders`) and starts the keepalive timer. */
export function openSse(res: Response, keepaliveMs: number, extraHeaders: Readonly<Record<string, string>>): SseWriter {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no');
  for (const [name, value] of Object.entries(extraHeaders)) res.setHeader(name, value);
  res.flushHeaders();
  let idle = true;
  const timer = setInterval(() => {
    if (idle) void writeChunk(res, ': keepalive\n\n');
    idle = true;
  }, keepaliveMs);
  timer.unref();
  let ended = false;
  return {
    async send(event, payload) {
      idle = false;
      // JSON.stringify never emits a raw newline, so one data line is always enough.
      await writeChunk(res, `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`);
    },
    end() {
      if (ended) return;
      ended = true;
      clearInterval(timer);
      if (!res.writableEnded) res.end();
    },
  };
}
