// The shared fixed-window limiter over the memory backend: batches, hits, local cache, §2.9 STOP_CACHE_KEY_INCREMENT.
import { expect } from 'chai';
import { RateLimitResponse_Code } from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { ManualClock } from '../../../../sidecar/clock.js';
import type { RateLimit } from '../../../../sidecar/config/types.js';
import { BackendError } from '../../../../sidecar/errors.js';
import type { CounterBackend, CounterOp } from '../../../../sidecar/limiter/backend.js';
import { createMemoryBackend, type MemoryBackend } from '../../../../sidecar/limiter/backend-memory.js';
import {
  createFixedWindowLimiter,
  hitsFor,
  type FixedWindowSettings,
  type RateLimiter,
} from '../../../../sidecar/limiter/fixed-window-limiter.js';
import { createLocalOverLimitCache } from '../../../../sidecar/limiter/local-cache.js';
import { createRateLimitStatsCache } from '../../../../sidecar/stats/rate-limit-stats.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { descriptor, makeLimit, request } from '../../../support/rate-limit-fakes.js';

/** Records every batch sent to an inner backend, to check what the limiter asks for. */
function recording(inner: CounterBackend): CounterBackend & { increments: CounterOp[][]; gets: CounterOp[][] } {
  const increments: CounterOp[][] = [];
  const gets: CounterOp[][] = [];
  return {
    increments,
    gets,
    increment: (ops) => (increments.push([...ops]), inner.increment(ops)),
    get: (ops) => (gets.push([...ops]), inner.get(ops)),
    close: () => inner.close(),
  };
}

interface Rig {
  limiter: RateLimiter;
  backend: ReturnType<typeof recording>;
  memory: MemoryBackend;
  store: StatsStore;
  clock: ManualClock;
  stat(key: string, name: string): number;
}

function rig(settings: Partial<FixedWindowSettings> = {}, localCacheBytes = 0): Rig {
  const clock = new ManualClock(1234_000);
  const store = new StatsStore();
  const memory = createMemoryBackend({ clock });
  const backend = recording(memory);
  const limiter = createFixedWindowLimiter({
    backend,
    localCache:
      localCacheBytes > 0 ? createLocalOverLimitCache({ maxBytes: localCacheBytes, clock, stats: store }) : undefined,
    stats: createRateLimitStatsCache(store),
    clock,
    settings: {
      cacheKeyPrefix: '',
      nearLimitRatio: 0.8,
      expirationJitterMaxSeconds: 0,
      stopCacheKeyIncrementWhenOverlimit: false,
      ...settings,
    },
    random: () => 0.5,
  });
  return {
    limiter,
    backend,
    memory,
    store,
    clock,
    stat: (key, name) => store.counter(`ratelimit.service.rate_limit.${key}.${name}`).value(),
  };
}

