// ShouldRateLimit: validation, limit selection with replaces, overall code, headers, shadow, metadata (§2.4–§2.7).
import type { RateLimitDescriptor } from '../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js';
import type { HeaderValue } from '../../proto/gen/envoy/config/core/v3/base.js';
import {
  RateLimitResponse_Code,
  type RateLimitRequest,
  type RateLimitResponse,
  type RateLimitResponse_DescriptorStatus,
} from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { Clock } from '../clock.js';
import type { RateLimit, RateLimitConfig } from '../config/types.js';
import { UNIT_BY_NUMBER } from '../config/units.js';
import { BackendError, ServiceError } from '../errors.js';
import { secondsUntilReset } from '../limiter/cache-key.js';
import type { RateLimiter } from '../limiter/fixed-window-limiter.js';
import type { Logger } from '../logger.js';
import { createRateLimitStatsCache, type RateLimitStatsCache } from '../stats/rate-limit-stats.js';
import type { StatsStore } from '../stats/stats-store.js';

/** The largest uint32: the remaining count reported for unlimited descriptors. */
export const UNLIMITED_REMAINING = 4294967295;

/** Service settings, read once by main. */
export interface RateLimitServiceSettings {
  /** SHADOW_MODE: an OVER_LIMIT overall code becomes OK (descriptor statuses keep OVER_LIMIT). */
  readonly shadowMode: boolean;
  /** QUOTA_MODE: every non-unlimited descriptor is treated as quota mode. */
  readonly quotaMode: boolean;
  /** RESPONSE_DYNAMIC_METADATA. */
  readonly responseDynamicMetadata: boolean;
  readonly responseHeaders: {
    /** LIMIT_RESPONSE_HEADERS_ENABLED. */
    readonly enabled: boolean;
    /** LIMIT_LIMIT_HEADER, default RateLimit-Limit. */
    readonly limitHeader: string;
    /** LIMIT_REMAINING_HEADER, default RateLimit-Remaining. */
    readonly remainingHeader: string;
    /** LIMIT_RESET_HEADER, default RateLimit-Reset. */
    readonly resetHeader: string;
  };
}

export interface RateLimitServiceDeps {
  /** The current config snapshot; undefined until a first load succeeded. Read once per request. */
  readonly getConfig: () => RateLimitConfig | undefined;
  readonly limiter: RateLimiter;
  readonly stats: StatsStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly settings: RateLimitServiceSettings;
  /** Where `<domain>.domain_not_found` counters are cached; pass the limiter's to share one cache. */
  readonly rateLimitStats?: RateLimitStatsCache;
}

export interface RateLimitService {
  /**
   * Decides one request. Over-limit is a normal response (overallCode OVER_LIMIT).
   * @throws ServiceError for a request the service refuses (empty domain or descriptors, no config, a bad
   *   override); counted as `ratelimit.service.call.should_rate_limit.service_error`.
   * @throws BackendError when the counter store fails; counted as `…should_rate_limit.redis_error`.
   */
  shouldRateLimit(request: RateLimitRequest): Promise<RateLimitResponse>;
}

const EMPTY_BUFFER = Buffer.alloc(0);

export function createRateLimitService(deps: RateLimitServiceDeps): RateLimitService {
  const { limiter, stats, clock, logger, settings } = deps;
  const serviceErrors = stats.counter('ratelimit.service.call.should_rate_limit.service_error');
  const redisErrors = stats.counter('ratelimit.service.call.should_rate_limit.redis_error');
  const globalShadowMode = stats.counter('ratelimit.service.global_shadow_mode');
  const headers = settings.responseHeaders;
  const rateLimitStats = deps.rateLimitStats ?? createRateLimitStatsCache(stats);

  return {
    async shouldRateLimit(request) {
      try {
        return await decideRequest(request);
      } catch (err) {
        if (err instanceof ServiceError) serviceErrors.inc();
        else if (err instanceof BackendError) redisErrors.inc();
        logger.debug('should_rate_limit failed', { error: (err as Error).message });
        throw err;
      }
    },
  };

  async function decideRequest(request: RateLimitRequest): Promise<RateLimitResponse> {
    if (request.domain === '') throw new ServiceError('empty_domain', 'rate limit domain must not be empty');
    if (request.descriptors.length === 0) {
      throw new ServiceError('empty_descriptors', 'rate limit descriptor list must not be empty');
    }
    const config = deps.getConfig();
    if (config === undefined) throw new ServiceError('no_config', 'no rate limit configuration loaded');

    const { limits, unlimited } = selectLimits(config, request, rateLimitStats);
    const backendStatuses = await limiter.doLimit(request, limits);
    const count = request.descriptors.length;

    const statuses = new Array<RateLimitResponse_DescriptorStatus>(count);
    let overall = RateLimitResponse_Code.OK;
    let quotaDescriptors = 0;
    let quotaOver = 0;
    let minimum: RateLimitResponse_DescriptorStatus | undefined;
    let minimumRemaining = UNLIMITED_REMAINING;

    for (let i = 0; i < count; i++) {
      const status = backendStatuses[i]!;
      // Upstream picks the header descriptor from the backend's statuses, before unlimited ones are replaced.
      if (headers.enabled && status.currentLimit !== undefined && status.limitRemaining < minimumRemaining) {
        minimum = status;
        minimumRemaining = status.limitRemaining;
      }
      if (unlimited[i]) {
        statuses[i] = {
          code: RateLimitResponse_Code.OK,
          currentLimit: undefined,
          limitRemaining: UNLIMITED_REMAINING,
          durationUntilReset: undefined,
          quota: undefined,
        };
        continue;
      }
      statuses[i] = status;
      const isQuota = settings.quotaMode || limits[i]?.quotaMode === true;
      const over = status.code === RateLimitResponse_Code.OVER_LIMIT;
      if (isQuota) {
        quotaDescriptors++;
        if (over) quotaOver++;
      } else if (over) {
        overall = RateLimitResponse_Code.OVER_LIMIT;
        minimum = status;
        minimumRemaining = 0;
      }
    }
    if (quotaDescriptors > 0 && quotaOver === quotaDescriptors) overall = RateLimitResponse_Code.OVER_LIMIT;

    const responseHeadersToAdd: HeaderValue[] = [];
    if (headers.enabled && minimum !== undefined && minimum.currentLimit !== undefined) {
      const unit = UNIT_BY_NUMBER.get(minimum.currentLimit.unit);
      responseHeadersToAdd.push(
        header(headers.limitHeader, String(minimum.currentLimit.requestsPerUnit)),
        header(headers.remainingHeader, String(minimum.limitRemaining)),
      );
      if (unit !== undefined) {
        responseHeadersToAdd.push(
          header(headers.resetHeader, String(secondsUntilReset(Math.floor(clock.nowMs() / 1000), unit))),
        );
      }
    }

    if (overall === RateLimitResponse_Code.OVER_LIMIT && settings.shadowMode) {
      overall = RateLimitResponse_Code.OK;
      globalShadowMode.inc();
    }

    return {
      overallCode: overall,
      statuses,
      responseHeadersToAdd,
      requestHeadersToAdd: [],
      rawBody: EMPTY_BUFFER,
      dynamicMetadata: settings.responseDynamicMetadata
        ? buildDynamicMetadata(request, limits, unlimited, statuses)
        : undefined,
      quota: undefined,
    };
  }
}

