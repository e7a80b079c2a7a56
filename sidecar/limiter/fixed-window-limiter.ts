// The fixed-window algorithm shared by every backend: keys, hits, local cache, STOP_CACHE_KEY_INCREMENT, stats (§2.2).
import type { RateLimitRequest } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { RateLimitResponse_DescriptorStatus } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { Clock } from '../clock.js';
import type { RateLimit } from '../config/types.js';
import { UNIT_DIVIDER_SECONDS } from '../config/units.js';
import type { RateLimitStatsCache } from '../stats/rate-limit-stats.js';
import type { CounterBackend, CounterOp } from './backend.js';
import { buildCacheKey } from './cache-key.js';
import { beforeCount, decide, noLimitStatus } from './decide.js';
import type { LocalOverLimitCache } from './local-cache.js';

/** Algorithm settings, read once by main (spec §1.2 "Rate-limit algorithm"). */
export interface FixedWindowSettings {
  /** CACHE_KEY_PREFIX, prepended to every key. */
  readonly cacheKeyPrefix: string;
  /** NEAR_LIMIT_RATIO (evaluated as float32). */
  readonly nearLimitRatio: number;
  /** EXPIRATION_JITTER_MAX_SECONDS: each TTL is window + rand[0, max); 0 disables jitter. */
  readonly expirationJitterMaxSeconds: number;
  /** STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT (§2.9). */
  readonly stopCacheKeyIncrementWhenOverlimit: boolean;
}

export interface FixedWindowLimiterDeps {
  readonly backend: CounterBackend;
  /** The local over-limit cache, or undefined when LOCAL_CACHE_SIZE_IN_BYTES is 0. */
  readonly localCache: LocalOverLimitCache | undefined;
  readonly stats: RateLimitStatsCache;
  readonly clock: Clock;
  readonly settings: FixedWindowSettings;
  /** Uniform in [0, 1), for the TTL jitter; Math.random by default. */
  readonly random?: () => number;
}

export interface RateLimiter {
  /**
   * One status per request descriptor, in order. `limits[i]` is the limit selected for descriptors[i], or
   * undefined (no match, unlimited or replaced), which yields a bare OK and no backend I/O.
   * `total_hits` is counted before any backend I/O, so it also counts requests that then fail.
   * @throws BackendError when the counter store fails.
   */
  doLimit(
    request: RateLimitRequest,
    limits: readonly (RateLimit | undefined)[],
  ): Promise<RateLimitResponse_DescriptorStatus[]>;
  /** Closes the backend. */
  close(): Promise<void>;
}

/** Hits for descriptor i: its own hits_addend when present (0 honoured), else max(1, request.hits_addend). */
export function hitsFor(request: RateLimitRequest, index: number): number {
  const own = request.descriptors[index]?.hitsAddend;
  if (own !== undefined) return own;
  return request.hitsAddend > 1 ? request.hitsAddend : 1;
}

