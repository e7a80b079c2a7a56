// REDIS_PIPELINE_WINDOW / _LIMIT on real Redis: concurrent requests share pipelines, keep their own results and errors.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { BackendError } from '../../../../sidecar/errors.js';
import {
  connectRedisBackend,
  type RedisBackend,
  type RedisClientOptions,
} from '../../../../sidecar/limiter/backend-redis.js';
import type { CounterOp } from '../../../../sidecar/limiter/backend.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { startRedisServer, type RedisServer } from '../../../support/redis-server.js';
import { startRedisCluster, type RedisClusterNodes } from './redis-cluster-nodes.js';

const op = (key: string, hits = 1, perSecond = false): CounterOp => ({ key, hits, ttlSeconds: 60, perSecond });

/** Read events the server has processed (Redis ≥ 6): one pipeline arriving at once is one read. */
async function readsProcessed(admin: Redis): Promise<number> {
  const info = await admin.info('stats');
  const match = /total_reads_processed:(\d+)/.exec(info);
  if (match === null) throw new Error(`INFO stats has no total_reads_processed:\n${info}`);
  return Number(match[1]);
}

function connect(main: RedisClientOptions, perSecond?: RedisClientOptions): Promise<RedisBackend> {
  return connectRedisBackend({
    main,
    perSecond,
    startup: { initialIntervalMs: 20, maxIntervalMs: 50, maxElapsedMs: 2000 },
    healthCheckActiveConnection: false,
    stats: new StatsStore(),
    logger: silentLogger,
  });
}

