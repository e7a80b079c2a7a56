// The whole sidecar with BACKEND_TYPE=mc and the seed's MC_* names: /json decisions on memcached, health OK.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MemcacheError } from '../../../../sidecar/limiter/memcache-error.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { defaultRunnerDeps, startRateLimitServer, type RunningRateLimitServer } from '../../../../sidecar/runner.js';
import { loadSettings } from '../../../../sidecar/settings/settings.js';
import { startMemcachedServer, type MemcachedServer } from '../../../support/memcached-server.js';
import { readDirect } from './memcache-direct.js';

const CONFIG = `domain: mc
descriptors:
  - key: user
    rate_limit:
      unit: hour
      requests_per_unit: 2
`;

describe('sidecar with BACKEND_TYPE=mc (real memcached)', () => {
  let memcached: MemcachedServer;
  let root: string;
  let running: RunningRateLimitServer | undefined;
  const prefix = `sidecar${Date.now()}_`;

  const env = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
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
    BACKEND_TYPE: 'mc',
    CACHE_KEY_PREFIX: prefix,
    EXPIRATION_JITTER_MAX_SECONDS: '0',
    ...extra,
  });
  const deps = { ...defaultRunnerDeps(silentLogger), statsOutput: (): void => undefined, shutdownGraceMs: 2000 };

  before(async () => {
    memcached = await startMemcachedServer();
    root = mkdtempSync(path.join(os.tmpdir(), 'chorus-mc-sidecar-'));
    mkdirSync(path.join(root, 'config'));
    writeFileSync(path.join(root, 'config', 'config.yaml'), CONFIG);
  });
  after(async () => {
    await running?.stop();
    await memcached.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('answers /json from memcached counters and reports healthy (upstream stays unhealthy here)', async () => {
    running = await startRateLimitServer(
      loadSettings(env({ MC_HOST_PORT: memcached.address, MC_MAX_IDLE_CONNS: '1' })),
      deps,
    );
    const health = await fetch(`http://127.0.0.1:${running.httpPort}/healthcheck`);
    expect(health.status).to.equal(200);
    expect(await health.text()).to.equal('OK');

    const body = '{"domain":"mc","descriptors":[{"entries":[{"key":"user","value":"ann"}]}]}';
    const key = `${prefix}mc_user_ann_${Math.floor(Date.now() / 1000 / 3600) * 3600}`;
    const codes: [number, string][] = [];
    for (let i = 1; i <= 3; i++) {
      const res = await fetch(`http://127.0.0.1:${running.httpPort}/json`, { method: 'POST', body });
      const json = (await res.json()) as { overallCode: string };
      codes.push([res.status, json.overallCode]);
      // The increment runs after the answer; wait for it so that the next request reads it (bounded by mocha).
      while ((await readDirect(memcached.port, key))?.value !== String(i)) {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    // On failure, say whether reads failed open (a read error makes the third request pass).
    const readErrors = running.stats.counter('ratelimit.memcache.multiget.__code=error').value();
    expect(codes, `memcache read errors: ${readErrors}`).to.deep.equal([
      [200, 'OK'],
      [200, 'OK'],
      [429, 'OVER_LIMIT'],
    ]);
    expect(running.stats.counter('ratelimit.memcache.multiget.__code=success').value()).to.equal(3);
    await running.stop();
    running = undefined;
  });

  it('refuses to start without MC_HOST_PORT or MC_SRV', async () => {
    let caught: unknown;
    await startRateLimitServer(loadSettings(env({})), deps).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(MemcacheError).with.property('code', 'no_servers');
  });
});
