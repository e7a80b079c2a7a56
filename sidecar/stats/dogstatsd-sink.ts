// USE_DOG_STATSD: flushes a StatsStore to a DogStatsD agent over UDP, with gostats tags and mogrifiers as dog tags.
import dgram from 'node:dgram';
import type { Logger } from '../logger.js';
import type { DogStatsdMogrifier } from '../settings/settings.js';
import { createStatsFlusher } from './stats-flush.js';
import type { StatsStore } from './stats-store.js';

export interface DogStatsdSinkOptions {
  readonly host: string;
  readonly port: number;
  readonly flushIntervalMs: number;
  /** USE_DOG_STATSD_MOGRIFIERS in order; the first whose pattern matches renames the stat and adds tags. */
  readonly mogrifiers: readonly DogStatsdMogrifier[];
  readonly logger: Logger;
}

export interface DogStatsdSink {
  flush(): void;
  stop(): Promise<void>;
}

/** A stat name and tags in DogStatsD form. */
export interface DogStat {
  readonly name: string;
  readonly tags: readonly string[];
}

interface CompiledMogrifier {
  readonly pattern: RegExp;
  readonly name: string;
  readonly tags: readonly (readonly [string, string])[];
}

// datadog-go's default maximum UDP payload.
const MAX_DATAGRAM_BYTES = 1432;

/** Replaces `$0`, `$1`, … with the match groups; an index without a group stays as written (as upstream). */
function substitute(template: string, match: RegExpExecArray): string {
  return template.replace(/\$(\d+)/g, (whole, digits: string) => match[Number(digits)] ?? whole);
}

/**
 * gostats serialises tags into the name (`name.__k=v`); DogStatsD wants them as `k:v` tags. Then the first matching
 * mogrifier renames the stat and adds its own tags after the serialised ones.
 */
export function createDogStatNamer(mogrifiers: readonly DogStatsdMogrifier[]): (full: string) => DogStat {
  const compiled: CompiledMogrifier[] = mogrifiers.map((m) => ({
    pattern: new RegExp(m.pattern),
    name: m.metricName,
    tags: Object.entries(m.tags),
  }));
  return (full) => {
    let name = full;
    const tags: string[] = [];
    const marker = full.indexOf('.__');
    if (marker >= 0) {
      name = full.slice(0, marker);
      for (const pair of full.slice(marker + 3).split('.__')) {
        const eq = pair.indexOf('=');
        if (eq >= 0) tags.push(`${pair.slice(0, eq)}:${pair.slice(eq + 1)}`);
      }
    }
    for (const m of compiled) {
      const match = m.pattern.exec(name);
      if (match === null) continue;
      for (const [key, value] of m.tags) tags.push(`${key}:${substitute(value, match)}`);
      return { name: substitute(m.name, match), tags };
    }
    return { name, tags };
  };
}

function line(stat: DogStat, value: string, type: string): string {
  return `${stat.name}:${value}|${type}${stat.tags.length > 0 ? `|#${stat.tags.join(',')}` : ''}`;
}

export function startDogStatsdSink(store: StatsStore, options: DogStatsdSinkOptions): DogStatsdSink {
  const namer = createDogStatNamer(options.mogrifiers);
  const cache = new Map<string, DogStat>();
  const statOf = (full: string): DogStat => {
    let stat = cache.get(full);
    if (stat === undefined) {
      stat = namer(full);
      cache.set(full, stat);
    }
    return stat;
  };
  const takeFlush = createStatsFlusher(store);
  const socket = dgram.createSocket(options.host.includes(':') ? 'udp6' : 'udp4');
  socket.unref();
  let warned = false;
  socket.on('error', (err) => {
    if (!warned) options.logger.warn(`dogstatsd sink: ${err.message}; dropping stats`);
    warned = true;
  });
  const send = (payload: string): void => {
    socket.send(payload, options.port, options.host, (err) => {
      if (err !== null && err !== undefined && !warned) {
        // One line per outage; a missing agent must never affect requests.
        options.logger.warn(`dogstatsd sink: ${err.message}; dropping stats`);
        warned = true;
      }
    });
  };
  const flush = (): void => {
    const { counters, gauges, timers } = takeFlush();
    const lines: string[] = [];
    for (const [name, delta] of counters) lines.push(line(statOf(name), String(delta), 'c'));
    for (const [name, value] of gauges) lines.push(line(statOf(name), String(value), 'g'));
    // Upstream converts through time.Duration(ms) * time.Millisecond, which drops the fraction.
    for (const [name, list] of timers)
      for (const ms of list) lines.push(line(statOf(name), String(Math.trunc(ms)), 'ms'));
    let payload = '';
    for (const l of lines) {
      if (payload !== '' && Buffer.byteLength(payload) + 1 + Buffer.byteLength(l) > MAX_DATAGRAM_BYTES) {
        send(payload);
        payload = '';
      }
      payload = payload === '' ? l : `${payload}\n${l}`;
    }
    if (payload !== '') send(payload);
  };
  const timer = setInterval(flush, options.flushIntervalMs);
  timer.unref();
  return {
    flush,
    async stop() {
      clearInterval(timer);
      flush();
      // Give the last datagrams a moment to leave before the socket closes.
      await new Promise((r) => setTimeout(r, 20));
      socket.close();
    },
  };
}
