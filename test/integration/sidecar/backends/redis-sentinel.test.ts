// The Redis backend in sentinel mode against a real redis-sentinel with password-protected sentinel and master.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { BackendError } from '../../../../sidecar/errors.js';
import { connectRedisBackend, type RedisClientOptions } from '../../../../sidecar/limiter/backend-redis.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { StatsStore } from '../../../../sidecar/stats/stats-store.js';
import { freePort, waitForPort } from '../../../support/ports.js';
import { requireBinary, startProcess, type RunningProcess } from '../../../support/process.js';
import { startRedisServer, type RedisServer } from '../../../support/redis-server.js';

const op = { key: 'sentinel:key', hits: 3, ttlSeconds: 60, perSecond: false };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('redis backend in sentinel mode', function () {
  this.timeout(20000);
  let master: RedisServer;
  let replica: RedisServer;
  let sentinel: RunningProcess;
  let sentinelPort: number;
  let dir: string;

  before(async () => {
    const binary = requireBinary('redis-sentinel', 'apt-get install -y redis-sentinel');
    master = await startRedisServer(['--requirepass', 'master-secret', '--masterauth', 'master-secret']);
    replica = await startRedisServer([
      '--requirepass',
      'master-secret',
      '--masterauth',
      'master-secret',
      '--replicaof',
      '127.0.0.1',
      String(master.port),
    ]);
    dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-sentinel-'));
    sentinelPort = await freePort();
    const conf = path.join(dir, 'sentinel.conf');
    // Sentinel rewrites its config file, so it must live in a writable place.
    writeFileSync(
      conf,
      [
        `port ${sentinelPort}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        'requirepass sentinel-secret',
        `sentinel monitor mymaster 127.0.0.1 ${master.port} 1`,
        'sentinel auth-pass mymaster master-secret',
        '',
      ].join('\n'),
    );
    sentinel = startProcess(binary, [conf]);
    try {
      await waitForPort(sentinelPort);
    } catch (err) {
      throw new Error(`redis-sentinel did not start: ${(err as Error).message}\n${sentinel.output()}`, { cause: err });
    }
  });
  after(async () => {
    await sentinel?.stop();
    await replica?.stop();
    await master?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const options = (fields: Partial<RedisClientOptions>): RedisClientOptions => ({
    type: 'sentinel',
    socketType: 'tcp',
    url: `mymaster,127.0.0.1:${sentinelPort}`,
    poolSize: 2,
    auth: 'master-secret',
    sentinelAuth: 'sentinel-secret',
    timeoutMs: 2000,
    ...fields,
  });
  const connect = (fields: Partial<RedisClientOptions>, maxElapsedMs = 0) =>
    connectRedisBackend({
      main: options(fields),
      startup: { initialIntervalMs: 20, maxIntervalMs: 50, maxElapsedMs },
      healthCheckActiveConnection: false,
      stats: new StatsStore(),
      logger: silentLogger,
    });

  it('finds the master through the sentinel (REDIS_SENTINEL_AUTH) and counts there (REDIS_AUTH)', async () => {
    const backend = await connect({});
    try {
      expect(await backend.increment([op, op])).to.deep.equal([3, 6]);
      const raw = new Redis({ host: '127.0.0.1', port: master.port, password: 'master-secret', lazyConnect: true });
      try {
        await raw.connect();
        expect(await raw.get('sentinel:key')).to.equal('6');
      } finally {
        raw.disconnect();
      }
    } finally {
      await backend.close();
    }
  });

  it('follows a failover: requests may fail briefly, then land on the promoted replica', async () => {
    const backend = await connect({ timeoutMs: 1000 });
    const sentinelClient = new Redis({
      host: '127.0.0.1',
      port: sentinelPort,
      password: 'sentinel-secret',
      lazyConnect: true,
    });
    const promoted = new Redis({ host: '127.0.0.1', port: replica.port, password: 'master-secret', lazyConnect: true });
    try {
      await sentinelClient.connect();
      await promoted.connect();
      expect(await backend.increment([{ ...op, key: 'failover:before' }])).to.deep.equal([3]);
      // The sentinel learns about the replica from the master's INFO; until then it has no replica to promote.
      for (;;) {
        const answer = await sentinelClient.call('SENTINEL', 'FAILOVER', 'mymaster').catch((err: Error) => err);
        if (!(answer instanceof Error)) break;
        if (!/NOGOODSLAVE|INPROG/.test(answer.message)) throw answer;
        await sleep(200);
      }
      for (;;) {
        const role = (await promoted.call('ROLE')) as unknown[];
        if (role[0] === 'master') break;
        await sleep(100);
      }
      // Until the sentinel has demoted the old master it still accepts writes (Redis' failover window), so poll
      // until a write made through the backend lands on the promoted node.
      for (let attempt = 0; ; attempt++) {
        const key = `failover:after:${attempt}`;
        const counts = await backend.increment([{ ...op, key }]).catch((err: unknown) => {
          expect(err).to.be.instanceOf(BackendError);
          return undefined;
        });
        if (counts !== undefined && (await promoted.get(key)) === '3') break;
        await sleep(100);
      }
    } finally {
      sentinelClient.disconnect();
      promoted.disconnect();
      await backend.close();
    }
  });

  it('fails startup clearly with a wrong sentinel password', async () => {
    let caught: unknown;
    await connect({ sentinelAuth: 'wrong' }, 150).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(BackendError);
    expect((caught as Error).message).to.match(/^timed out waiting for Redis connection/);
  });
});
