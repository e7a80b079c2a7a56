// Ad-hoc measurements quoted in docs/backends.md; not a mocha test. Run:
//   node --expose-gc --import tsx test/integration/sidecar/backends/backends.bench.ts
import { ManualClock, systemClock } from '../../../../sidecar/clock.js';
import { createMemoryBackend } from '../../../../sidecar/limiter/backend-memory.js';
import { connectRedisBackend } from '../../../../sidecar/limiter/backend-redis.js';
import { createFixedWindowLimiter } from '../../../../sidecar/limiter/fixed-window-limiter.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { createRateLimitService } from '../../../../sidecar/service/rate-limit-service.js';
import { createRateLimitStatsCache } from '../../../../sidecar/stats/rate-limit-stats.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { startRedisServer } from '../../../support/redis-server.js';
import { descriptor, fakeConfig, makeLimit, request } from '../../../support/rate-limit-fakes.js';

async function memoryBytesPerKey(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run node with --expose-gc');
  const backend = createMemoryBackend({ clock: new ManualClock(Date.now()), maxKeys: 1_000_000 });
  const count = 200_000;
  // Measured from before the keys exist, so the key strings the store retains are included.
  gc();
  const before = process.memoryUsage().heapUsed;
  const ops = Array.from({ length: count }, (_, i) => ({
    key: `ratelimit-domain_remote_address_10.${i % 250}.${(i / 250) | 0}.7_1700000000`,
    hits: 1,
    ttlSeconds: 60 + (i % 300),
    perSecond: false,
  }));
  await backend.increment(ops);
  ops.length = 0;
  gc();
  const perKey = (process.memoryUsage().heapUsed - before) / count;
  console.log(`memory backend: ${Math.round(perKey)} bytes of heap per ~55-character key (${count} keys)`);
  await backend.close();
}

async function inProcessService(): Promise<void> {
  const stats = new StatsStore();
  const rateLimitStats = createRateLimitStatsCache(stats);
  const limiter = createFixedWindowLimiter({
    backend: createMemoryBackend({ clock: systemClock }),
    localCache: undefined,
    stats: rateLimitStats,
    clock: systemClock,
    settings: {
      cacheKeyPrefix: '',
      nearLimitRatio: 0.8,
      expirationJitterMaxSeconds: 300,
      stopCacheKeyIncrementWhenOverlimit: false,
    },
  });
  const config = fakeConfig('d', {
    'a=1': makeLimit({ requestsPerUnit: 1e9, unit: 'SECOND', fullKey: 'd.a_1' }),
    'b=2': makeLimit({ requestsPerUnit: 1e9, unit: 'MINUTE', fullKey: 'd.b_2' }),
  });
  const service = createRateLimitService({
    getConfig: () => config,
    limiter,
    stats,
    clock: systemClock,
    logger: silentLogger,
    rateLimitStats,
    settings: {
      shadowMode: false,
      quotaMode: false,
      responseDynamicMetadata: false,
      responseHeaders: { enabled: true, limitHeader: 'L', remainingHeader: 'R', resetHeader: 'Z' },
    },
  });
  const req = request('d', [descriptor({ a: '1' }), descriptor({ b: '2' })]);
  const n = 200_000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await service.shouldRateLimit(req);
  const seconds = (performance.now() - t0) / 1000;
  console.log(`service + memory backend in process: ${Math.round(n / seconds)} calls/s (2 descriptors, headers on)`);
  await limiter.close();
}

async function redisPoolSizes(): Promise<void> {
  const server = await startRedisServer();
  try {
    for (const poolSize of [1, 4, 10, 1, 4, 10]) {
      const backend = await connectRedisBackend({
        main: { type: 'single', socketType: 'tcp', url: server.url, poolSize, auth: '', timeoutMs: 5000 },
        startup: { initialIntervalMs: 100, maxIntervalMs: 100, maxElapsedMs: 0 },
        healthCheckActiveConnection: false,
        stats: new StatsStore(),
        logger: silentLogger,
      });
      const concurrency = 64;
      const total = 40_000;
      let started = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async (_, worker) => {
          while (started < total) {
            started++;
            await backend.increment([
              { key: `bench_${worker}_${started % 100}`, hits: 1, ttlSeconds: 60, perSecond: false },
              { key: `bench2_${worker}`, hits: 1, ttlSeconds: 3600, perSecond: false },
            ]);
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      console.log(`redis pool size ${poolSize}: ${Math.round(total / seconds)} requests/s (64 concurrent, 2 keys)`);
      await backend.close();
    }
  } finally {
    await server.stop();
  }
}

await memoryBytesPerKey();
if (!process.argv.includes('--memory-only')) {
  await inProcessService();
  await redisPoolSizes();
}