describe('fixed-window limiter', () => {
  let r: Rig;
  afterEach(async () => r?.limiter.close());

  it('counts per window, reports remaining, and moves to a fresh window', async () => {
    r = rig();
    const limit = makeLimit({ requestsPerUnit: 2, unit: 'MINUTE', fullKey: 'd.k_v' });
    const req = request('d', [descriptor({ k: 'v' })]);
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) {
      const [s] = await r.limiter.doLimit(req, [limit]);
      codes.push(s!.code);
      if (i === 0) expect(s!.limitRemaining).to.equal(1);
    }
    expect(codes).to.deep.equal([1, 1, 2]);
    expect(r.stat('d.k_v', 'total_hits')).to.equal(3);
    expect(r.stat('d.k_v', 'within_limit')).to.equal(2);
    expect(r.stat('d.k_v', 'over_limit')).to.equal(1);
    expect(r.stat('d.k_v', 'near_limit')).to.equal(1);
    r.clock.setSeconds(1260);
    const [next] = await r.limiter.doLimit(req, [limit]);
    expect(next!.code).to.equal(RateLimitResponse_Code.OK);
    expect(r.backend.increments[3]![0]!.key).to.equal('d_k_v_1260');
  });

  it('sends one batch with INCRBY hits and TTL = divider + jitter, and skips descriptors without limit', async () => {
    r = rig({ expirationJitterMaxSeconds: 300, cacheKeyPrefix: 'p:' });
    const second = makeLimit({ requestsPerUnit: 10, unit: 'SECOND' });
    const hour = makeLimit({ requestsPerUnit: 10, unit: 'HOUR' });
    const req = request('d', [descriptor({ a: '1' }, 0), descriptor({ b: '2' }), descriptor({ c: '3' })], 5);
    const statuses = await r.limiter.doLimit(req, [second, undefined, hour]);
    expect(r.backend.increments).to.have.length(1);
    expect(r.backend.increments[0]).to.deep.equal([
      { key: 'p:d_a_1_1234', hits: 0, ttlSeconds: 1 + 150, perSecond: true },
      { key: 'p:d_c_3_0', hits: 5, ttlSeconds: 3600 + 150, perSecond: false },
    ]);
    expect(statuses[1]).to.deep.include({ code: RateLimitResponse_Code.OK, currentLimit: undefined });
    expect(statuses[2]!.limitRemaining).to.equal(5);
  });

  it('hits: descriptor hits_addend wins (0 honoured), else max(1, request hits_addend)', () => {
    const req = request('d', [descriptor({ a: '1' }, 0), descriptor({ a: '1' }, 7), descriptor({ a: '1' })], 0);
    expect([0, 1, 2].map((i) => hitsFor(req, i))).to.deep.equal([0, 7, 1]);
    expect(hitsFor(request('d', [descriptor({ a: '1' })], 4), 0)).to.equal(4);
  });

  it('does no backend I/O when no descriptor has a limit', async () => {
    r = rig();
    const statuses = await r.limiter.doLimit(request('d', [descriptor({ a: '1' })]), [undefined]);
    expect(statuses[0]!.code).to.equal(RateLimitResponse_Code.OK);
    expect(r.backend.increments).to.have.length(0);
  });

  it('local cache: an over key is answered without backend I/O until its window ends', async () => {
    r = rig({}, 100_000);
    const limit = makeLimit({ requestsPerUnit: 1, unit: 'MINUTE', fullKey: 'd.k' });
    const req = request('d', [descriptor({ k: 'v' })]);
    await r.limiter.doLimit(req, [limit]);
    await r.limiter.doLimit(req, [limit]); // over → cached
    const [s] = await r.limiter.doLimit(req, [limit]);
    expect(s!.code).to.equal(RateLimitResponse_Code.OVER_LIMIT);
    expect(r.backend.increments).to.have.length(2);
    expect(r.stat('d.k', 'over_limit_with_local_cache')).to.equal(1);
    expect(r.stat('d.k', 'over_limit')).to.equal(2);
    expect(r.stat('d.k', 'total_hits')).to.equal(3);
    r.clock.setSeconds(1260);
    const [fresh] = await r.limiter.doLimit(req, [limit]);
    expect(fresh!.code).to.equal(RateLimitResponse_Code.OK);
  });

  describe('STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT', () => {
    const key2: RateLimit = makeLimit({ requestsPerUnit: 20, unit: 'MINUTE', fullKey: 'd.key2' });
    const key3: RateLimit = makeLimit({ requestsPerUnit: 10, unit: 'HOUR', fullKey: 'd.key3' });
    const joint = request('d', [descriptor({ key2: 'v2' }), descriptor({ key3: 'v3' })]);

    it('20/min + 10/h: from the 11th joint request key3 is OVER and key2 stays OK with remaining 10 (frozen)', async () => {
      r = rig({ stopCacheKeyIncrementWhenOverlimit: true });
      for (let i = 1; i <= 10; i++) {
        const [s2, s3] = await r.limiter.doLimit(joint, [key2, key3]);
        expect([s2!.code, s3!.code]).to.deep.equal([1, 1]);
        expect(s2!.limitRemaining).to.equal(20 - i);
      }
      for (let i = 0; i < 3; i++) {
        const [s2, s3] = await r.limiter.doLimit(joint, [key2, key3]);
        expect(s3!.code).to.equal(RateLimitResponse_Code.OVER_LIMIT);
        expect(s2!.code).to.equal(RateLimitResponse_Code.OK);
        expect(s2!.limitRemaining).to.equal(10);
      }
      expect(await r.memory.get([{ key: 'd_key2_v2_1200', hits: 0, ttlSeconds: 1, perSecond: false }])).to.deep.equal([
        10,
      ]);
      expect(await r.memory.get([{ key: 'd_key3_v3_0', hits: 0, ttlSeconds: 1, perSecond: false }])).to.deep.equal([
        13,
      ]);
      // One GET pass and one increment batch per request.
      expect(r.backend.gets).to.have.length(13);
      expect(r.backend.increments[12]!.map((op) => op.hits)).to.deep.equal([0, 1]);
      // The frozen key keeps counting within_limit: upstream's optimistic stats.
      expect(r.stat('d.key2', 'within_limit')).to.equal(13);
    });

    it('with a local-cache hit, skips the GET pass and sends INCRBY 0 for the other keys', async () => {
      r = rig({ stopCacheKeyIncrementWhenOverlimit: true }, 100_000);
      const one = makeLimit({ requestsPerUnit: 1, unit: 'HOUR', fullKey: 'd.key3' });
      for (let i = 0; i < 2; i++) await r.limiter.doLimit(joint, [key2, one]); // 2nd → key3 over and cached
      const getsBefore = r.backend.gets.length;
      const [s2, s3] = await r.limiter.doLimit(joint, [key2, one]);
      expect(r.backend.gets.length).to.equal(getsBefore);
      expect(r.backend.increments.at(-1)!.map((op) => [op.key, op.hits])).to.deep.equal([['d_key2_v2_1200', 0]]);
      expect(s3!.code).to.equal(RateLimitResponse_Code.OVER_LIMIT);
      expect(s2!.limitRemaining).to.equal(19);
    });
  });

  it('rejects a limits array that does not match the descriptors', async () => {
    r = rig();
    let caught: unknown;
    await r.limiter.doLimit(request('d', [descriptor({ a: '1' })]), []).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(RangeError);
  });

  it('propagates a BackendError after total_hits was counted', async () => {
    r = rig();
    await r.memory.close();
    const limit = makeLimit({ requestsPerUnit: 1, unit: 'MINUTE', fullKey: 'd.k' });
    let caught: unknown;
    try {
      await r.limiter.doLimit(request('d', [descriptor({ k: 'v' })]), [limit]);
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(BackendError);
    expect(r.stat('d.k', 'total_hits')).to.equal(1);
  });
});
