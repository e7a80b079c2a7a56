// The TCP statsd sink against a real listener that is down at first and comes up later.
import { expect } from 'chai';
import net from 'node:net';
import { silentLogger } from '../../../../sidecar/logger.js';
import { startStatsdSink } from '../../../../sidecar/stats/statsd-sink.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { freePort } from '../../../support/ports.js';

describe('statsd sink', function () {
  this.timeout(30_000);

  it('drops stats while statsd is down, reconnects quietly and then sends deltas, gauges and timings', async () => {
    const port = await freePort();
    const store = new StatsStore();
    const counter = store.counter('a.count');
    const sink = startStatsdSink(store, {
      host: '127.0.0.1',
      port,
      flushIntervalMs: 50,
      logger: silentLogger,
      minBackoffMs: 20,
      maxBackoffMs: 100,
    });
    let received = '';
    const server = net.createServer((socket) => socket.on('data', (d: Buffer) => (received += d.toString())));
    try {
      counter.add(3);
      sink.flush();
      await new Promise((r) => setTimeout(r, 200));
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      store.gauge('a.gauge').set(7);
      const until = async (text: string): Promise<void> => {
        const deadline = Date.now() + 10_000;
        while (!received.includes(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      };
      // Gauges go out on every flush, so seeing one means the sink has reconnected.
      await until('a.gauge:7|g\n');
      counter.add(2);
      store.timer('a.time').recordMs(1.5);
      await until('a.time:1.5|ms\n');
      expect(received).to.contain('a.gauge:7|g\n');
      expect(received).to.contain('a.time:1.5|ms\n');
      // The first flush went nowhere; afterwards only the new delta is sent, never the total again.
      expect(received).to.contain('a.count:2|c\n');
      expect(received).to.not.contain('a.count:5|c');
    } finally {
      await sink.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
