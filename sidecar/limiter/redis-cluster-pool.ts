// Redis Cluster mode: one ioredis Cluster client (a connection per node), per-key pipelines, same fail-fast rules.
import { Cluster } from 'ioredis';
import { BackendError } from '../errors.js';
import type { Counter, Gauge } from '../stats/stats-store.js';
import {
  parseHostPort,
  parseRedisAuth,
  reconnectDelayMs,
  type RedisClientOptions,
  type RedisPool,
  type RedisPoolDeps,
} from './redis-pool.js';
import { buildRedisTlsOptions } from './redis-tls.js';

/**
 * REDIS_URL is `node1:port,node2:port,…` (seed nodes; the topology is discovered). The Cluster client keeps one
 * connection per node, so REDIS_POOL_SIZE only bounds REDIS_CLUSTER_PIPELINE_PARALLELISM here. `cx_active` is 1
 * while the cluster client is ready and 0 otherwise.
 */
export function createClusterPool(options: RedisClientOptions, deps: RedisPoolDeps): RedisPool {
  const nodes = options.url.split(',').map(parseHostPort);
  const requested = options.clusterPipelineParallelism ?? 1;
  if (!Number.isInteger(requested) || requested < 0) {
    throw new BackendError(`redis cluster pipeline parallelism must be ≥ 0, got ${requested}`);
  }
  if (!(options.poolSize >= 1)) throw new BackendError(`redis pool size must be ≥ 1, got ${options.poolSize}`);
  const parallelism = requested === 0 ? options.poolSize : Math.min(requested, options.poolSize);
  const cxActive: Gauge = deps.stats.gauge(`${deps.statsPrefix}.cx_active`);
  const cxTotal: Counter = deps.stats.counter(`${deps.statsPrefix}.cx_total`);
  const cxLocalClose: Counter = deps.stats.counter(`${deps.statsPrefix}.cx_local_close`);
  let reconnect = false;
  let closing = false;
  let active = 0;
  let lastError: Error | undefined;
  let lastErrorLogMs = 0;

  const setActive = (n: number): void => {
    active = n;
    cxActive.set(n);
    deps.onActiveChange?.(n);
  };

  const makeClient = (): Cluster => {
    const client = new Cluster(nodes, {
      lazyConnect: true,
      enableOfflineQueue: false,
      clusterRetryStrategy: (attempt) => (reconnect && !closing ? reconnectDelayMs(attempt) : null),
      slotsRefreshTimeout: options.timeoutMs,
      redisOptions: {
        ...parseRedisAuth(options.auth),
        ...(options.tls === undefined ? {} : { tls: buildRedisTlsOptions(options.tls) }),
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
        commandTimeout: options.timeoutMs,
        connectTimeout: options.timeoutMs,
      },
    });
    let ready = false;
    client.on('ready', () => {
      if (ready) return;
      ready = true;
      cxTotal.inc();
      setActive(1);
    });
    client.on('close', () => {
      if (!ready) return;
      ready = false;
      cxLocalClose.inc();
      setActive(0);
    });
    client.on('error', (err: Error) => {
      lastError = err;
      const now = Date.now();
      if (now - lastErrorLogMs < 5000) return;
      lastErrorLogMs = now;
      deps.logger.warn('redis cluster error', { prefix: deps.statsPrefix, error: err.message });
    });
    return client;
  };

  let client = makeClient();

  return {
    perKeyPipelines: true,
    parallelism,
    next: () => client,
    async connect() {
      lastError = undefined;
      try {
        if (client.status === 'wait' || client.status === 'end') await client.connect();
        const pong = await client.ping();
        if (pong !== 'PONG') throw new Error(`PING answered '${pong}'`);
      } catch (err) {
        const reason = lastError ?? (err as Error);
        throw new BackendError(reason.message, { cause: reason });
      }
    },
    enableReconnect() {
      reconnect = true;
    },
    activeCount: () => active,
    reset() {
      client.removeAllListeners('ready');
      client.removeAllListeners('close');
      client.disconnect();
      setActive(0);
      client = makeClient();
    },
    async close() {
      closing = true;
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}
