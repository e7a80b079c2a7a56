// The whole sidecar with REDIS_TYPE=cluster on a real three-master cluster: keys land on their slot's node.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { startRateLimitServer, type RunningRateLimitServer } from '../../../../sidecar/runner.js';
import { loadSettings } from '../../../../sidecar/settings/settings.js';
import { makeSidecarConfigDir, quietRunnerDeps, sidecarTestEnv } from '../../../support/sidecar.js';
import { startRedisCluster, type RedisClusterNodes } from './redis-cluster-nodes.js';

const CONFIG = `domain: cl
descriptors:
  - key: user
    rate_limit:
      unit: hour
      requests_per_unit: 2
  - key: tenant
    rate_limit:
      unit: day
      requests_per_unit: 100
`;

describe('sidecar with REDIS_TYPE=cluster (real Redis Cluster)', function () {
  this.timeout(60000);
  let cluster: RedisClusterNodes;
  let root: string;
  let running: RunningRateLimitServer | undefined;

  before(async () => {
    cluster = await startRedisCluster();
    root = makeSidecarConfigDir(CONFIG);
  });
  after(async () => {
    await running?.stop();
    await cluster.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('decides over the cluster with one request spanning several slots, and stores each key on its node', async () => {
    const settings = loadSettings(
      sidecarTestEnv(root, {
        KV_TYPE: 'cluster',
        KV_SOCKET_TYPE: 'tcp',
        KV_URL: cluster.url,
        KV_POOL_SIZE: '2',
        REDIS_CLUSTER_PIPELINE_PARALLELISM: '0',
        EXPIRATION_JITTER_MAX_SECONDS: '0',
      }),
    );
    running = await startRateLimitServer(settings, quietRunnerDeps(undefined, { shutdownGraceMs: 2000 }));
    const body = JSON.stringify({
      domain: 'cl',
      descriptors: [{ entries: [{ key: 'user', value: 'ann' }] }, { entries: [{ key: 'tenant', value: 't1' }] }],
    });
    const results: [number, string, number | undefined][] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${running.httpPort}/json`, { method: 'POST', body });
      const json = (await res.json()) as { overallCode: string; statuses: { limitRemaining?: number }[] };
      results.push([res.status, json.overallCode, json.statuses[1]?.limitRemaining]);
    }
    expect(results).to.deep.equal([
      [200, 'OK', 99],
      [200, 'OK', 98],
      [429, 'OVER_LIMIT', 97],
    ]);

    // Each key is readable (GET follows no redirect with plain redis-cli) on exactly the node that owns its slot.
    const nowSeconds = Math.floor(Date.now() / 1000);
    const keys = [
      `cl_user_ann_${Math.floor(nowSeconds / 3600) * 3600}`,
      `cl_tenant_t1_${Math.floor(nowSeconds / 86400) * 86400}`,
    ];
    for (const key of keys) {
      const values = cluster.nodes.map((node) => {
        try {
          return execFileSync('redis-cli', ['-p', String(node.port), 'GET', key], { encoding: 'utf8' }).trim();
        } catch {
          return 'error';
        }
      });
      expect(
        values.filter((v) => v === '3'),
        `${key} on nodes: ${values.join(' | ')}`,
      ).to.have.length(1);
    }
  });
});
