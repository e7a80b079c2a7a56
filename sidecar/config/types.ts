// The loaded, validated rate limit configuration as the rest of the sidecar (and the operator) sees it.
import type { RateLimitDescriptor } from '../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js';
import type { RateLimitUnitName } from './units.js';

/** A limit selected for one request descriptor (upstream `config.RateLimit`). Immutable. */
export interface RateLimit {
  /**
   * Stats key after `ratelimit.service.rate_limit.` (not yet sanitised), e.g. `domain.key1_value1.subkey1`;
   * for detailed_metric / value_to_metric matches it carries the request's values (spec §2.13).
   */
  readonly fullKey: string;
  readonly requestsPerUnit: number;
  /**
   * The window unit. For an `unlimited` limit upstream's unit is always UNKNOWN; such a limit is never counted, so
   * this field then holds the placeholder 'SECOND' (and /rlconfig prints UNKNOWN).
   */
  readonly unit: RateLimitUnitName;
  /** `rate_limit.name`, or '' when unnamed; returned as `currentLimit.name` and targeted by `replaces`. */
  readonly name: string;
  readonly unlimited: boolean;
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  /** Names of the limits this one replaces (may be empty). */
  readonly replaces: readonly string[];
  /** The rule's `metadata` map (JSON values), copied into response dynamic metadata; undefined when absent. */
  readonly metadata: Readonly<Record<string, unknown>> | undefined;
  /**
   * share_threshold: for entry index i, the wildcard pattern (value part, e.g. `files/*`) that replaces the
   * request value in the cache key; undefined (whole array or an element) keeps the request value.
   */
  readonly shareThresholdKeyPatterns: readonly (string | undefined)[] | undefined;
  /** True when the limit came from the request's `descriptor.limit` override rather than from a rule. */
  readonly isOverride: boolean;
}

export interface RateLimitConfig {
  /** Domains in load order. */
  readonly domains: readonly string[];
  hasDomain(domain: string): boolean;
  /**
   * The limit that applies to one request descriptor (spec §2.12), or undefined when none does (no match,
   * whitelist node, or unknown domain: the caller counts `domain_not_found` using hasDomain).
   * A `descriptor.limit` override is honoured even without a matching rule.
   * @throws ServiceError code 'invalid_override' when an override's unit is UNKNOWN or not a defined enum value.
   */
  getLimit(domain: string, descriptor: RateLimitDescriptor): RateLimit | undefined;
  /** The `/rlconfig` dump: one line per limit, `<fullKey>: unit=<UNIT> requests_per_unit=<n>, shadow_mode: <b>, quota_mode: <b>`. */
  dump(): string;
}