describe('redis implicit pipelining (REDIS_PIPELINE_WINDOW)', function () {
  this.timeout(30000);
  let redis: RedisServer;
  let second: RedisServer;
  let admin: Redis;
  let secondAdmin: Redis;
  const backends: RedisBackend[] = [];

  before(async () => {
    redis = await startRedisServer();
    second = await startRedisServer();
    admin = new Redis({ host: redis.host, port: redis.port });
    secondAdmin = new Redis({ host: second.host, port: second.port });
  });
  afterEach(async () => {
    await Promise.all(backends.splice(0).map((b) => b.close()));
  });
  after(async () => {
    admin?.disconnect();
    secondAdmin?.disconnect();
    await redis?.stop();
    await second?.stop();
  });

  const single = (fields: Partial<RedisClientOptions> = {}): RedisClientOptions => ({
    type: 'single',
    socketType: 'tcp',
    url: redis.url,
    poolSize: 4,
    auth: '',
    timeoutMs: 2000,
    ...fields,
  });
  const open = async (main: RedisClientOptions, perSecond?: RedisClientOptions): Promise<RedisBackend> => {
    const backend = await connect(main, perSecond);
    backends.push(backend);
    return backend;
  };

  it('window 0: one pipeline per request', async () => {
    const backend = await open(single());
    await Promise.all(Array.from({ length: 32 }, (_, i) => backend.increment([op(`w0:${i}`), op('w0:shared')])));
    expect(backend.pipelineCount()).to.equal(32);
    expect(await admin.get('w0:shared')).to.equal('32');
  });

  it('window > 0: 64 concurrent requests share one pipeline and Redis reads them in a few reads, each request getting its own counts', async () => {
    const backend = await open(single({ pipelineWindowMs: 20 }));
    const before = await readsProcessed(admin);
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) => backend.increment([op(`w20:${i}`, i + 1), op('w20:shared')])),
    );
    const reads = (await readsProcessed(admin)) - before;
    expect(backend.pipelineCount()).to.equal(1);
    // The pipeline's reads plus the INFO command; far fewer than 64 requests.
    expect(reads).to.be.at.most(4);
    results.forEach((counts, i) => expect(counts[0]).to.equal(i + 1));
    // Every request saw a different value of the shared counter: 1…64, in submission order.
    expect(results.map((counts) => counts[1])).to.deep.equal(Array.from({ length: 64 }, (_, i) => i + 1));
    expect(await admin.ttl('w20:0')).to.be.within(1, 60);
  });

  it('window 0 makes Redis process many more reads for the same load (comparison for the case above)', async () => {
    const backend = await open(single());
    const before = await readsProcessed(admin);
    await Promise.all(Array.from({ length: 64 }, (_, i) => backend.increment([op(`cmp:${i}`), op('cmp:shared')])));
    const reads = (await readsProcessed(admin)) - before;
    expect(backend.pipelineCount()).to.equal(64);
    // Four connections at least; Node may coalesce writes on one socket, so no exact count.
    expect(reads).to.be.at.least(4);
  });

  it('REDIS_PIPELINE_LIMIT flushes at the limit without waiting for the window', async () => {
    // A window far longer than the test timeout: only the limit can flush these.
    const backend = await open(single({ pipelineWindowMs: 600_000, pipelineLimit: 4 }));
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => backend.increment([op(`lim:${i}`, 2)])));
    expect(results).to.deep.equal(Array.from({ length: 8 }, () => [2]));
    expect(backend.pipelineCount()).to.equal(4); // 2 commands per request, 4 per pipeline
  });

  it('a command error fails only the request that sent it, not the rest of its batch', async () => {
    await admin.set('err:text', 'not a number');
    const backend = await open(single({ pipelineWindowMs: 20 }));
    const [good, bad, other] = await Promise.allSettled([
      backend.increment([op('err:good')]),
      backend.increment([op('err:text')]),
      backend.increment([op('err:other', 5)]),
    ]);
    expect(backend.pipelineCount()).to.equal(1);
    expect(good).to.deep.equal({ status: 'fulfilled', value: [1] });
    expect(other).to.deep.equal({ status: 'fulfilled', value: [5] });
    expect(bad.status).to.equal('rejected');
    const reason = (bad as PromiseRejectedResult).reason as Error;
    expect(reason).to.be.instanceOf(BackendError);
    expect(reason.message).to.include('not an integer');
  });

  it('a paused Redis gives each batched request its own timeout, then the same backend works again', async () => {
    const backend = await open(single({ pipelineWindowMs: 5, timeoutMs: 200 }));
    await backend.increment([op('pause:warm')]);
    await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => backend.increment([op(`pause:${i}`)])),
    );
    for (const outcome of outcomes) {
      expect(outcome.status).to.equal('rejected');
      const reason = (outcome as PromiseRejectedResult).reason as Error;
      expect(reason).to.be.instanceOf(BackendError);
      expect(reason.message).to.match(/timed out|timeout/i);
    }
    await admin.call('CLIENT', 'UNPAUSE');
    // The late replies of the timed-out batch must not confuse the next requests on the same connections.
    for (let i = 0; i < 10; i++) await backend.increment([op('pause:after')]);
    expect(await admin.get('pause:after')).to.equal('10');
  });

  it('with REDIS_PERSECOND each Redis gets its own batches', async () => {
    const backend = await open(
      single({ pipelineWindowMs: 20 }),
      single({ url: second.url, pipelineWindowMs: 20, poolSize: 2 }),
    );
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => backend.increment([op(`ps:min:${i}`), op(`ps:sec:${i}`, 3, true)])),
    );
    expect(results).to.deep.equal(Array.from({ length: 16 }, () => [1, 3]));
    expect(backend.pipelineCount()).to.equal(2);
    expect(await admin.get('ps:min:0')).to.equal('1');
    expect(await admin.exists('ps:sec:0')).to.equal(0);
    expect(await secondAdmin.get('ps:sec:0')).to.equal('3');
  });

  it('rejects a bad window or limit before connecting', async () => {
    const clientsBefore = Number(/connected_clients:(\d+)/.exec(await admin.info('clients'))![1]);
    for (const [fields, text] of [
      [{ pipelineWindowMs: 20, pipelineLimit: -1 }, 'pipeline limit'],
      [{ pipelineWindowMs: 20, pipelineLimit: 2.5 }, 'pipeline limit'],
      [{ pipelineWindowMs: -5 }, 'pipeline window'],
    ] as const) {
      let err: unknown;
      try {
        await open(single(fields));
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(BackendError);
      expect((err as Error).message).to.include(text);
    }
    const clientsAfter = Number(/connected_clients:(\d+)/.exec(await admin.info('clients'))![1]);
    expect(clientsAfter).to.equal(clientsBefore);
  });

  describe('in cluster mode', () => {
    let cluster: RedisClusterNodes;
    before(async () => {
      cluster = await startRedisCluster();
    });
    after(async () => cluster?.stop());

    it('batches per master node: many keys of many requests in at most one pipeline per node', async () => {
      const backend = await open({
        type: 'cluster',
        socketType: 'tcp',
        url: cluster.url,
        poolSize: 4,
        auth: '',
        timeoutMs: 2000,
        pipelineWindowMs: 20,
      });
      const results = await Promise.all(
        Array.from({ length: 32 }, (_, i) => backend.increment([op(`cl:a:${i}`, 2), op(`cl:b:${i}`), op('cl:shared')])),
      );
      results.forEach((counts) => expect(counts.slice(0, 2)).to.deep.equal([2, 1]));
      expect(results.map((counts) => counts[2]).sort((a, b) => a! - b!)).to.deep.equal(
        Array.from({ length: 32 }, (_, i) => i + 1),
      );
      // 96 keys over 3 masters: one batch per node (the connect PING is not a pipeline).
      expect(backend.pipelineCount()).to.be.at.most(3);
      const reader = new Redis.Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })));
      try {
        expect(await reader.get('cl:shared')).to.equal('32');
        expect(await reader.get('cl:a:7')).to.equal('2');
      } finally {
        reader.disconnect();
      }
    });
  });
});
