// The memcache backend against two real memcached nodes: placement, §2.10 read-then-increment, fail-open, stats.
import { expect } from 'chai';
import net from 'node:net';
import { crc32 } from 'node:zlib';
import { RateLimitResponse_Code } from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { ManualClock } from '../../../../sidecar/clock.js';
import { BackendError } from '../../../../sidecar/errors.js';
import type { CounterOp } from '../../../../sidecar/limiter/backend.js';
import {
  connectMemcacheBackend,
  type MemcacheBackend,
  type MemcacheConnectionSettings,
} from '../../../../sidecar/limiter/backend-memcache.js';
import { createFixedWindowLimiter, type RateLimiter } from '../../../../sidecar/limiter/fixed-window-limiter.js';
import { createLocalOverLimitCache } from '../../../../sidecar/limiter/local-cache.js';
import { createMemcacheClient } from '../../../../sidecar/limiter/memcache-client.js';
import { MemcacheError } from '../../../../sidecar/limiter/memcache-error.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { createRateLimitStatsCache } from '../../../../sidecar/stats/rate-limit-stats.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { startMemcachedServer, type MemcachedServer } from '../../../support/memcached-server.js';
import { descriptor, makeLimit, request } from '../../../support/rate-limit-fakes.js';
import { readDirect } from './memcache-direct.js';

// Generous: the shared 2-core machine can stall for far longer than gomemcache's 100 ms default.
const TIMEOUT_MS = 3000;

const settingsFor = (hostPort: readonly string[], maxIdleConns = 2): MemcacheConnectionSettings => ({
  hostPort,
  srv: '',
  srvRefreshMs: 0,
  maxIdleConns,
  tls: false,
  tlsClientCert: '',
  tlsClientKey: '',
  tlsCaCert: '',
  tlsSkipHostnameVerification: false,
});

const counter = (store: StatsStore, name: string): number => store.counter(name).value();
const MC = 'ratelimit.memcache.';

