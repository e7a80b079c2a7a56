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

describe('redis backend in sentinel mode', function () {
  this.timeout(20000);
  let master: RedisServer;
  let sentinel: RunningProcess;
  let sentinelPort: number;
  let dir: string;

  before(async () => {
    const binary = requireBinary('redis-sentinel', 'apt-get install -y redis-sentinel');
    master = await startRedisServer(['--requirepass', 'master-secret']);
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

  it('fails startup clearly with a wrong sentinel password', async () => {
    let caught: unknown;
    await connect({ sentinelAuth: 'wrong' }, 150).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(BackendError);
    expect((caught as Error).message).to.match(/^timed out waiting for Redis connection/);
  });
});