function header(key: string, value: string): HeaderValue {
  return { key, value, rawValue: EMPTY_BUFFER };
}

/**
 * §2.4 steps 2–3: the limit per descriptor, with unlimited ones and replaced ones (by name, from the `replaces`
 * of every matched limit, unlimited ones included) set to undefined. Counts domain_not_found per descriptor.
 */
export function selectLimits(
  config: RateLimitConfig,
  request: RateLimitRequest,
  stats: RateLimitStatsCache,
): { limits: (RateLimit | undefined)[]; unlimited: boolean[] } {
  const count = request.descriptors.length;
  const limits = new Array<RateLimit | undefined>(count);
  const unlimited = new Array<boolean>(count).fill(false);
  let replaced: Set<string> | undefined;
  const knownDomain = config.hasDomain(request.domain);
  for (let i = 0; i < count; i++) {
    if (!knownDomain) stats.domainNotFound(request.domain).inc();
    const limit = config.getLimit(request.domain, request.descriptors[i]!);
    limits[i] = limit;
    if (limit === undefined) continue;
    if (limit.replaces.length > 0) {
      replaced ??= new Set();
      for (const name of limit.replaces) replaced.add(name);
    }
    if (limit.unlimited) {
      unlimited[i] = true;
      limits[i] = undefined;
    }
  }
  if (replaced !== undefined) {
    for (let i = 0; i < count; i++) {
      const limit = limits[i];
      if (limit !== undefined && limit.name !== '' && replaced.has(limit.name)) limits[i] = undefined;
    }
  }
  return { limits, unlimited };
}

type JsonObject = { [key: string]: unknown };

/** §2.7: the response's dynamic metadata struct (ts-proto represents a Struct as a plain object). */
export function buildDynamicMetadata(
  request: RateLimitRequest,
  limits: readonly (RateLimit | undefined)[],
  unlimited: readonly boolean[],
  statuses: readonly RateLimitResponse_DescriptorStatus[],
): JsonObject {
  const out: JsonObject = {
    domain: request.domain,
    descriptors: request.descriptors.map(descriptorToStruct),
  };
  if (request.hitsAddend !== 0) out.hitsAddend = request.hitsAddend;
  const merged: JsonObject = {};
  for (let i = 0; i < statuses.length; i++) {
    if (unlimited[i] || statuses[i]!.code === RateLimitResponse_Code.OVER_LIMIT) continue;
    const metadata = limits[i]?.metadata;
    if (metadata !== undefined) mergeFirstWins(merged, metadata);
  }
  if (Object.keys(merged).length > 0) out.metadata = merged;
  return out;
}

function descriptorToStruct(descriptor: RateLimitDescriptor): JsonObject {
  const out: JsonObject = { entries: descriptor.entries.map((e) => `${e.key}=${e.value}`) };
  if (descriptor.limit !== undefined) out.limit = overrideToProtoText(descriptor.limit);
  if (descriptor.hitsAddend !== undefined) out.hitsAddend = descriptor.hitsAddend;
  return out;
}

/**
 * The override as Go's prototext String() prints it: fields with zero values omitted, `name:value` pairs
 * separated by one space (Go randomly adds a second space; consumers must not byte-compare).
 */
export function overrideToProtoText(limit: NonNullable<RateLimitDescriptor['limit']>): string {
  const parts: string[] = [];
  if (limit.requestsPerUnit !== 0) parts.push(`requests_per_unit:${limit.requestsPerUnit}`);
  if (limit.unit !== 0) {
    parts.push(`unit:${UNIT_BY_NUMBER.get(limit.unit) ?? String(limit.unit)}`);
  }
  return parts.join(' ');
}

const isPlainObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep merge where the first writer wins on conflicts and nested objects merge recursively. */
export function mergeFirstWins(target: JsonObject, source: Readonly<Record<string, unknown>>): void {
  for (const [key, value] of Object.entries(source)) {
    if (!(key in target)) {
      target[key] = isPlainObject(value) ? structuredClone(value) : value;
      continue;
    }
    const existing = target[key];
    if (isPlainObject(existing) && isPlainObject(value)) mergeFirstWins(existing, value);
  }
}
