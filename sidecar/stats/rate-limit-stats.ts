// Per-limit counters `ratelimit.service.rate_limit.<key>.*`, resolved once per stats key and cached (spec §2.16).
import { sanitizeStatsKey } from '../config/stats-key.js';
import type { Counter, StatsStore } from './stats-store.js';

/** The six counters upstream keeps for every limit (its `RateLimitStats`). */
export interface RateLimitStats {
  readonly totalHits: Counter;
  readonly overLimit: Counter;
  readonly nearLimit: Counter;
  readonly overLimitWithLocalCache: Counter;
  readonly withinLimit: Counter;
  readonly shadowMode: Counter;
}

export interface RateLimitStatsCache {
  /**
   * The counters of one limit, by its unsanitised stats key (RateLimit.fullKey). The same object is returned for
   * the same key while it stays cached, so the hot path does no string building after the first request.
   */
  forKey(fullKey: string): RateLimitStats;
  /** Counter `ratelimit.service.rate_limit.<domain>.domain_not_found`. */
  domainNotFound(domain: string): Counter;
  /** Number of cached keys (at most maxKeys). */
  size(): number;
}

export interface RateLimitStatsCacheOptions {
  /** Stats-name sanitiser; sanitizeStatsKey (spec §2.13) by default. */
  readonly sanitize?: (key: string) => string;
  /**
   * Most keys cached here; the oldest-inserted key is dropped first. Upstream caches without bound, and limit
   * overrides or detailed_metric rules make keys high-cardinality (issues #275, #1132). Default 10 000.
   */
  readonly maxKeys?: number;
}

export const RATE_LIMIT_STATS_PREFIX = 'ratelimit.service.rate_limit.';
export const DEFAULT_MAX_STATS_KEYS = 10_000;

export function createRateLimitStatsCache(
  store: StatsStore,
  options: RateLimitStatsCacheOptions = {},
): RateLimitStatsCache {
  const sanitize = options.sanitize ?? sanitizeStatsKey;
  const maxKeys = Math.max(1, options.maxKeys ?? DEFAULT_MAX_STATS_KEYS);
  const byKey = new Map<string, RateLimitStats>();
  const notFoundByDomain = new Map<string, Counter>();

  const evictIfFull = <T>(map: Map<string, T>): void => {
    if (map.size < maxKeys) return;
    const oldest = map.keys().next();
    if (oldest.done !== true) map.delete(oldest.value);
  };

  return {
    forKey(fullKey) {
      let stats = byKey.get(fullKey);
      if (stats === undefined) {
        const base = RATE_LIMIT_STATS_PREFIX + sanitize(fullKey) + '.';
        stats = {
          totalHits: store.counter(base + 'total_hits'),
          overLimit: store.counter(base + 'over_limit'),
          nearLimit: store.counter(base + 'near_limit'),
          overLimitWithLocalCache: store.counter(base + 'over_limit_with_local_cache'),
          withinLimit: store.counter(base + 'within_limit'),
          shadowMode: store.counter(base + 'shadow_mode'),
        };
        evictIfFull(byKey);
        byKey.set(fullKey, stats);
      }
      return stats;
    },
    domainNotFound(domain) {
      let counter = notFoundByDomain.get(domain);
      if (counter === undefined) {
        counter = store.counter(RATE_LIMIT_STATS_PREFIX + sanitize(domain) + '.domain_not_found');
        evictIfFull(notFoundByDomain);
        notFoundByDomain.set(domain, counter);
      }
      return counter;
    },
    size: () => byKey.size,
  };
}
