// A three-master Redis Cluster of real redis-server processes on free ports, for cluster-mode tests.
import { execFileSync } from 'node:child_process';
import { requireBinary } from '../../../support/process.js';
import { startRedisServer, type RedisServer } from '../../../support/redis-server.js';

export interface RedisClusterNodes {
  readonly nodes: readonly RedisServer[];
  /** `127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3` (REDIS_URL in cluster mode). */
  readonly url: string;
  stop(): Promise<void>;
}

export async function startRedisCluster(): Promise<RedisClusterNodes> {
  const cli = requireBinary('redis-cli', 'apt-get install -y redis-tools');
  const nodes: RedisServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    for (let i = 0; i < 3; i++) {
      nodes.push(
        await startRedisServer([
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          '5000',
        ]),
      );
    }
    execFileSync(cli, ['--cluster', 'create', ...nodes.map((n) => n.url), '--cluster-replicas', '0', '--cluster-yes'], {
      stdio: 'pipe',
    });
    // Wait until every node agrees that all slots are served (bounded by the caller's test timeout).
    for (const node of nodes) {
      for (;;) {
        const info = execFileSync(cli, ['-p', String(node.port), 'cluster', 'info'], { encoding: 'utf8' });
        if (info.includes('cluster_state:ok')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { nodes, url: nodes.map((n) => n.url).join(','), stop };
}
