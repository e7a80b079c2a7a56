// The limiter folder's public surface: the shared fixed-window limiter, its backends and the local cache.
export type { CounterBackend, CounterOp } from './backend.js';
export {
  createMemoryBackend,
  DEFAULT_MEMORY_MAX_KEYS,
  type MemoryBackend,
  type MemoryBackendOptions,
} from './backend-memory.js';
export { buildCacheKey, secondsUntilReset, windowStartSeconds } from './cache-key.js';
export { decide, noLimitStatus, type Decision, type DecideInput } from './decide.js';
export {
  createFixedWindowLimiter,
  hitsFor,
  type FixedWindowLimiterDeps,
  type FixedWindowSettings,
  type RateLimiter,
} from './fixed-window-limiter.js';
export { createLocalOverLimitCache, type LocalOverLimitCache, type LocalOverLimitCacheOptions } from './local-cache.js';
export { nearLimitThreshold } from './near-limit.js';
export {
  connectMemcacheBackend,
  DEFAULT_MEMCACHE_TIMEOUT_MS,
  type MemcacheBackend,
  type MemcacheBackendOptions,
  type MemcacheConnectionSettings,
} from './backend-memcache.js';
export {
  connectRedisBackend,
  type RedisBackend,
  type RedisBackendOptions,
  type RedisClientOptions,
} from './backend-redis.js';
export { exponentialBackoff, type BackoffOptions } from './backoff.js';
export { parseRedisAuth } from './redis-pool.js';
export { buildRedisTlsOptions, type RedisTlsOptions } from './redis-tls.js';
