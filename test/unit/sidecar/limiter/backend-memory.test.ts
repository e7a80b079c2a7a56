// Memory-backend specifics beyond the contract: expiry buckets, the key bound and its eviction policy, close.
import { expect } from 'chai';
import { ManualClock } from '../../../../sidecar/clock.js';
import { BackendError } from '../../../../sidecar/errors.js';
import type { CounterOp } from '../../../../sidecar/limiter/backend.js';
import { createMemoryBackend } from '../../../../sidecar/limiter/backend-memory.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';

const op = (key: string, hits = 1, ttlSeconds = 60): CounterOp => ({ key, hits, ttlSeconds, perSecond: false });

describe('memory backend (bound, sweep, close)', () => {
  it('sweeps expired keys by expiry bucket, honouring TTL refreshes', async () => {
    const clock = new ManualClock(1_000_000);
    const backend = createMemoryBackend({ clock });
    await backend.increment([op('a', 1, 10), op('b', 1, 20)]);
    clock.advanceMs(5_000);
    await backend.increment([op('a', 1, 10)]); // a now expires at +15 s
    clock.advanceMs(6_000); // +11 s: a's first bucket is due but its TTL was extended
    backend.sweep();
    expect(backend.size()).to.equal(2);
    clock.advanceMs(4_000); // +15 s
    backend.sweep();
    expect(backend.size()).to.equal(1);
    expect(await backend.get([op('a'), op('b')])).to.deep.equal([0, 1]);
    clock.advanceMs(5_000);
    backend.sweep();
    expect(backend.size()).to.equal(0);
    await backend.close();
  });

  it('treats an expired but unswept key as absent', async () => {
    const clock = new ManualClock(0);
    const backend = createMemoryBackend({ clock });
    await backend.increment([op('a', 5, 1)]);
    clock.advanceMs(1000);
    expect(await backend.increment([op('a', 1, 1)])).to.deep.equal([1]);
    await backend.close();
  });

  it('when full, frees expired keys first', async () => {
    const clock = new ManualClock(0);
    const stats = new StatsStore();
    const backend = createMemoryBackend({ clock, maxKeys: 2, stats });
    await backend.increment([op('a', 1, 1), op('b', 1, 60)]);
    clock.advanceMs(1000);
    await backend.increment([op('c', 1, 60)]);
    expect(await backend.get([op('b'), op('c')])).to.deep.equal([1, 1]);
    expect(stats.counter('ratelimit.memory.evicted').value()).to.equal(0);
    await backend.close();
  });

  it('when full of live keys, evicts the one that expires soonest (volatile-ttl) and counts it', async () => {
    const clock = new ManualClock(0);
    const stats = new StatsStore();
    const backend = createMemoryBackend({ clock, maxKeys: 3, stats });
    await backend.increment([op('hour', 7, 3600), op('minute', 7, 60), op('day', 7, 86400)]);
    expect(await backend.increment([op('new', 1, 60)])).to.deep.equal([1]);
    expect(backend.size()).to.equal(3);
    expect(await backend.get([op('minute'), op('hour'), op('day'), op('new')])).to.deep.equal([0, 7, 7, 1]);
    expect(stats.counter('ratelimit.memory.evicted').value()).to.equal(1);
    // A refreshed TTL moves a key later in the eviction order.
    await backend.increment([op('new', 1, 100000)]);
    await backend.increment([op('other', 1, 60)]);
    expect(await backend.get([op('hour'), op('new')])).to.deep.equal([0, 2]);
    await backend.close();
  });

  it('a shorter TTL than before moves the key earlier', async () => {
    const clock = new ManualClock(0);
    const backend = createMemoryBackend({ clock });
    await backend.increment([op('a', 1, 300)]);
    await backend.increment([op('a', 1, 10)]);
    clock.advanceMs(10_000);
    backend.sweep();
    expect(backend.size()).to.equal(0);
    await backend.close();
  });

  it('rejects maxKeys ≤ 0 and fails with BackendError after close', async () => {
    const clock = new ManualClock(0);
    expect(() => createMemoryBackend({ clock, maxKeys: 0 })).to.throw(RangeError);
    const backend = createMemoryBackend({ clock });
    await backend.close();
    await backend.close();
    let caught: unknown;
    await backend.increment([op('a')]).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(BackendError);
  });
});
