// Backend counter keys for one descriptor and one fixed window (upstream src/limiter/cache_key.go, spec §2.1).
import type { RateLimitDescriptor } from '../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js';
import type { RateLimit } from '../config/types.js';
import { UNIT_DIVIDER_SECONDS, type RateLimitUnitName } from '../config/units.js';

/** Start of the epoch-aligned window that contains nowSeconds (whole seconds since the Unix epoch). */
export function windowStartSeconds(nowSeconds: number, unit: RateLimitUnitName): number {
  const divider = UNIT_DIVIDER_SECONDS[unit];
  return Math.floor(nowSeconds / divider) * divider;
}

/** Seconds until the current window of `unit` ends, as upstream's CalculateReset (1..divider). */
export function secondsUntilReset(nowSeconds: number, unit: RateLimitUnitName): number {
  const divider = UNIT_DIVIDER_SECONDS[unit];
  return divider - (nowSeconds % divider);
}

/**
 * The counter key: `prefix + domain + "_" + Σ(key + "_" + value + "_") + windowStart`.
 * Every request entry is part of the key (even for key-only rules), except that a share_threshold index uses the
 * rule's wildcard pattern instead of the request value so that all matching values share one counter.
 * Returns '' when there is no limit: such descriptors are never sent to a backend.
 * @param nowSeconds whole seconds since the Unix epoch
 */
export function buildCacheKey(
  prefix: string,
  domain: string,
  descriptor: RateLimitDescriptor,
  limit: RateLimit | undefined,
  nowSeconds: number,
): string {
  if (limit === undefined) return '';
  const patterns = limit.shareThresholdKeyPatterns;
  let key = prefix + domain + '_';
  const entries = descriptor.entries;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const pattern = patterns === undefined ? undefined : patterns[i];
    key += entry.key + '_' + (pattern === undefined ? entry.value : pattern) + '_';
  }
  return key + windowStartSeconds(nowSeconds, limit.unit);
}
