// A statsd TCP server for tests: sums counter deltas per name, keeps the last gauge value, records timer names.
import net from 'node:net';

/** What one service has sent so far. */
export interface StatsdTotals {
  /** Sum of every `name:value|c` line per name. */
  readonly counters: ReadonlyMap<string, number>;
  /** Last `name:value|g` per name. */
  readonly gauges: ReadonlyMap<string, number>;
  /** Names seen with `|ms`. */
  readonly timers: ReadonlySet<string>;
  /** Lines that are not `name:value|type`; both services must send none. */
  readonly malformed: readonly string[];
}

export interface StatsdCollector {
  readonly port: number;
  totals(): StatsdTotals;
  close(): Promise<void>;
}

const LINE = /^([^:|\s]+):(-?\d+(?:\.\d+)?)\|(c|g|ms)$/;

export async function startStatsdCollector(): Promise<StatsdCollector> {
  const counters = new Map<string, number>();
  const gauges = new Map<string, number>();
  const timers = new Set<string>();
  const malformed: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    let partial = '';
    socket.on('data', (chunk: Buffer) => {
      partial += chunk.toString();
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') continue;
        const m = LINE.exec(line);
        if (m === null) {
          malformed.push(line);
          continue;
        }
        const [, name = '', value = '0', type] = m;
        if (type === 'c') counters.set(name, (counters.get(name) ?? 0) + Number(value));
        else if (type === 'g') gauges.set(name, Number(value));
        else timers.add(name);
      }
    });
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('statsd collector has no TCP address');
  return {
    port: address.port,
    totals: () => ({
      counters: new Map(counters),
      gauges: new Map(gauges),
      timers: new Set(timers),
      malformed: [...malformed],
    }),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
