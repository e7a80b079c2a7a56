// The Redis backend against real redis-servers: contract, keys/TTLs, per-second split, unix socket, auth, failures.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { ManualClock } from '../../../../sidecar/clock.js';
import { BackendError } from '../../../../sidecar/errors.js';
import type { CounterOp } from '../../../../sidecar/limiter/backend.js';
import {
  connectRedisBackend,
  type RedisBackend,
  type RedisBackendOptions,
  type RedisClientOptions,
} from '../../../../sidecar/limiter/backend-redis.js';
import { createFixedWindowLimiter } from '../../../../sidecar/limiter/fixed-window-limiter.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { createRateLimitStatsCache } from '../../../../sidecar/stats/rate-limit-stats.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { startRedisServer, type RedisServer } from '../../../support/redis-server.js';
import { descriptor, makeLimit, request } from '../../../support/rate-limit-fakes.js';
import { counterBackendContract } from './counter-backend-contract.js';
import { controlledRedis, type ControlledRedis } from './redis-process.js';

const tcp = (url: string, fields: Partial<RedisClientOptions> = {}): RedisClientOptions => ({
  type: 'single',
  socketType: 'tcp',
  url,
  poolSize: 2,
  auth: '',
  timeoutMs: 500,
  ...fields,
});

const quickStartup = { initialIntervalMs: 20, maxIntervalMs: 100, maxElapsedMs: 0 };

function options(main: RedisClientOptions, fields: Partial<RedisBackendOptions> = {}): RedisBackendOptions {
  return {
    main,
    startup: quickStartup,
    healthCheckActiveConnection: false,
    stats: new StatsStore(),
    logger: silentLogger,
    ...fields,
  };
}

const op = (key: string, hits = 1, ttlSeconds = 60, perSecond = false): CounterOp => ({
  key,
  hits,
  ttlSeconds,
  perSecond,
});

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries fn until it resolves (bounded by the mocha timeout, no wall-clock assertion). */
async function eventually<T>(fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch {
      await sleep(50);
    }
  }
}

