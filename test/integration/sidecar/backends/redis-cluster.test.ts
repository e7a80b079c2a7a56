// The Redis backend in cluster mode against a real three-master Redis Cluster.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { BackendError } from '../../../../sidecar/errors.js';
import {
  connectRedisBackend,
  type RedisBackendOptions,
  type RedisClientOptions,
} from '../../../../sidecar/limiter/backend-redis.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { startRedisServer } from '../../../support/redis-server.js';
import { counterBackendContract } from './counter-backend-contract.js';
import { startRedisCluster, type RedisClusterNodes } from './redis-cluster-nodes.js';

describe('redis backend in cluster mode', function () {
  this.timeout(30000);
  let cluster: RedisClusterNodes;
  before(async () => {
    cluster = await startRedisCluster();
  });
  after(async () => cluster?.stop());

  const clusterOptions = (fields: Partial<RedisClientOptions> = {}): RedisClientOptions => ({
    type: 'cluster',
    socketType: 'tcp',
    url: cluster.url,
    poolSize: 4,
    auth: '',
    timeoutMs: 2000,
    ...fields,
  });
  const options = (main: RedisClientOptions, fields: Partial<RedisBackendOptions> = {}): RedisBackendOptions => ({
    main,
    startup: { initialIntervalMs: 20, maxIntervalMs: 50, maxElapsedMs: 0 },
    healthCheckActiveConnection: false,
    stats: new StatsStore(),
    logger: silentLogger,
    ...fields,
  });

  counterBackendContract('redis cluster (serial per-key pipelines)', {
    create: () => connectRedisBackend(options(clusterOptions())),
  });

  it('spreads the keys of one request over the nodes, with parallel per-key pipelines (parallelism 0 = pool size)', async () => {
    const stats = new StatsStore();
    const backend = await connectRedisBackend(options(clusterOptions({ clusterPipelineParallelism: 0 }), { stats }));
    try {
      const ops = Array.from({ length: 12 }, (_, i) => ({
        key: `spread:${i}`,
        hits: i + 1,
        ttlSeconds: 60,
        perSecond: false,
      }));
      expect(await backend.increment(ops)).to.deep.equal(ops.map((op) => op.hits));
      expect(await backend.get(ops)).to.deep.equal(ops.map((op) => op.hits));
      const sizes = await Promise.all(
        cluster.nodes.map(async (node) => {
          const raw = new Redis({ port: node.port, host: '127.0.0.1', lazyConnect: true });
          try {
            await raw.connect();
            return (await raw.keys('spread:*')).length;
          } finally {
            raw.disconnect();
          }
        }),
      );
      expect(sizes.reduce((a, b) => a + b, 0)).to.equal(12);
      expect(sizes.filter((n) => n > 0).length).to.be.at.least(2);
      expect(stats.gauge('ratelimit.redis_pool.cx_active').value()).to.equal(1);
    } finally {
      await backend.close();
    }
  });

  it('routes SECOND keys to a single-mode per-second Redis next to a cluster', async () => {
    const second = await startRedisServer();
    const backend = await connectRedisBackend(
      options(clusterOptions(), {
        perSecond: { type: 'single', socketType: 'tcp', url: second.url, poolSize: 1, auth: '', timeoutMs: 2000 },
      }),
    );
    try {
      const counts = await backend.increment([
        { key: 'mix:a', hits: 1, ttlSeconds: 60, perSecond: false },
        { key: 'mix:s', hits: 5, ttlSeconds: 1, perSecond: true },
        { key: 'mix:b', hits: 2, ttlSeconds: 60, perSecond: false },
      ]);
      expect(counts).to.deep.equal([1, 5, 2]);
      const raw = new Redis({ port: second.port, host: '127.0.0.1', lazyConnect: true });
      try {
        await raw.connect();
        expect(await raw.get('mix:s')).to.equal('5');
        expect(await raw.get('mix:a')).to.equal(null);
      } finally {
        raw.disconnect();
      }
    } finally {
      await backend.close();
      await second.stop();
    }
  });

  it('rejects a negative pipeline parallelism', async () => {
    let caught: unknown;
    await connectRedisBackend(options(clusterOptions({ clusterPipelineParallelism: -1 }))).catch(
      (err: unknown) => (caught = err),
    );
    expect(caught).to.be.instanceOf(BackendError);
    expect((caught as Error).message).to.contain('parallelism');
  });
});
