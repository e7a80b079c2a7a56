// The local over-limit cache: TTL, byte accounting, eviction order and freecache-style gauges.
import { expect } from 'chai';
import { ManualClock } from '../../../../sidecar/clock.js';
import {
  createLocalOverLimitCache,
  LOCAL_CACHE_ENTRY_OVERHEAD_BYTES,
} from '../../../../sidecar/limiter/local-cache.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';

const gauge = (store: StatsStore, name: string): number => store.gauge('ratelimit.localcache.' + name).value();

describe('local over-limit cache', () => {
  it('holds a key for its TTL and counts lookups, hits, misses and expiry', () => {
    const clock = new ManualClock(1_000_000);
    const stats = new StatsStore();
    const cache = createLocalOverLimitCache({ maxBytes: 10_000, clock, stats });
    expect(cache.has('k')).to.equal(false);
    cache.add('k', 60);
    expect(cache.has('k')).to.equal(true);
    clock.advanceMs(59_999);
    expect(cache.has('k')).to.equal(true);
    clock.advanceMs(1);
    expect(cache.has('k')).to.equal(false);
    expect(gauge(stats, 'lookupCount')).to.equal(4);
    expect(gauge(stats, 'hitCount')).to.equal(2);
    expect(gauge(stats, 'missCount')).to.equal(2);
    expect(gauge(stats, 'expiredCount')).to.equal(1);
    expect(gauge(stats, 'entryCount')).to.equal(0);
  });

  it('accounts key length + overhead and evacuates the oldest insertions when full', () => {
    const clock = new ManualClock(0);
    const stats = new StatsStore();
    const per = 2 + LOCAL_CACHE_ENTRY_OVERHEAD_BYTES;
    const cache = createLocalOverLimitCache({ maxBytes: per * 3, clock, stats });
    for (const k of ['k1', 'k2', 'k3']) cache.add(k, 60);
    expect(cache.bytesUsed()).to.equal(per * 3);
    cache.add('k4', 60);
    expect(cache.entryCount()).to.equal(3);
    expect(cache.has('k1')).to.equal(false);
    expect(cache.has('k4')).to.equal(true);
    expect(gauge(stats, 'evacuateCount')).to.equal(1);
    cache.add('k4', 60);
    expect(gauge(stats, 'overwriteCount')).to.equal(1);
    expect(cache.bytesUsed()).to.equal(per * 3);
  });

  it('frees expired head entries before evacuating live ones', () => {
    const clock = new ManualClock(0);
    const stats = new StatsStore();
    const per = 2 + LOCAL_CACHE_ENTRY_OVERHEAD_BYTES;
    const cache = createLocalOverLimitCache({ maxBytes: per * 2, clock, stats });
    cache.add('k1', 1);
    cache.add('k2', 60);
    clock.advanceMs(1000);
    cache.add('k3', 60);
    expect(gauge(stats, 'expiredCount')).to.equal(1);
    expect(gauge(stats, 'evacuateCount')).to.equal(0);
    expect(cache.has('k2')).to.equal(true);
  });

  it('rejects a size of 0 and ignores an entry larger than the whole cache', () => {
    const clock = new ManualClock(0);
    expect(() => createLocalOverLimitCache({ maxBytes: 0, clock, stats: new StatsStore() })).to.throw(RangeError);
    const cache = createLocalOverLimitCache({ maxBytes: 10, clock, stats: new StatsStore() });
    cache.add('a-key-that-does-not-fit', 60);
    expect(cache.entryCount()).to.equal(0);
  });

  it('reports averageAccessTime as the mean last-access unix second (freecache semantics)', () => {
    const clock = new ManualClock(100_000);
    const stats = new StatsStore();
    const cache = createLocalOverLimitCache({ maxBytes: 10_000, clock, stats });
    cache.add('a', 600);
    clock.advanceMs(10_000);
    cache.add('b', 600);
    expect(gauge(stats, 'averageAccessTime')).to.equal(105);
  });
});