describe('memcache backend (two real memcached nodes)', () => {
  let nodes: MemcachedServer[];
  let unique = 0;
  let prefix: string;
  let store: StatsStore;
  let clock: ManualClock;
  let backend: MemcacheBackend | undefined;

  before(async () => {
    nodes = await Promise.all([startMemcachedServer(), startMemcachedServer()]);
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
  });
  beforeEach(() => {
    prefix = `t${++unique}_${Date.now()}_`;
    store = new StatsStore();
    clock = new ManualClock(Date.now());
  });
  afterEach(async () => {
    await backend?.close();
    backend = undefined;
  });

  const connect = async (maxIdleConns = 2): Promise<MemcacheBackend> => {
    backend = await connectMemcacheBackend({
      settings: settingsFor(
        nodes.map((n) => n.address),
        maxIdleConns,
      ),
      stats: store,
      logger: silentLogger,
      timeoutMs: TIMEOUT_MS,
      clock,
    });
    return backend;
  };

  const limiterOn = (b: MemcacheBackend, options: { localCache?: boolean; jitter?: number } = {}): RateLimiter =>
    createFixedWindowLimiter({
      backend: b,
      localCache: options.localCache
        ? createLocalOverLimitCache({ maxBytes: 1 << 20, clock, stats: store })
        : undefined,
      stats: createRateLimitStatsCache(store),
      clock,
      settings: {
        cacheKeyPrefix: prefix,
        nearLimitRatio: 0.8,
        expirationJitterMaxSeconds: options.jitter ?? 0,
        stopCacheKeyIncrementWhenOverlimit: false,
      },
    });

  const windowStart = (divider: number): number => Math.floor(clock.nowMs() / 1000 / divider) * divider;
  const nodeFor = (key: string): number => crc32(Buffer.from(key)) % nodes.length;

  it('counts a 5/min limit: statuses from the value read, increments land on the crc32 node only', async () => {
    const limiter = limiterOn(await connect());
    const limit = makeLimit({ requestsPerUnit: 5, unit: 'MINUTE', fullKey: 'd.user' });
    const users = Array.from({ length: 8 }, (_, i) => `u${i}`);
    const keys = users.map((u) => `${prefix}d_user_${u}_${windowStart(60)}`);
    // Both nodes must be used for the placement check to mean anything.
    expect(new Set(keys.map(nodeFor)).size).to.equal(2);

    const req = request(
      'd',
      users.map((u) => descriptor({ user: u })),
    );
    const limits = users.map(() => limit);
    for (let i = 1; i <= 5; i++) {
      const statuses = await limiter.doLimit(req, limits);
      for (const s of statuses) {
        expect(s.code).to.equal(RateLimitResponse_Code.OK);
        expect(s.limitRemaining).to.equal(5 - i);
      }
      await backend!.flush();
    }
    const sixth = await limiter.doLimit(req, limits);
    expect(sixth.map((s) => s.code)).to.deep.equal(users.map(() => RateLimitResponse_Code.OVER_LIMIT));
    await backend!.flush();

    for (const key of keys) {
      const owner = nodeFor(key);
      const onOwner = await readDirect(nodes[owner]!.port, key);
      expect(onOwner?.value, key).to.equal('6');
      expect(onOwner!.ttlSeconds).to.be.within(1, 60);
      expect(await readDirect(nodes[1 - owner]!.port, key), key).to.equal(undefined);
    }
    expect(counter(store, MC + 'multiget.__code=success')).to.equal(6);
    expect(counter(store, MC + 'multiget.__code=error')).to.equal(0);
    expect(counter(store, MC + 'keys_requested')).to.equal(6 * 8);
    expect(counter(store, MC + 'keys_found')).to.equal(5 * 8);
    // First request: incr misses, add creates; later ones: incr succeeds.
    expect(counter(store, MC + 'increment.__code=miss')).to.equal(8);
    expect(counter(store, MC + 'add.__code=success')).to.equal(8);
    expect(counter(store, MC + 'increment.__code=success')).to.equal(5 * 8);
    expect(store.counter('ratelimit.service.rate_limit.d.user.over_limit').value()).to.equal(8);
  });

  it('decides before incrementing: concurrent requests may overshoot (documented), the count is exact', async () => {
    const limiter = limiterOn(await connect());
    const limit = makeLimit({ requestsPerUnit: 1, unit: 'HOUR', fullKey: 'd.k' });
    const req = request('d', [descriptor({ k: 'race' })]);
    const [a, b] = await Promise.all([limiter.doLimit(req, [limit]), limiter.doLimit(req, [limit])]);
    // Both read before either increment landed (the documented overshoot: two OKs for a limit of 1) or the second
    // read saw the first increment; which one happens depends on scheduling, so only the first answer is fixed.
    const codes = [a[0]!.code, b[0]!.code].sort();
    expect(codes[0]).to.equal(RateLimitResponse_Code.OK);
    expect([RateLimitResponse_Code.OK, RateLimitResponse_Code.OVER_LIMIT]).to.include(codes[1]);
    await backend!.flush();
    const key = `${prefix}d_k_race_${windowStart(3600)}`;
    // Whichever way the two increments interleaved (a lost add race ends in NOT_STORED + incr), one add won.
    expect((await readDirect(nodes[nodeFor(key)]!.port, key))?.value).to.equal('2');
    expect(counter(store, MC + 'add.__code=success')).to.equal(1);
    expect((await limiter.doLimit(req, [limit]))[0]!.code).to.equal(RateLimitResponse_Code.OVER_LIMIT);
  });

  it('sets the TTL only on creation: window + jitter; above 30 days as an absolute time', async () => {
    const b = await connect();
    const key = `${prefix}ttl`;
    const month = `${prefix}month`;
    expect(await b.increment([op(key, 2, 70), op(month, 1, 2592000 + 299)])).to.deep.equal([2, 1]);
    await b.flush();
    const stored = await readDirect(nodes[nodeFor(key)]!.port, key);
    expect(stored?.value).to.equal('2');
    expect(stored!.ttlSeconds).to.be.within(60, 70);
    // memcached reads a relative 2592299 as a date in 1970 (expired at once); we send now + ttl instead.
    const monthly = await readDirect(nodes[nodeFor(month)]!.port, month);
    expect(monthly?.value).to.equal('1');
    expect(monthly!.ttlSeconds).to.be.within(2592000, 2592299);
  });

  it('a key over 250 characters fails open: the whole multiget errors, every key reads 0, others still count', async () => {
    const limiter = limiterOn(await connect());
    const limit = makeLimit({ requestsPerUnit: 3, unit: 'MINUTE', fullKey: 'd.k' });
    const long = 'v'.repeat(260);
    const req = request('d', [descriptor({ k: 'short' }), descriptor({ k: long })]);
    for (let i = 0; i < 5; i++) {
      const statuses = await limiter.doLimit(req, [limit, limit]);
      // Fail open: both keys read as 0, so both stay OK with remaining 2 (upstream behaviour).
      expect(statuses.map((s) => [s.code, s.limitRemaining])).to.deep.equal([
        [RateLimitResponse_Code.OK, 2],
        [RateLimitResponse_Code.OK, 2],
      ]);
      await backend!.flush();
    }
    expect(counter(store, MC + 'multiget.__code=error')).to.equal(5);
    expect(counter(store, MC + 'increment.__code=error')).to.equal(5);
    const shortKey = `${prefix}d_k_short_${windowStart(60)}`;
    expect((await readDirect(nodes[nodeFor(shortKey)]!.port, shortKey))?.value).to.equal('5');
    const alone = await limiter.doLimit(request('d', [descriptor({ k: 'short' })]), [limit]);
    expect(alone[0]!.code).to.equal(RateLimitResponse_Code.OVER_LIMIT);
  });

  it('whitespace or control characters in a key also fail open (memcache keys are printable ASCII)', async () => {
    const b = await connect();
    expect(await b.increment([op(`${prefix}has space`, 1), op(`${prefix}ok`, 1)])).to.deep.equal([1, 1]);
    await b.flush();
    expect(counter(store, MC + 'multiget.__code=error')).to.equal(1);
    expect(counter(store, MC + 'increment.__code=error')).to.equal(1);
    expect(await b.increment([op(`${prefix}ok`, 1)])).to.deep.equal([2]);
  });

  it('the local over-limit cache stops memcache traffic for a key over its limit', async () => {
    const limiter = limiterOn(await connect(), { localCache: true });
    const limit = makeLimit({ requestsPerUnit: 2, unit: 'MINUTE', fullKey: 'd.k' });
    const req = request('d', [descriptor({ k: 'hot' })]);
    for (let i = 0; i < 3; i++) {
      await limiter.doLimit(req, [limit]);
      await backend!.flush();
    }
    const requested = counter(store, MC + 'keys_requested');
    const statuses = await limiter.doLimit(req, [limit]);
    expect(statuses[0]!.code).to.equal(RateLimitResponse_Code.OVER_LIMIT);
    expect(counter(store, MC + 'keys_requested')).to.equal(requested);
    expect(store.counter('ratelimit.service.rate_limit.d.k.over_limit_with_local_cache').value()).to.equal(1);
  });

  it('get reads current counts (0 when missing) without incrementing', async () => {
    const b = await connect();
    await b.increment([op(`${prefix}g`, 4)]);
    await b.flush();
    expect(await b.get([op(`${prefix}g`), op(`${prefix}missing`)])).to.deep.equal([4, 0]);
    expect(await b.get([op(`${prefix}g`)])).to.deep.equal([4]);
  });

  it('keeps at most MEMCACHE_MAX_IDLE_CONNS idle connections per node', async () => {
    for (const maxIdle of [2, 0]) {
      const b = await connect(maxIdle);
      await Promise.all(Array.from({ length: 20 }, (_, i) => b.increment([op(`${prefix}idle${maxIdle}_${i}`, 1)])));
      await b.flush();
      expect(counter(store, MC + 'add.__code=success')).to.equal(20 * (maxIdle === 2 ? 1 : 2));
      expect(counter(store, MC + 'increment.__code=error')).to.equal(0);
      const client = createMemcacheClient({
        servers: [nodes[0]!.address],
        maxIdleConns: maxIdle,
        timeoutMs: TIMEOUT_MS,
      });
      await Promise.all(Array.from({ length: 10 }, (_, i) => client.increment(`${prefix}x${i}`, 1).catch(() => 0)));
      expect(client.idleConnections().get(nodes[0]!.address)).to.equal(maxIdle);
      client.close();
      await b.close();
      backend = undefined;
    }
  });

  it('a node down fails open for its keys (error stats), the other node still counts; recovers on restart', async () => {
    const b = await connect();
    const keys = Array.from({ length: 12 }, (_, i) => `${prefix}down${i}`);
    const onFirst = keys.filter((k) => nodeFor(k) === 0);
    const onSecond = keys.filter((k) => nodeFor(k) === 1);
    expect(onFirst.length).to.be.greaterThan(0);
    expect(onSecond.length).to.be.greaterThan(0);
    await b.increment(keys.map((k) => op(k, 3)));
    await b.flush();

    await nodes[1]!.stop();
    try {
      const counts = await b.increment(keys.map((k) => op(k, 1)));
      await b.flush();
      // Keys on the live node read 3 (+1); keys on the stopped node read 0 (+1): gomemcache keeps partial results.
      expect(counts).to.deep.equal(keys.map((k) => (nodeFor(k) === 0 ? 4 : 1)));
      expect(counter(store, MC + 'multiget.__code=error')).to.equal(1);
      expect(counter(store, MC + 'increment.__code=error')).to.equal(onSecond.length);
    } finally {
      await nodes[1]!.start();
    }
    const after = await b.increment(keys.map((k) => op(k, 1)));
    expect(after).to.deep.equal(keys.map((k) => (nodeFor(k) === 0 ? 5 : 1)));
    await b.flush();
    expect((await readDirect(nodes[1]!.port, onSecond[0]!))?.value).to.equal('1');
  });

  it('a node that accepts but never answers times out: fail open with code timeout', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      const client = createMemcacheClient({ servers: [`127.0.0.1:${port}`], maxIdleConns: 2, timeoutMs: 200 });
      const { items, error } = await client.getMulti(['a', 'b']);
      expect(items.size).to.equal(0);
      expect(error).to.be.instanceOf(MemcacheError);
      expect(error!.code).to.equal('timeout');
      let caught: unknown;
      await client.increment('a', 1).catch((err: unknown) => (caught = err));
      expect(caught).to.be.instanceOf(MemcacheError).with.property('code', 'timeout');
      client.close();

      backend = await connectMemcacheBackend({
        settings: settingsFor([`127.0.0.1:${port}`]),
        stats: store,
        logger: silentLogger,
        timeoutMs: 200,
      });
      expect(await backend.increment([op('k', 2)])).to.deep.equal([2]);
      await backend.flush();
      expect(counter(store, MC + 'multiget.__code=error')).to.equal(1);
      expect(counter(store, MC + 'increment.__code=error')).to.equal(1);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('refused connections fail open too (connection code)', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const client = createMemcacheClient({ servers: [`127.0.0.1:${port}`], maxIdleConns: 2, timeoutMs: TIMEOUT_MS });
    const { error } = await client.getMulti(['a']);
    expect(error).to.be.instanceOf(MemcacheError).with.property('code', 'connection');
    client.close();
  });

  it('close waits for pending increments; afterwards calls reject with BackendError', async () => {
    const b = await connect();
    const key = `${prefix}closing`;
    await b.increment([op(key, 7)]);
    await b.close();
    expect((await readDirect(nodes[nodeFor(key)]!.port, key))?.value).to.equal('7');
    let caught: unknown;
    await b.increment([op(key, 1)]).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(BackendError);
    await b.close();
  });

  it('startup refuses a missing node list, both list and SRV, and a malformed host:port', async () => {
    const attempt = async (settings: MemcacheConnectionSettings): Promise<MemcacheError> => {
      try {
        await connectMemcacheBackend({ settings, stats: store, logger: silentLogger });
      } catch (err) {
        expect(err).to.be.instanceOf(MemcacheError);
        return err as MemcacheError;
      }
      throw new Error('expected a rejection');
    };
    expect((await attempt(settingsFor([]))).code).to.equal('no_servers');
    expect((await attempt({ ...settingsFor(['127.0.0.1:1']), srv: '_mc._tcp.x' })).code).to.equal('no_servers');
    expect((await attempt(settingsFor(['127.0.0.1']))).code).to.equal('connection');
    expect((await attempt({ ...settingsFor([]), srv: 'not-an-srv-name' })).code).to.equal('srv');
  });
});

function op(key: string, hits = 1, ttlSeconds = 60): CounterOp {
  return { key, hits, ttlSeconds, perSecond: false };
}
