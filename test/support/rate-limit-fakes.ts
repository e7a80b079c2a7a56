// Hand-built RateLimit objects, descriptors and a tiny RateLimitConfig fake for limiter/service unit tests.
import type { RateLimitDescriptor } from '../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js';
import type { RateLimitRequest } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { RateLimit, RateLimitConfig } from '../../sidecar/config/types.js';

export function makeLimit(fields: Partial<RateLimit> & Pick<RateLimit, 'requestsPerUnit' | 'unit'>): RateLimit {
  return {
    fullKey: 'domain.key_value',
    name: '',
    unlimited: false,
    shadowMode: false,
    quotaMode: false,
    replaces: [],
    metadata: undefined,
    shareThresholdKeyPatterns: undefined,
    isOverride: false,
    ...fields,
  };
}

/** A descriptor from `k=v` pairs, with an optional per-descriptor hits_addend. */
export function descriptor(entries: Readonly<Record<string, string>>, hitsAddend?: number): RateLimitDescriptor {
  return {
    entries: Object.entries(entries).map(([key, value]) => ({ key, value })),
    limit: undefined,
    hitsAddend,
  };
}

export function request(domain: string, descriptors: RateLimitDescriptor[], hitsAddend = 0): RateLimitRequest {
  return { domain, descriptors, hitsAddend };
}

/**
 * A config that answers getLimit by the descriptor's entries joined as `k=v,k2=v2` (no wildcard logic: the
 * matcher is the config engineer's and is tested there).
 */
export function fakeConfig(domain: string, limits: Readonly<Record<string, RateLimit>>): RateLimitConfig {
  return {
    domains: [domain],
    hasDomain: (d) => d === domain,
    getLimit(d, desc) {
      if (d !== domain) return undefined;
      return limits[desc.entries.map((e) => `${e.key}=${e.value}`).join(',')];
    },
    dump: () => '',
  };
}
