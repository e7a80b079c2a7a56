// chorus-ratelimit as a real process: settings errors, startup lines, SIGTERM exit, Redis backend and WORKERS.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../../support/ports.js';
import { startRedisServer, type RedisServer } from '../../../support/redis-server.js';

const CONFIG = `domain: test
descriptors:
  - key: key1
    rate_limit:
      unit: hour
      requests_per_unit: 3
`;

interface Proc {
  readonly child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function startMain(env: NodeJS.ProcessEnv): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', 'sidecar/main.ts'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function waitFor(proc: Proc, text: string, count = 1): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (proc.output().split(text).length - 1 < count) {
    if (Date.now() > deadline || proc.child.exitCode !== null) {
      throw new Error(`did not see ${JSON.stringify(text)} x${count}; output:\n${proc.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function jsonCall(port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/json`, {
    method: 'POST',
    body: '{"domain":"test","descriptors":[{"entries":[{"key":"key1","value":"v"}]}]}',
  });
  await res.text();
  return res.status;
}

describe('chorus-ratelimit process', function () {
  this.timeout(90_000);
  let root: string;

  before(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'chorus-main-'));
    mkdirSync(path.join(root, 'config'));
    writeFileSync(path.join(root, 'config', 'config.yaml'), CONFIG);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  const env = async (extra: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> => ({
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: String(await freePort()),
    DEBUG_HOST: '127.0.0.1',
    DEBUG_PORT: String(await freePort()),
    USE_STATSD: 'false',
    LOG_LEVEL: 'info',
    RUNTIME_ROOT: root,
    RUNTIME_WATCH_ROOT: 'false',
    ...extra,
  });

  it('prints a bad setting as one line and exits 1', async () => {
    const proc = startMain({ GRPC_PORT: 'x', KV_URL: 'a:1', REDIS_URL: 'b:2' });
    expect(await proc.exited).to.equal(1);
    expect(proc.output()).to.equal('invalid value "x" for GRPC_PORT: expected an integer (e.g. 10)\n');
  });

  it('starts on the memory backend by default, logs its addresses and exits 0 on SIGTERM', async () => {
    const e = await env({ LOG_FORMAT: 'json' });
    const proc = startMain(e);
    try {
      await waitFor(proc, 'Listening for HTTP');
      const out = proc.output();
      expect(out).to.contain('embedded in-memory counter store');
      expect(out).to.contain(`Listening for gRPC on '127.0.0.1:${e.GRPC_PORT}'`);
      expect(out).to.contain(`Listening for debug on '127.0.0.1:${e.DEBUG_PORT}'`);
      const line = out.split('\n').find((l) => l.includes('Listening for HTTP')) ?? '';
      expect(JSON.parse(line)).to.include({
        level: 'warning',
        '@message': `Listening for HTTP on '127.0.0.1:${e.PORT}'`,
      });
      expect(await jsonCall(Number(e.PORT))).to.equal(200);
    } finally {
      proc.child.kill('SIGTERM');
    }
    expect(await proc.exited).to.equal(0);
  });

  it('exits 0 on SIGTERM while still waiting for Redis, and 1 with a fatal line when a port is taken', async () => {
    const waiting = startMain(
      await env({ BACKEND_TYPE: 'redis', REDIS_SOCKET_TYPE: 'tcp', REDIS_URL: `127.0.0.1:${await freePort()}` }),
    );
    await waitFor(waiting, 'connecting to redis');
    waiting.child.kill('SIGTERM');
    expect(await waiting.exited).to.equal(0);
    expect(waiting.output()).to.contain('received SIGTERM during startup');

    const e = await env({});
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(Number(e.PORT), '127.0.0.1', resolve));
    try {
      const failed = startMain(e);
      expect(await failed.exited).to.equal(1);
      expect(failed.output()).to.match(
        /level=fatal msg="failed to listen for HTTP on 127\.0\.0\.1:\d+: listen EADDRINUSE/,
      );
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  describe('with Redis', () => {
    let redis: RedisServer;
    before(async () => {
      redis = await startRedisServer();
    });
    after(async () => {
      await redis?.stop();
    });

    it('shares counters between WORKERS processes and stops them all on SIGTERM', async () => {
      const e = await env({
        BACKEND_TYPE: 'redis',
        KV_SOCKET_TYPE: 'tcp',
        KV_URL: redis.url,
        WORKERS: '2',
      });
      const proc = startMain(e);
      try {
        await waitFor(proc, 'Listening for HTTP', 2);
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++) statuses.push(await jsonCall(Number(e.PORT)));
        expect(statuses).to.deep.equal([200, 200, 200, 429, 429]);
        const health = await fetch(`http://127.0.0.1:${e.PORT}/healthcheck`);
        expect(health.status).to.equal(200);
      } finally {
        proc.child.kill('SIGTERM');
      }
      expect(await proc.exited).to.equal(0);
    });
  });
});
