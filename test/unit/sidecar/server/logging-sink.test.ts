// The fallback stats sink prints what gostats' logging sink prints.
import { expect } from 'chai';
import { startLoggingSink } from '../../../../sidecar/stats/logging-sink.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';

describe('logging stats sink', () => {
  it('writes counter deltas, gauges and timings as gostats JSON lines, then an all-stats marker', () => {
    const store = new StatsStore();
    let out = '';
    const sink = startLoggingSink(store, { flushIntervalMs: 60_000, write: (t) => (out += t), nowSeconds: () => 1.5 });
    store.counter('a.count').add(3);
    store.gauge('a.gauge').set(7);
    store.timer('a.time').recordMs(2.25);
    sink.flush();
    expect(out.split('\n')).to.deep.equal([
      '{"level":"debug","ts":1.5,"logger":"gostats.loggingsink","msg":"flushing counter","json":{"name":"a.count","type":"counter","value":"3.000000"}}',
      '{"level":"debug","ts":1.5,"logger":"gostats.loggingsink","msg":"flushing gauge","json":{"name":"a.gauge","type":"gauge","value":"7.000000"}}',
      '{"level":"debug","ts":1.5,"logger":"gostats.loggingsink","msg":"flushing timer","json":{"name":"a.time","type":"timer","value":"2.250000"}}',
      '{"level":"debug","ts":1.5,"logger":"gostats.loggingsink","msg":"flushing all stats","json":{"type":"all stats","value":"0.000000"}}',
      '',
    ]);
    out = '';
    store.counter('a.count').add(1);
    sink.stop();
    // Only the new delta; unchanged counters and drained timings are not repeated.
    expect(out).to.contain('"name":"a.count","type":"counter","value":"1.000000"');
    expect(out).to.not.contain('a.time');
  });
});
