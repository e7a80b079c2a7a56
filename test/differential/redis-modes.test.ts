// Differential: REDIS_TYPE=sentinel, REDIS_TYPE=cluster and REDIS_PERSECOND=true against upstream, keys checked per server.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { startRedisCluster, type RedisClusterNodes } from '../integration/sidecar/backends/redis-cluster-nodes.js';
import { freePort, waitForPort } from '../support/ports.js';
import { requireBinary, startProcess, type RunningProcess } from '../support/process.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameCounterDeltas, sameGrpc, sameGrpcRepeated, snapshotCounters } from './steps.js';

const RULES = `
domain: rm
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 3 }
  - key: tenant
    rate_limit: { unit: day, requests_per_unit: 50 }
  - key: burst
    rate_limit: { unit: second, requests_per_unit: 2 }
`;
// Both services share one Redis deployment per mode; the prefixes keep their counters apart.
const UP = 'up:';
const OURS = 'ours:';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The same answers for hour/day limits: crossing the limit, several descriptors, hits_addend, counters. */
async function sameDecisions(pair: ServicePair, label: string): Promise<void> {
  const before = await snapshotCounters(pair);
  await sameGrpcRepeated(pair, `${label} user`, request('rm', [desc([['user', 'ann']])]), 5);
  await sameGrpcRepeated(
    pair,
    `${label} user+tenant`,
    request('rm', [desc([['user', 'bob']]), desc([['tenant', 't1']]), desc([['user', 'cy']])]),
    4,
  );
  await sameGrpc(pair, `${label} hits 20`, request('rm', [desc([['tenant', 't2']])], 20));
  await sameGrpc(pair, `${label} hits 40 over`, request('rm', [desc([['tenant', 't2']])], 40));
  await sameGrpc(pair, `${label} check only`, request('rm', [desc([['tenant', 't2']], { hitsAddend: 0 })]));
  await sameCounterDeltas(pair, label, before);
}

/**
 * Runs a burst of SECOND-unit requests right after a second boundary; a burst that spilled into the next second
 * (slow machine) is retried with fresh values, since the two services may then have seen different windows.
 */
async function inOneSecond(burst: (value: string) => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    for (;;) {
      const ms = Date.now() % 1000;
      if (ms < 50) break;
      await sleep(1000 - ms + 5);
    }
    const second = Math.floor(Date.now() / 1000);
    try {
      await burst(`a${attempt}`);
      return;
    } catch (err) {
      if (Math.floor(Date.now() / 1000) === second || attempt >= 5) throw err;
    }
  }
}

/** Keys with `prefix` on one server, without the prefix, sorted. */
async function keysOf(client: Redis, prefix: string): Promise<string[]> {
  return (await client.keys(`${prefix}*`)).map((k) => k.slice(prefix.length)).sort();
}

