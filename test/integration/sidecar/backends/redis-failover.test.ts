// The whole sidecar with REDIS_TYPE=sentinel under load while the master dies: bounded errors, no hang, recovery.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Logger, LogFields } from '../../../../sidecar/logger.js';
import { defaultRunnerDeps, startRateLimitServer, type RunningRateLimitServer } from '../../../../sidecar/runner.js';
import { loadSettings } from '../../../../sidecar/settings/settings.js';
import { freePort, waitForPort } from '../../../support/ports.js';
import { requireBinary, startProcess, type RunningProcess } from '../../../support/process.js';
import { startRedisServer, type RedisServer } from '../../../support/redis-server.js';

const CONFIG = `domain: fo
descriptors:
  - key: user
    rate_limit:
      unit: hour
      requests_per_unit: 1000000000
`;
const REDIS_TIMEOUT_MS = 1000;
/** A request still open this long after REDIS_TIMEOUT counts as hung (the reconnect delay is capped at 2 s). */
const HANG_SLACK_MS = 3000;
const WORKERS = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The sidecar's warnings and errors, for the failure message. */
const logLines: string[] = [];
const record = (level: string) => (message: string, fields?: LogFields) => {
  logLines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
  if (logLines.length > 200) logLines.splice(0, 100);
};
const recordingLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: record('warn'),
  error: record('error'),
};

interface Sample {
  readonly startMs: number;
  readonly endMs: number;
  /** HTTP status, or 0 when our own bound (REDIS_TIMEOUT + slack) aborted the request. */
  readonly status: number;
}

