// Flushes a StatsStore to a statsd server over TCP (as gostats does) every interval; never blocks or fails a request.
import net from 'node:net';
import type { Logger } from '../logger.js';
import { createStatsFlusher } from './stats-flush.js';
import type { StatsStore } from './stats-store.js';

export interface StatsdSinkOptions {
  readonly host: string;
  readonly port: number;
  readonly flushIntervalMs: number;
  readonly logger: Logger;
  /** Reconnect backoff bounds; the delay doubles after each failed attempt. */
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

export interface StatsdSink {
  /** Builds the lines of one flush (counter deltas `|c`, gauges `|g`, timings `|ms`) and sends them if connected. */
  flush(): void;
  /** Flushes once more, then closes the connection and stops the timer. */
  stop(): Promise<void>;
}

// More than this many bytes waiting for a slow or absent server are dropped, not buffered.
const MAX_PENDING_BYTES = 1 << 20;

export function startStatsdSink(store: StatsStore, options: StatsdSinkOptions): StatsdSink {
  const minBackoffMs = options.minBackoffMs ?? 100;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;
  let socket: net.Socket | undefined;
  let connected = false;
  let stopped = false;
  let backoffMs = minBackoffMs;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let warned = false;

  const connect = (): void => {
    if (stopped) return;
    const s = net.connect({ host: options.host, port: options.port });
    socket = s;
    s.setNoDelay(false);
    s.on('connect', () => {
      connected = true;
      backoffMs = minBackoffMs;
      warned = false;
      options.logger.debug('connected to statsd', { host: options.host, port: options.port });
    });
    s.on('error', (err) => {
      if (!warned) {
        // One line per outage: a down statsd must not flood the log.
        options.logger.warn(`statsd sink: ${err.message}; dropping stats until it is back`);
        warned = true;
      }
    });
    s.on('close', () => {
      connected = false;
      socket = undefined;
      if (stopped) return;
      reconnectTimer = setTimeout(connect, backoffMs);
      reconnectTimer.unref();
      backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
    });
  };

  const takeFlush = createStatsFlusher(store);
  const render = (): string => {
    const { counters, gauges, timers } = takeFlush();
    let out = '';
    for (const [name, delta] of counters) out += `${name}:${delta}|c\n`;
    for (const [name, value] of gauges) out += `${name}:${value}|g\n`;
    for (const [name, list] of timers) for (const ms of list) out += `${name}:${Number(ms.toFixed(6))}|ms\n`;
    return out;
  };

  const flush = (): void => {
    const text = render();
    if (text === '' || socket === undefined || !connected) return;
    if (socket.writableLength > MAX_PENDING_BYTES) return;
    socket.write(text);
  };

  connect();
  const timer = setInterval(flush, options.flushIntervalMs);
  timer.unref();

  return {
    flush,
    async stop() {
      clearInterval(timer);
      flush();
      stopped = true;
      if (reconnectTimer !== undefined) clearTimeout(reconnectTimer);
      const s = socket;
      if (s === undefined) return;
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          s.destroy();
          resolve();
        }, 1000);
        t.unref();
        s.end(() => {
          clearTimeout(t);
          s.destroy();
          resolve();
        });
      });
    },
  };
}