describe('differential: Redis modes', function () {
  this.timeout(120_000);

  describe('REDIS_TYPE=sentinel', () => {
    let master: RedisServer;
    let sentinel: RunningProcess;
    let dir: string;
    let pair: ServicePair;

    before(async () => {
      const binary = requireBinary('redis-sentinel', 'apt-get install -y redis-sentinel');
      master = await startRedisServer();
      dir = mkdtempSync(path.join(os.tmpdir(), 'chorus-diff-sentinel-'));
      const port = await freePort();
      const conf = path.join(dir, 'sentinel.conf');
      writeFileSync(
        conf,
        [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor dm 127.0.0.1 ${master.port} 1`, ''].join(
          '\n',
        ),
      );
      sentinel = startProcess(binary, [conf]);
      await waitForPort(port).catch((err: Error) => {
        throw new Error(`redis-sentinel did not start: ${err.message}\n${sentinel.output()}`);
      });
      const sentinelEnv = { REDIS_TYPE: 'sentinel', REDIS_URL: `dm,127.0.0.1:${port},127.0.0.1:${port}` };
      pair = await startServicePair({
        files: { 'rm.yaml': RULES },
        env: { BACKEND_TYPE: 'redis', EXPIRATION_JITTER_MAX_SECONDS: '0' },
        upstreamEnv: { ...sentinelEnv, CACHE_KEY_PREFIX: UP },
        oursEnv: { ...sentinelEnv, CACHE_KEY_PREFIX: OURS },
      });
    });
    after(async () => {
      await pair?.stop();
      await sentinel?.stop();
      await master?.stop();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    });

    it('answers alike, and both keep the same keys on the master the sentinel names', async () => {
      await sameDecisions(pair, 'sentinel');
      const client = new Redis({ host: master.host, port: master.port });
      try {
        const up = await keysOf(client, UP);
        expect(up.length).to.equal(5); // ann, bob, cy, t1, t2
        expect(await keysOf(client, OURS)).to.deep.equal(up);
        for (const key of up) expect(await client.get(OURS + key), key).to.equal(await client.get(UP + key));
      } finally {
        client.disconnect();
      }
      // Neither service wrote to the Redis the pair started for it (the sentinel's master is used instead).
      for (const side of [pair.upstream, pair.ours]) {
        const unused = new Redis({ host: side.redis.host, port: side.redis.port });
        try {
          expect(await unused.dbsize()).to.equal(0);
        } finally {
          unused.disconnect();
        }
      }
    });
  });

  describe('REDIS_TYPE=cluster', () => {
    let cluster: RedisClusterNodes;
    let pair: ServicePair;

    before(async () => {
      cluster = await startRedisCluster();
      const clusterEnv = { REDIS_TYPE: 'cluster', REDIS_URL: cluster.url };
      pair = await startServicePair({
        files: { 'rm.yaml': RULES },
        env: { BACKEND_TYPE: 'redis', EXPIRATION_JITTER_MAX_SECONDS: '0' },
        // Upstream's README calls the window required in cluster mode; ours batches with it too.
        upstreamEnv: { ...clusterEnv, CACHE_KEY_PREFIX: UP, REDIS_PIPELINE_WINDOW: '150us' },
        oursEnv: { ...clusterEnv, CACHE_KEY_PREFIX: OURS, REDIS_PIPELINE_WINDOW: '1ms' },
      });
    });
    after(async () => {
      await pair?.stop();
      await cluster?.stop();
    });

    it('answers alike, and each key lives on the node serving its slot with equal counts for both', async () => {
      await sameDecisions(pair, 'cluster');
      const perNode: { up: string[]; ours: string[] }[] = [];
      for (const node of cluster.nodes) {
        const client = new Redis({ host: node.host, port: node.port });
        try {
          perNode.push({ up: await keysOf(client, UP), ours: await keysOf(client, OURS) });
        } finally {
          client.disconnect();
        }
      }
      const all = perNode.flatMap((n) => n.up).sort();
      expect(all.length).to.equal(5);
      // The prefixes differ, so a key's slot (and node) may differ between the two; the union must match.
      expect(perNode.flatMap((n) => n.ours).sort()).to.deep.equal(all);
      expect(perNode.filter((n) => n.up.length + n.ours.length > 0).length).to.be.at.least(2);
      const cli = requireBinary('redis-cli', 'apt-get install -y redis-tools');
      const reader = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })));
      try {
        for (const key of all) {
          expect(await reader.get(OURS + key), key).to.equal(await reader.get(UP + key));
          const slot = Number(
            execFileSync(cli, ['-p', String(cluster.nodes[0]!.port), 'cluster', 'keyslot', OURS + key], {
              encoding: 'utf8',
            }).trim(),
          );
          const owner = cluster.nodes.findIndex((_, i) => perNode[i]!.ours.includes(key));
          const served = execFileSync(
            cli,
            ['-p', String(cluster.nodes[owner]!.port), 'cluster', 'countkeysinslot', String(slot)],
            { encoding: 'utf8' },
          ).trim();
          expect(Number(served), `${key} in slot ${slot}`).to.be.at.least(1);
        }
      } finally {
        reader.disconnect();
      }
    });
  });

  describe('REDIS_PERSECOND=true', () => {
    let main: RedisServer;
    let second: RedisServer;
    let pair: ServicePair;

    before(async () => {
      main = await startRedisServer();
      second = await startRedisServer();
      const env = {
        REDIS_URL: main.url,
        REDIS_PERSECOND: 'true',
        REDIS_PERSECOND_SOCKET_TYPE: 'tcp',
        REDIS_PERSECOND_URL: second.url,
      };
      pair = await startServicePair({
        files: { 'rm.yaml': RULES },
        env: { BACKEND_TYPE: 'redis', EXPIRATION_JITTER_MAX_SECONDS: '0' },
        upstreamEnv: { ...env, CACHE_KEY_PREFIX: UP },
        oursEnv: { ...env, CACHE_KEY_PREFIX: OURS },
      });
    });
    after(async () => {
      await pair?.stop();
      await main?.stop();
      await second?.stop();
    });

    it('answers alike for second and longer units in one request, and splits keys between the two servers alike', async () => {
      await sameDecisions(pair, 'persecond');
      await inOneSecond(async (value) => {
        await sameGrpcRepeated(
          pair,
          `persecond burst ${value}`,
          request('rm', [desc([['burst', value]]), desc([['user', `mixed-${value}`]])]),
          4,
        );
      });
      const mainClient = new Redis({ host: main.host, port: main.port });
      const secondClient = new Redis({ host: second.host, port: second.port });
      try {
        const [upMain, oursMain, upSecond, oursSecond] = await Promise.all([
          keysOf(mainClient, UP),
          keysOf(mainClient, OURS),
          keysOf(secondClient, UP),
          keysOf(secondClient, OURS),
        ]);
        expect(oursMain).to.deep.equal(upMain);
        expect(oursSecond).to.deep.equal(upSecond);
        expect(upSecond.length).to.be.at.least(1);
        expect(
          upSecond.every((k) => k.startsWith('rm_burst_')),
          'only SECOND keys on the per-second Redis',
        ).to.equal(true);
        expect(
          upMain.some((k) => k.startsWith('rm_burst_')),
          'no SECOND key on the main Redis',
        ).to.equal(false);
        expect(upMain.some((k) => k.startsWith('rm_user_mixed-'))).to.equal(true);
      } finally {
        mainClient.disconnect();
        secondClient.disconnect();
      }
    });
  });
});