export function createFixedWindowLimiter(deps: FixedWindowLimiterDeps): RateLimiter {
  const { backend, localCache, stats, clock, settings } = deps;
  const random = deps.random ?? Math.random;
  const jitterMax = settings.expirationJitterMaxSeconds;

  const ttlSecondsFor = (limit: RateLimit): number =>
    UNIT_DIVIDER_SECONDS[limit.unit] + (jitterMax > 0 ? Math.floor(random() * jitterMax) : 0);

  return {
    async doLimit(request, limits) {
      const count = request.descriptors.length;
      if (limits.length !== count) {
        throw new RangeError(`doLimit needs one limit slot per descriptor: ${limits.length} for ${count}`);
      }
      const nowSeconds = Math.floor(clock.nowMs() / 1000);
      const keys = new Array<string>(count);
      const hits = new Array<number>(count);
      const overByLocalCache = new Array<boolean>(count).fill(false);
      let anyOverByLocalCache = false;

      for (let i = 0; i < count; i++) {
        const limit = limits[i];
        keys[i] = buildCacheKey(settings.cacheKeyPrefix, request.domain, request.descriptors[i]!, limit, nowSeconds);
        hits[i] = hitsFor(request, i);
        if (limit !== undefined) stats.forKey(limit.fullKey).totalHits.add(hits[i]!);
      }
      if (localCache !== undefined) {
        for (let i = 0; i < count; i++) {
          if (keys[i] !== '' && localCache.has(keys[i]!)) {
            overByLocalCache[i] = true;
            anyOverByLocalCache = true;
          }
        }
      }

      // Indices that go to the backend, and the op for each.
      const indices: number[] = [];
      const ops: CounterOp[] = [];
      for (let i = 0; i < count; i++) {
        if (keys[i] === '' || overByLocalCache[i]) continue;
        const limit = limits[i]!;
        indices.push(i);
        ops.push({
          key: keys[i]!,
          hits: hits[i]!,
          ttlSeconds: ttlSecondsFor(limit),
          perSecond: limit.unit === 'SECOND',
        });
      }

      if (settings.stopCacheKeyIncrementWhenOverlimit && ops.length > 0) {
        await freezeKeysNotOverLimit(ops, indices, limits, hits, anyOverByLocalCache);
      }
      const afters = ops.length > 0 ? await backend.increment(ops) : [];

      const nowMs = clock.nowMs();
      const statuses = new Array<RateLimitResponse_DescriptorStatus>(count);
      let opIndex = 0;
      for (let i = 0; i < count; i++) {
        const limit = limits[i];
        if (limit === undefined || keys[i] === '') {
          statuses[i] = noLimitStatus();
          continue;
        }
        let after = 0;
        let before = 0;
        if (!overByLocalCache[i]) {
          after = afters[opIndex++]!;
          before = beforeCount(after, hits[i]!);
        }
        const decision = decide({
          limit,
          hits: hits[i]!,
          before,
          after,
          overLimitByLocalCache: overByLocalCache[i]!,
          nowMs,
          nearLimitRatio: settings.nearLimitRatio,
        });
        const s = stats.forKey(limit.fullKey);
        if (decision.overLimit > 0) s.overLimit.add(decision.overLimit);
        if (decision.nearLimit > 0) s.nearLimit.add(decision.nearLimit);
        if (decision.withinLimit > 0) s.withinLimit.add(decision.withinLimit);
        if (decision.overLimitWithLocalCache > 0) s.overLimitWithLocalCache.add(decision.overLimitWithLocalCache);
        if (decision.shadowMode > 0) s.shadowMode.add(decision.shadowMode);
        if (decision.cacheAsOverLimit && localCache !== undefined) {
          localCache.add(keys[i]!, UNIT_DIVIDER_SECONDS[limit.unit]);
        }
        statuses[i] = decision.status;
      }
      return statuses;
    },
    close: () => backend.close(),
  };

  /**
   * §2.9: when some key is already over (local cache) or would go over (GET pre-pass), only the keys that would
   * go over are incremented; the others get INCRBY 0. Their status is still computed with before = after − hits,
   * so they report an optimistic, frozen remaining (upstream quirk, kept for parity). Not atomic: the GET and
   * the INCRBY are two round trips.
   */
  async function freezeKeysNotOverLimit(
    ops: CounterOp[],
    indices: readonly number[],
    limits: readonly (RateLimit | undefined)[],
    hits: readonly number[],
    anyOverByLocalCache: boolean,
  ): Promise<void> {
    let wouldExceed: boolean[] | undefined;
    if (!anyOverByLocalCache) {
      const current = await backend.get(ops);
      wouldExceed = indices.map((i, k) => current[k]! + hits[i]! > limits[i]!.requestsPerUnit);
      if (!wouldExceed.includes(true)) return;
    }
    for (let k = 0; k < ops.length; k++) {
      if (wouldExceed === undefined || !wouldExceed[k]) ops[k] = { ...ops[k]!, hits: 0 };
    }
  }
}