describe('sidecar with REDIS_TYPE=sentinel: master killed under load', function () {
  this.timeout(90000);
  let master: RedisServer;
  let replica: RedisServer;
  const sentinels: RunningProcess[] = [];
  const sentinelPorts: number[] = [];
  let dir: string;
  let running: RunningRateLimitServer | undefined;

  before(async () => {
    const binary = requireBinary('redis-sentinel', 'apt-get install -y redis-sentinel');
    master = await startRedisServer();
    replica = await startRedisServer(['--replicaof', '127.0.0.1', String(master.port)]);
    dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-failover-'));
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const sentinelDir = path.join(dir, `s${i}`);
      mkdirSync(sentinelDir);
      const conf = path.join(sentinelDir, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${sentinelDir}`,
          `sentinel monitor mymaster 127.0.0.1 ${master.port} 2`,
          'sentinel down-after-milliseconds mymaster 1000',
          'sentinel failover-timeout mymaster 5000',
          '',
        ].join('\n'),
      );
      const sentinel = startProcess(binary, [conf]);
      sentinels.push(sentinel);
      sentinelPorts.push(port);
      try {
        await waitForPort(port);
      } catch (err) {
        throw new Error(`redis-sentinel did not start: ${(err as Error).message}\n${sentinel.output()}`, {
          cause: err,
        });
      }
    }
    // A failover needs a majority of sentinels that know each other and the replica (learned from hello
    // messages and the master's INFO, which take a few seconds); the test timeout bounds this wait.
    for (const port of sentinelPorts) {
      const client = new Redis({ host: '127.0.0.1', port });
      try {
        for (;;) {
          const peers = (await client.call('SENTINEL', 'SENTINELS', 'mymaster')) as unknown[];
          const replicas = (await client.call('SENTINEL', 'REPLICAS', 'mymaster')) as unknown[];
          if (peers.length >= 2 && replicas.length >= 1) break;
          await sleep(200);
        }
      } finally {
        client.disconnect();
      }
    }
    const root = path.join(dir, 'runtime');
    mkdirSync(path.join(root, 'config'), { recursive: true });
    writeFileSync(path.join(root, 'config', 'config.yaml'), CONFIG);
    const settings = loadSettings({
      HOST: '127.0.0.1',
      PORT: '0',
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      DEBUG_HOST: '127.0.0.1',
      DEBUG_PORT: '0',
      USE_STATSD: 'false',
      RUNTIME_ROOT: root,
      RUNTIME_SUBDIRECTORY: '',
      RUNTIME_WATCH_ROOT: 'false',
      REDIS_TYPE: 'sentinel',
      REDIS_URL: `mymaster,${sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}`,
      REDIS_POOL_SIZE: '2',
      REDIS_TIMEOUT: `${REDIS_TIMEOUT_MS}ms`,
      EXPIRATION_JITTER_MAX_SECONDS: '0',
    });
    running = await startRateLimitServer(settings, {
      ...defaultRunnerDeps(recordingLogger),
      statsOutput: (): void => undefined,
      shutdownGraceMs: 2000,
    });
  });
  after(async () => {
    await running?.stop();
    for (const sentinel of sentinels) await sentinel.stop();
    await replica?.stop();
    await master?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('errors only while no master is reachable, never hangs, and recovers on the promoted replica without a restart', async () => {
    const url = `http://127.0.0.1:${running!.httpPort}/json`;
    const body = JSON.stringify({ domain: 'fo', descriptors: [{ entries: [{ key: 'user', value: 'load' }] }] });
    const samples: Sample[] = [];
    let stop = false;
    let lastErrorBody = '';
    const worker = async (): Promise<void> => {
      while (!stop) {
        const startMs = Date.now();
        let status: number;
        try {
          const res = await fetch(url, {
            method: 'POST',
            body,
            signal: AbortSignal.timeout(REDIS_TIMEOUT_MS + HANG_SLACK_MS),
          });
          const text = await res.text();
          status = res.status;
          if (status !== 200) lastErrorBody = text;
        } catch {
          status = 0;
        }
        samples.push({ startMs, endMs: Date.now(), status });
        // An error answers fast; pace retries so the loop does not spin while the master is gone.
        if (status !== 200) await sleep(20);
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, worker));
    const ok = (s: Sample): boolean => s.status === 200;
    try {
      while (samples.filter(ok).length < 50) await sleep(50);
      const killedAt = Date.now();
      await master.stop();
      const sentinel = new Redis({ host: '127.0.0.1', port: sentinelPorts[0]! });
      let promotedAt: number;
      try {
        for (let waited = 0; ; waited += 50) {
          const addr = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'mymaster')) as string[];
          if (addr[1] === String(replica.port)) break;
          if (waited > 30_000)
            throw new Error(`the sentinels did not promote the replica: master is ${addr.join(':')}`);
          await sleep(50);
        }
        promotedAt = Date.now();
      } finally {
        sentinel.disconnect();
      }
      // Load until 100 decisions in a row succeeded after the promotion (bounded by the test timeout).
      for (let waited = 0; ; waited += 50) {
        const after = samples.filter((s) => s.startMs >= promotedAt);
        const tail = after.slice(-100);
        if (tail.length === 100 && tail.every(ok)) break;
        if (waited > 30_000) {
          const statuses = new Map<number, number>();
          for (const s of after) statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1);
          throw new Error(
            `no recovery 30 s after the promotion: statuses since then ${JSON.stringify([...statuses])}, last error ${lastErrorBody}; sidecar log:\n${logLines.slice(-15).join('\n')}`,
          );
        }
        await sleep(50);
      }
      stop = true;
      await load;

      const errors = samples.filter((s) => !ok(s));
      const hung = samples.filter((s) => s.status === 0);
      expect(hung, 'requests open past REDIS_TIMEOUT + slack').to.deep.equal([]);
      expect(samples.filter((s) => s.startMs < killedAt).every(ok), 'errors before the kill').to.equal(true);
      expect(errors.length, 'the kill should have been noticed').to.be.greaterThan(0);
      for (const e of errors) {
        expect(e.status).to.equal(400); // /json answers a Redis error with 400, like upstream
        expect(e.startMs).to.be.at.least(killedAt);
      }
      // Errors end once the promoted replica is found: a dropped connection is re-dialled through the sentinels
      // within the capped reconnect delay, so none starts later than that after the promotion.
      const lastErrorStart = Math.max(...errors.map((e) => e.startMs));
      expect(lastErrorStart - promotedAt).to.be.below(2000 + REDIS_TIMEOUT_MS);
      const promoted = new Redis({ host: '127.0.0.1', port: replica.port });
      try {
        const role = (await promoted.call('ROLE')) as unknown[];
        expect(role[0]).to.equal('master');
        const afterPromotion = samples.filter((s) => s.startMs > lastErrorStart && ok(s)).length;
        // One counter per hour window (two if the test crossed an hour boundary).
        const keys = await promoted.keys('fo_user_load_*');
        const counts = await Promise.all(keys.map((k) => promoted.get(k)));
        expect(counts.reduce((sum, c) => sum + Number(c), 0)).to.be.at.least(afterPromotion);
      } finally {
        promoted.disconnect();
      }
      const health = await fetch(`http://127.0.0.1:${running!.httpPort}/healthcheck`);
      expect(health.status).to.equal(200);
    } finally {
      stop = true;
      await load;
    }
  });
});