describe('redis backend', function () {
  this.timeout(20000);
  let server: RedisServer;
  const raws: Redis[] = [];
  const raw = (port: number, fields: Record<string, string> = {}): Redis => {
    const r = new Redis({ port, host: '127.0.0.1', retryStrategy: () => null, ...fields });
    r.on('error', () => undefined);
    raws.push(r);
    return r;
  };
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await Promise.all(raws.map((r) => r.quit().catch(() => r.disconnect())));
    await server?.stop();
  });

  counterBackendContract('redis backend (tcp, pool 2)', {
    create: () => connectRedisBackend(options(tcp(server.url))),
  });

  describe('Redis specifics', () => {
    let backend: RedisBackend | undefined;
    afterEach(async () => {
      await backend?.close();
      backend = undefined;
    });

    it('stores CACHE_KEY_PREFIX keys with TTL = window + jitter in [0, max)', async () => {
      backend = await connectRedisBackend(options(tcp(server.url)));
      const clock = new ManualClock(1_700_000_000_000);
      const limiter = createFixedWindowLimiter({
        backend,
        localCache: undefined,
        stats: createRateLimitStatsCache(new StatsStore()),
        clock,
        settings: {
          cacheKeyPrefix: 'pfx:',
          nearLimitRatio: 0.8,
          expirationJitterMaxSeconds: 300,
          stopCacheKeyIncrementWhenOverlimit: false,
        },
      });
      const req = request('dom', [descriptor({ k: 'v' }), descriptor({ h: 'x' })], 2);
      await limiter.doLimit(req, [
        makeLimit({ requestsPerUnit: 5, unit: 'MINUTE' }),
        makeLimit({ requestsPerUnit: 5, unit: 'HOUR' }),
      ]);
      const r = raw(server.port);
      expect((await r.keys('pfx:*')).sort()).to.deep.equal(['pfx:dom_h_x_1699999200', 'pfx:dom_k_v_1699999980']);
      expect(await r.get('pfx:dom_k_v_1699999980')).to.equal('2');
      const ttlMinute = await r.ttl('pfx:dom_k_v_1699999980');
      const ttlHour = await r.ttl('pfx:dom_h_x_1699999200');
      expect(ttlMinute).to.be.within(59, 359);
      expect(ttlHour).to.be.within(3599, 3899);
    });

    it('sends SECOND-unit keys to the per-second Redis and the rest to the main one', async () => {
      const second = await startRedisServer();
      try {
        const stats = new StatsStore();
        backend = await connectRedisBackend(
          options(tcp(server.url), { perSecond: tcp(second.url, { poolSize: 1 }), stats }),
        );
        const counts = await backend.increment([
          op('split:main', 1),
          op('split:second', 2, 1, true),
          op('split:main', 3),
        ]);
        expect(counts).to.deep.equal([1, 2, 4]);
        expect(await raw(server.port).get('split:second')).to.equal(null);
        expect(await raw(second.port).get('split:second')).to.equal('2');
        expect(await raw(second.port).get('split:main')).to.equal(null);
        expect(await backend.get([op('split:second', 0, 1, true), op('split:main')])).to.deep.equal([2, 4]);
        expect(stats.gauge('ratelimit.redis_pool.cx_active').value()).to.equal(2);
        expect(stats.gauge('ratelimit.redis_per_second_pool.cx_active').value()).to.equal(1);
        expect(backend.activeConnections()).to.deep.equal({ main: 2, perSecond: 1 });
      } finally {
        await backend?.close();
        backend = undefined;
        await second.stop();
      }
    });

    it('connects over a unix socket', async () => {
      backend = await connectRedisBackend(options(tcp(server.unixSocket, { socketType: 'unix' })));
      expect(await backend.increment([op('unix:key', 7)])).to.deep.equal([7]);
      expect(await raw(server.port).get('unix:key')).to.equal('7');
    });

    it('authenticates with requirepass, and times out at startup with a wrong password', async () => {
      const secured = await startRedisServer(['--requirepass', 's3cret']);
      try {
        backend = await connectRedisBackend(options(tcp(secured.url, { auth: 's3cret' })));
        expect(await backend.increment([op('auth:key')])).to.deep.equal([1]);
        const err = await rejection(
          connectRedisBackend(
            options(tcp(secured.url, { auth: 'wrong' }), { startup: { ...quickStartup, maxElapsedMs: 200 } }),
          ),
        );
        expect(err).to.be.instanceOf(BackendError);
        expect(err.message).to.match(/^timed out waiting for Redis connection: .*(WRONGPASS|invalid)/i, err.message);
      } finally {
        await backend?.close();
        backend = undefined;
        await secured.stop();
      }
    });

    it('authenticates as an ACL user (user:password, split at the first colon)', async () => {
      const acl = await startRedisServer([
        '--user',
        'default',
        'off',
        '--user',
        'alice',
        'on',
        '>pa:ss',
        '~*',
        '+@all',
      ]);
      try {
        backend = await connectRedisBackend(options(tcp(acl.url, { auth: 'alice:pa:ss' })));
        expect(await backend.increment([op('acl:key', 2)])).to.deep.equal([2]);
      } finally {
        await backend?.close();
        backend = undefined;
        await acl.stop();
      }
    });

    it('rejects a bad sentinel URL, a bad address and a bad pool size clearly', async () => {
      const sentinel = await rejection(connectRedisBackend(options(tcp('mymaster', { type: 'sentinel' }))));
      expect(sentinel.message).to.contain('Expected master name and a list of urls for the sentinels');
      const bad = await rejection(connectRedisBackend(options(tcp('localhost'))));
      expect(bad.message).to.contain("invalid redis address 'localhost'");
      const pool = await rejection(connectRedisBackend(options(tcp(server.url, { poolSize: 0 }))));
      expect(pool.message).to.contain('pool size');
    });
  });

  describe('failures and recovery', () => {
    let redis: ControlledRedis;
    let backend: RedisBackend | undefined;
    beforeEach(async () => {
      redis = await controlledRedis();
    });
    afterEach(async () => {
      await backend?.close();
      backend = undefined;
      await redis.dispose();
    });

    it('Redis stopped mid-test → BackendError at once; restarted → the same backend recovers; health follows', async () => {
      await redis.start();
      const stats = new StatsStore();
      const health: boolean[] = [];
      backend = await connectRedisBackend(
        options(tcp(redis.url, { timeoutMs: 2000 }), {
          stats,
          healthCheckActiveConnection: true,
          onHealthChange: (h) => health.push(h),
        }),
      );
      expect(await backend.increment([op('r:k')])).to.deep.equal([1]);
      expect(stats.counter('ratelimit.redis_pool.cx_total').value()).to.equal(2);
      await redis.stop();
      const err = await rejection(eventuallyFails(() => backend!.increment([op('r:k')])));
      expect(err).to.be.instanceOf(BackendError);
      await eventually(async () => expect(backend!.activeConnections().main).to.equal(0));
      expect(health).to.deep.equal([true, false]);
      expect(stats.counter('ratelimit.redis_pool.cx_local_close').value()).to.equal(2);
      await redis.start();
      const counts = await eventually(() => backend!.increment([op('r:k')]));
      expect(counts).to.deep.equal([1]);
      expect(health).to.deep.equal([true, false, true]);
      expect(stats.counter('ratelimit.redis_pool.cx_total').value()).to.be.at.least(3);
    });

    it('a stuck (SIGSTOPped) Redis gives a BackendError after the timeout, never a hang', async () => {
      await redis.start();
      backend = await connectRedisBackend(options(tcp(redis.url, { timeoutMs: 300 })));
      redis.pause();
      try {
        const err = await rejection(backend.increment([op('s:k')]));
        expect(err).to.be.instanceOf(BackendError);
        expect(err.message).to.match(/timed out/i);
      } finally {
        redis.resume();
      }
      expect(await eventually(() => backend!.increment([op('s:k2')]))).to.deep.equal([1]);
    });

    it('startup retries until Redis comes up, then reports healthy', async () => {
      const health: boolean[] = [];
      const pending = connectRedisBackend(options(tcp(redis.url), { onHealthChange: (h) => health.push(h) }));
      let settled = false;
      void pending.then(
        () => (settled = true),
        () => (settled = true),
      );
      await sleep(300);
      expect(settled).to.equal(false);
      expect(health).to.deep.equal([]);
      await redis.start();
      backend = await pending;
      expect(health).to.deep.equal([true]);
      expect(await backend.increment([op('late:k')])).to.deep.equal([1]);
    });

    it('startup gives up after maxElapsedMs with a clear BackendError, or when aborted', async () => {
      const err = await rejection(
        connectRedisBackend(options(tcp(redis.url), { startup: { ...quickStartup, maxElapsedMs: 150 } })),
      );
      expect(err).to.be.instanceOf(BackendError);
      expect(err.message).to.match(/^timed out waiting for Redis connection/);
      const controller = new AbortController();
      const aborted = connectRedisBackend(options(tcp(redis.url), { signal: controller.signal }));
      setTimeout(() => controller.abort(), 100);
      const abortErr = await rejection(aborted);
      expect(abortErr.message).to.equal('redis startup connect aborted');
    });
  });
});

/** Calls fn until it rejects (the first calls may still see the old connection closing) and returns that. */
async function eventuallyFails(fn: () => Promise<unknown>): Promise<never> {
  for (;;) {
    await fn();
    await sleep(20);
  }
}
