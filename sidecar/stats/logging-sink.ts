// The sink used when no other is chosen: gostats' logging sink, one JSON line per stat and flush on standard error.
import { createStatsFlusher } from './stats-flush.js';
import type { StatsStore } from './stats-store.js';

export interface LoggingSinkOptions {
  readonly flushIntervalMs: number;
  /** Where the lines go; standard error by default (as upstream). */
  readonly write?: (text: string) => void;
  /** Seconds since the epoch, for the `ts` field; Date.now()/1000 by default. */
  readonly nowSeconds?: () => number;
}

export interface LoggingSink {
  /** Writes one flush now. */
  flush(): void;
  /** Writes a last flush and stops the timer. */
  stop(): void;
}

// gostats prints every value with Go's %f.
const goFloat = (n: number): string => n.toFixed(6);

/**
 * Lines have upstream's exact shape, e.g.
 * `{"level":"debug","ts":1795335516.613261,"logger":"gostats.loggingsink","msg":"flushing counter","json":{"name":"…","type":"counter","value":"1.000000"}}`,
 * and each flush ends with a `flushing all stats` line, so tools that read upstream's counters read ours alike.
 */
export function startLoggingSink(store: StatsStore, options: LoggingSinkOptions): LoggingSink {
  const write = options.write ?? ((text: string) => void process.stderr.write(text));
  const nowSeconds = options.nowSeconds ?? (() => Date.now() / 1000);
  const takeFlush = createStatsFlusher(store);
  const line = (msg: string, json: Record<string, string>): string =>
    JSON.stringify({ level: 'debug', ts: nowSeconds(), logger: 'gostats.loggingsink', msg, json }) + '\n';
  const flush = (): void => {
    const { counters, gauges, timers } = takeFlush();
    let out = '';
    for (const [name, delta] of counters)
      out += line('flushing counter', { name, type: 'counter', value: goFloat(delta) });
    for (const [name, value] of gauges) out += line('flushing gauge', { name, type: 'gauge', value: goFloat(value) });
    for (const [name, list] of timers) {
      for (const ms of list) out += line('flushing timer', { name, type: 'timer', value: goFloat(ms) });
    }
    out += line('flushing all stats', { type: 'all stats', value: goFloat(0) });
    write(out);
  };
  const timer = setInterval(flush, options.flushIntervalMs);
  timer.unref();
  return {
    flush,
    stop() {
      clearInterval(timer);
      flush();
    },
  };
}
