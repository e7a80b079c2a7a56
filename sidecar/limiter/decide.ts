// The fixed-window decision for one descriptor: status and stat deltas from counts (upstream base_limiter.go, §2.3).
import type { RateLimitResponse_DescriptorStatus } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { RateLimitResponse_Code } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { RateLimit } from '../config/types.js';
import { UNIT_NUMBER } from '../config/units.js';
import { secondsUntilReset } from './cache-key.js';
import { nearLimitThreshold } from './near-limit.js';

/** What one descriptor's counts mean. Stat fields are amounts to add to the per-limit counters. */
export interface Decision {
  readonly status: RateLimitResponse_DescriptorStatus;
  readonly overLimit: number;
  readonly nearLimit: number;
  readonly withinLimit: number;
  readonly overLimitWithLocalCache: number;
  readonly shadowMode: number;
  /** True when the key must go into the local over-limit cache (after > limit, shadow rules included). */
  readonly cacheAsOverLimit: boolean;
}

export interface DecideInput {
  readonly limit: RateLimit;
  /** Hits this request adds for the descriptor (0 allowed: check only). */
  readonly hits: number;
  /**
   * Counter before this request's hits. Upstream computes it as `after − hits` in uint64, so it wraps to a huge
   * value when a key was not incremented (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT) and after < hits; pass
   * Number.MAX_SAFE_INTEGER to reproduce that (see beforeCount()).
   */
  readonly before: number;
  /** Counter after this request's hits (what INCRBY returned). */
  readonly after: number;
  /** The key was found in the local over-limit cache; before/after are then ignored. */
  readonly overLimitByLocalCache: boolean;
  readonly nowMs: number;
  /** NEAR_LIMIT_RATIO (upstream float32). */
  readonly nearLimitRatio: number;
}

/** The status of a descriptor that has no limit (no match, replaced, or a key of ''): OK and nothing else. */
export function noLimitStatus(): RateLimitResponse_DescriptorStatus {
  return {
    code: RateLimitResponse_Code.OK,
    currentLimit: undefined,
    limitRemaining: 0,
    durationUntilReset: undefined,
    quota: undefined,
  };
}

/** `after − hits` with upstream's uint64 wrap-around approximated by "larger than any limit". */
export function beforeCount(after: number, hits: number): number {
  return after >= hits ? after - hits : Number.MAX_SAFE_INTEGER;
}

export function decide(input: DecideInput): Decision {
  const { limit, hits, before, after } = input;
  const L = limit.requestsPerUnit;
  let code: RateLimitResponse_Code;
  let remaining = 0;
  let overLimit = 0;
  let nearLimit = 0;
  let withinLimit = 0;
  let overLimitWithLocalCache = 0;
  let shadowMode = 0;
  let cacheAsOverLimit = false;

  if (input.overLimitByLocalCache) {
    code = RateLimitResponse_Code.OVER_LIMIT;
    overLimit = hits;
    overLimitWithLocalCache = hits;
  } else {
    const N = nearLimitThreshold(L, input.nearLimitRatio);
    if (after > L) {
      code = RateLimitResponse_Code.OVER_LIMIT;
      if (before >= L) {
        overLimit = hits;
      } else {
        // This request crosses the limit: the part up to L was near-limit traffic, the rest is over.
        overLimit = after - L;
        nearLimit = Math.max(0, L - Math.max(N, before));
      }
      cacheAsOverLimit = true;
    } else {
      code = RateLimitResponse_Code.OK;
      remaining = L - after;
      if (after > N) nearLimit = before >= N ? hits : after - N;
      withinLimit = hits;
    }
  }

  if (code === RateLimitResponse_Code.OVER_LIMIT && limit.shadowMode) {
    shadowMode = input.overLimitByLocalCache || before >= L ? hits : after - L;
    code = RateLimitResponse_Code.OK;
  }

  return {
    status: {
      code,
      currentLimit: { name: limit.name, requestsPerUnit: L, unit: UNIT_NUMBER[limit.unit] },
      limitRemaining: remaining,
      durationUntilReset: { seconds: secondsUntilReset(Math.floor(input.nowMs / 1000), limit.unit), nanos: 0 },
      quota: undefined,
    },
    overLimit,
    nearLimit,
    withinLimit,
    overLimitWithLocalCache,
    shadowMode,
    cacheAsOverLimit,
  };
}
