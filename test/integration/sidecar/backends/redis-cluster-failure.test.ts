// Cluster mode when one of three masters (no replicas) stops and comes back: its slots fail fast, the rest work.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { BackendError } from '../../../../sidecar/errors.js';
import { connectRedisBackend, type RedisBackend } from '../../../../sidecar/limiter/backend-redis.js';
import type { CounterOp } from '../../../../sidecar/limiter/backend.js';
import { redisKeySlot } from '../../../../sidecar/limiter/redis-slot.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { requireBinary } from '../../../support/process.js';
import { startRedisCluster, type RedisClusterNodes } from './redis-cluster-nodes.js';

const TIMEOUT_MS = 1000;
/** An answer later than REDIS_TIMEOUT plus this counts as a hang. */
const HANG_SLACK_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const op = (key: string): CounterOp => ({ key, hits: 1, ttlSeconds: 600, perSecond: false });

/** Resolves with the counts, or with the error; rejects only when no answer came within the hang bound. */
async function answer(backend: RedisBackend, key: string): Promise<number[] | Error> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      backend.increment([op(key)]).catch((err: unknown) => err as Error),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer for ${key}: hung`)), TIMEOUT_MS + HANG_SLACK_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe('redis backend in cluster mode: a master stops and restarts', function () {
  this.timeout(90000);
  let cluster: RedisClusterNodes;
  let backend: RedisBackend | undefined;
  let cli: string;

  before(async () => {
    cli = requireBinary('redis-cli', 'apt-get install -y redis-tools');
    cluster = await startRedisCluster();
    // Without replicas, the surviving masters only keep serving their slots when full coverage is not required.
    for (const node of cluster.nodes) {
      execFileSync(cli, ['-p', String(node.port), 'config', 'set', 'cluster-require-full-coverage', 'no']);
    }
  });
  after(async () => {
    await backend?.close();
    await cluster?.stop();
  });

  /** A key whose slot the node on `port` serves (from CLUSTER SLOTS of a live node). */
  async function keyOn(port: number, prefix: string): Promise<string> {
    const probe = new Redis({ host: '127.0.0.1', port: cluster.nodes[0]!.port });
    try {
      const slots = (await probe.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]]][];
      for (let i = 0; ; i++) {
        const key = `${prefix}:${i}`;
        const slot = redisKeySlot(key);
        const range = slots.find(([from, to]) => slot >= from && slot <= to);
        if (range !== undefined && range[2][1] === port) return key;
      }
    } finally {
      probe.disconnect();
    }
  }

  it('fails fast with BackendError for the stopped node only, and recovers after its restart without a new backend', async () => {
    const [victim, ...others] = cluster.nodes;
    const victimKey = await keyOn(victim!.port, 'down');
    const otherKeys = await Promise.all(others.map((n, i) => keyOn(n.port, `up${i}`)));
    backend = await connectRedisBackend({
      main: { type: 'cluster', socketType: 'tcp', url: cluster.url, poolSize: 2, auth: '', timeoutMs: TIMEOUT_MS },
      startup: { initialIntervalMs: 20, maxIntervalMs: 50, maxElapsedMs: 5000 },
      healthCheckActiveConnection: false,
      stats: new StatsStore(),
      logger: silentLogger,
    });
    for (const key of [victimKey, ...otherKeys]) expect(await answer(backend, key)).to.deep.equal([1]);

    execFileSync(cli, ['-p', String(victim!.port), 'shutdown', 'nosave']);
    // Several rounds while the node is down, before and after the others mark it as failed (node timeout 5 s).
    let victimErrors = 0;
    const otherCounts: number[][] = others.map(() => []);
    for (let round = 0; round < 8; round++) {
      const outcome = await answer(backend, victimKey);
      expect(outcome, `round ${round}: the stopped node's key`).to.be.instanceOf(BackendError);
      victimErrors++;
      for (let i = 0; i < otherKeys.length; i++) {
        const counts = await answer(backend, otherKeys[i]!);
        expect(counts, `round ${round}: ${otherKeys[i]} on a live node`).to.be.an('array');
        otherCounts[i]!.push((counts as number[])[0]!);
      }
      await sleep(1000);
    }
    expect(victimErrors).to.equal(8);
    // The live nodes kept counting, one per request.
    for (const counts of otherCounts) expect(counts).to.deep.equal([2, 3, 4, 5, 6, 7, 8, 9]);

    await victim!.restart();
    // The node comes back with its cluster config (same id and slots) but without data (no persistence here).
    let recovered: number[] | undefined;
    for (let attempt = 0; attempt < 100 && recovered === undefined; attempt++) {
      const outcome = await answer(backend, victimKey);
      if (Array.isArray(outcome)) recovered = outcome;
      else {
        expect(outcome).to.be.instanceOf(BackendError);
        await sleep(200);
      }
    }
    expect(recovered, 'the restarted node answers again through the same backend').to.deep.equal([1]);
    for (let i = 0; i < otherKeys.length; i++) expect(await answer(backend, otherKeys[i]!)).to.deep.equal([10]);
  });
});
