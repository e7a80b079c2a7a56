// One contract every CounterBackend must meet, and the shared limiter deciding alike on top of it (STYLE §8).
import { expect } from 'chai';
import { RateLimitResponse_Code } from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { ManualClock } from '../../../../sidecar/clock.js';
import { BackendError } from '../../../../sidecar/errors.js';
import type { CounterBackend, CounterOp } from '../../../../sidecar/limiter/backend.js';
import { createFixedWindowLimiter } from '../../../../sidecar/limiter/fixed-window-limiter.js';
import { createRateLimitStatsCache } from '../../../../sidecar/stats/rate-limit-stats.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { descriptor, makeLimit, request } from '../../../support/rate-limit-fakes.js';

export interface ContractTarget {
  /** A fresh backend over an empty store; `clock` drives the limiter (and the memory backend's TTLs). */
  create(clock: ManualClock): Promise<CounterBackend>;
}

let unique = 0;
const op = (key: string, hits = 1, ttlSeconds = 60, perSecond = false): CounterOp => ({
  key,
  hits,
  ttlSeconds,
  perSecond,
});

export function counterBackendContract(name: string, target: ContractTarget): void {
  describe(`${name}: CounterBackend contract`, () => {
    let backend: CounterBackend;
    let clock: ManualClock;
    let prefix: string;
    beforeEach(async () => {
      clock = new ManualClock(Date.now());
      backend = await target.create(clock);
      prefix = `c${++unique}_${Date.now()}_`;
    });
    afterEach(async () => backend.close());

    it('increments in one batch and returns counts in op order, same key twice sequentially', async () => {
      expect(await backend.increment([op(prefix + 'a', 3), op(prefix + 'b', 1), op(prefix + 'a', 2)])).to.deep.equal([
        3, 1, 5,
      ]);
      expect(await backend.increment([op(prefix + 'a', 1)])).to.deep.equal([6]);
    });

    it('get returns current counts and 0 for missing keys, without incrementing', async () => {
      await backend.increment([op(prefix + 'x', 4)]);
      expect(await backend.get([op(prefix + 'x'), op(prefix + 'missing')])).to.deep.equal([4, 0]);
      expect(await backend.get([op(prefix + 'x')])).to.deep.equal([4]);
    });

    it('hits 0 reads the count (check only)', async () => {
      await backend.increment([op(prefix + 'z', 2)]);
      expect(await backend.increment([op(prefix + 'z', 0), op(prefix + 'new', 0)])).to.deep.equal([2, 0]);
    });

    it('rejects with BackendError after close', async () => {
      await backend.close();
      let caught: unknown;
      await backend.increment([op(prefix + 'a')]).catch((err: unknown) => (caught = err));
      expect(caught).to.be.instanceOf(BackendError);
    });

    it('the shared limiter decides alike: 20/min + 10/h with STOP_CACHE_KEY_INCREMENT (§2.9)', async () => {
      const store = new StatsStore();
      const limiter = createFixedWindowLimiter({
        backend,
        localCache: undefined,
        stats: createRateLimitStatsCache(store),
        clock,
        settings: {
          cacheKeyPrefix: prefix,
          nearLimitRatio: 0.8,
          expirationJitterMaxSeconds: 300,
          stopCacheKeyIncrementWhenOverlimit: true,
        },
      });
      const key2 = makeLimit({ requestsPerUnit: 20, unit: 'MINUTE', fullKey: 'd.key2' });
      const key3 = makeLimit({ requestsPerUnit: 10, unit: 'HOUR', fullKey: 'd.key3' });
      const joint = request('d', [descriptor({ key2: 'v2' }), descriptor({ key3: 'v3' })]);
      for (let i = 1; i <= 10; i++) {
        const [s2, s3] = await limiter.doLimit(joint, [key2, key3]);
        expect([s2!.code, s3!.code, s2!.limitRemaining, s3!.limitRemaining]).to.deep.equal([1, 1, 20 - i, 10 - i]);
      }
      for (let i = 0; i < 2; i++) {
        const [s2, s3] = await limiter.doLimit(joint, [key2, key3]);
        expect([s2!.code, s2!.limitRemaining, s3!.code]).to.deep.equal([
          RateLimitResponse_Code.OK,
          10,
          RateLimitResponse_Code.OVER_LIMIT,
        ]);
      }
      const counter = (k: string, n: string) => store.counter(`ratelimit.service.rate_limit.${k}.${n}`).value();
      expect(counter('d.key3', 'over_limit')).to.equal(2);
      expect(counter('d.key2', 'within_limit')).to.equal(12);
      expect(counter('d.key2', 'total_hits')).to.equal(12);
    });

    it('the shared limiter counts per window and reports near/over stats (L=20 worked case)', async () => {
      const store = new StatsStore();
      const limiter = createFixedWindowLimiter({
        backend,
        localCache: undefined,
        stats: createRateLimitStatsCache(store),
        clock,
        settings: {
          cacheKeyPrefix: prefix,
          nearLimitRatio: 0.8,
          expirationJitterMaxSeconds: 0,
          stopCacheKeyIncrementWhenOverlimit: false,
        },
      });
      const limit = makeLimit({ requestsPerUnit: 20, unit: 'HOUR', fullKey: 'd.k' });
      const statuses = [];
      for (const hits of [15, 4, 3]) {
        statuses.push((await limiter.doLimit(request('d', [descriptor({ k: 'v' }, hits)]), [limit]))[0]!);
      }
      expect(statuses.map((s) => [s.code, s.limitRemaining])).to.deep.equal([
        [1, 5],
        [1, 1],
        [2, 0],
      ]);
      const counter = (n: string) => store.counter(`ratelimit.service.rate_limit.d.k.${n}`).value();
      expect([counter('over_limit'), counter('near_limit'), counter('within_limit')]).to.deep.equal([2, 4, 19]);
    });
  });
}
