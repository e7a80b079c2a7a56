// N ioredis connections to one Redis, used round-robin, with fail-fast options, pool stats and liveness.
import { Redis, type Cluster, type RedisOptions } from 'ioredis';
import { BackendError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Counter, Gauge, StatsStore } from '../stats/stats-store.js';
import { buildRedisTlsOptions, type RedisTlsOptions } from './redis-tls.js';

/** Where and how to reach one Redis deployment (REDIS_* or REDIS_PERSECOND_* settings, parsed). */
export interface RedisClientOptions {
  /** REDIS_TYPE: one server, a master found through sentinels, or a cluster (createClusterPool). */
  readonly type: 'single' | 'sentinel' | 'cluster';
  /** REDIS_SOCKET_TYPE for single mode. */
  readonly socketType: 'tcp' | 'unix';
  /**
   * REDIS_URL: single mode `host:port` (tcp) or a socket path (unix); sentinel mode
   * `masterName,sentinel1:port,…` (at least one sentinel).
   */
  readonly url: string;
  /** REDIS_POOL_SIZE: connections used round-robin (≥ 1). */
  readonly poolSize: number;
  /** REDIS_AUTH: '' (none), `password`, or `user:password` (split at the first ':'). */
  readonly auth: string;
  /**
   * Bound on one request's round trip and on each connect attempt, in ms (REDIS_TIMEOUT). A stopped or stuck
   * Redis then gives a BackendError after at most this long instead of a hang.
   */
  readonly timeoutMs: number;
  /** REDIS_TLS (REDIS_PERSECOND_TLS): TLS on the tcp connection; undefined for plain TCP. */
  readonly tls?: RedisTlsOptions;
  /** REDIS_SENTINEL_AUTH: `password` or `user:password` for the sentinel nodes (REDIS_AUTH is for the master). */
  readonly sentinelAuth?: string;
  /**
   * REDIS_CLUSTER_PIPELINE_PARALLELISM (cluster mode): per-key command groups run serially (1, the default), up to
   * the pool size at once (0), or at most N at once (capped at the pool size). Negative values are rejected.
   */
  readonly clusterPipelineParallelism?: number;
  /**
   * REDIS_PIPELINE_WINDOW in ms: > 0 collects the commands of concurrent requests and sends them as one pipeline
   * when the window elapses (all modes; cluster mode: one batch per node). 0 or undefined: one pipeline per request.
   */
  readonly pipelineWindowMs?: number;
  /** REDIS_PIPELINE_LIMIT: with a window, flush as soon as this many commands are queued (0 = window only). */
  readonly pipelineLimit?: number;
}

export interface RedisPool {
  /**
   * True in cluster mode: a pipeline may only carry one key's commands (keys of a request live in different
   * slots), so a request becomes one small pipeline per key, run `parallelism` at a time.
   */
  readonly perKeyPipelines: boolean;
  /** Per-key pipelines in flight at once (cluster mode); 1 otherwise. */
  readonly parallelism: number;
  /** A ready connection, round-robin; when none is ready, the next one (its commands then fail fast). */
  next(): Redis | Cluster;
  /** Connects every connection and checks PING = PONG. @throws BackendError on the first failure. */
  connect(): Promise<void>;
  /** After the startup connect: reconnect dropped connections in the background from now on. */
  enableReconnect(): void;
  /** Connections currently ready. */
  activeCount(): number;
  /** Closes all connections (no reconnect). */
  close(): Promise<void>;
  /** Drops all connections so a new connect() can be tried (startup retry). */
  reset(): void;
}

export interface RedisPoolDeps {
  readonly stats: StatsStore;
  /** `ratelimit.redis_pool` or `ratelimit.redis_per_second_pool`. */
  readonly statsPrefix: string;
  readonly logger: Logger;
  /** Called whenever the number of ready connections changes. */
  readonly onActiveChange?: (active: number) => void;
}

/** Splits REDIS_AUTH at the first ':' into a user and a password (no ':' → password only). */
export function parseRedisAuth(auth: string): { username?: string; password?: string } {
  if (auth === '') return {};
  const colon = auth.indexOf(':');
  if (colon < 0) return { password: auth };
  return { username: auth.slice(0, colon), password: auth.slice(colon + 1) };
}

/** Splits `host:port` at the last ':' (so `[::1]:6379` works); throws BackendError on a bad port. */
export function parseHostPort(url: string): { host: string; port: number } {
  const colon = url.lastIndexOf(':');
  const host = colon < 0 ? url : url.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const port = colon < 0 ? NaN : Number(url.slice(colon + 1));
  if (host === '' || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new BackendError(`invalid redis address '${url}': expected host:port`);
  }
  return { host, port };
}

/**
 * Splits a sentinel REDIS_URL `masterName,host:port,…` into the master name and the sentinel addresses.
 * @throws BackendError with upstream's message when there is not at least one sentinel.
 */
export function parseSentinelUrl(url: string): { name: string; sentinels: { host: string; port: number }[] } {
  const parts = url.split(',');
  if (parts.length < 2 || parts[0] === '') {
    throw new BackendError(
      'Expected master name and a list of urls for the sentinels, in the format: <redis master name>,<sentinel1>,...,<sentineln>',
    );
  }
  return { name: parts[0]!, sentinels: parts.slice(1).map(parseHostPort) };
}

/** Reconnect delay after a dropped connection: quick first, capped at 2 s (radix redials per command). */
export const reconnectDelayMs = (attempt: number): number => Math.min(50 * 2 ** Math.min(attempt, 6), 2000);

export function createRedisPool(options: RedisClientOptions, deps: RedisPoolDeps): RedisPool {
  if (options.type === 'cluster') throw new BackendError('cluster mode uses createClusterPool');
  if (!(options.poolSize >= 1)) throw new BackendError(`redis pool size must be ≥ 1, got ${options.poolSize}`);
  const cxActive: Gauge = deps.stats.gauge(`${deps.statsPrefix}.cx_active`);
  const cxTotal: Counter = deps.stats.counter(`${deps.statsPrefix}.cx_total`);
  const cxLocalClose: Counter = deps.stats.counter(`${deps.statsPrefix}.cx_local_close`);
  let reconnect = false;
  let closing = false;
  const retryStrategy = (attempt: number): number | null => (reconnect && !closing ? reconnectDelayMs(attempt) : null);
  let address: RedisOptions;
  if (options.type === 'sentinel') {
    const { name, sentinels } = parseSentinelUrl(options.url);
    const sentinelAuth = parseRedisAuth(options.sentinelAuth ?? '');
    address = {
      name,
      sentinels,
      sentinelUsername: sentinelAuth.username,
      sentinelPassword: sentinelAuth.password,
      sentinelRetryStrategy: retryStrategy,
      sentinelCommandTimeout: options.timeoutMs,
      // After a failover, follow +switch-master at once, and drop a connection that still points at the demoted
      // master (its writes fail with READONLY) so that the reconnect asks the sentinels again.
      failoverDetector: true,
      reconnectOnError: (err: Error) => err.message.startsWith('READONLY'),
    };
  } else {
    address = options.socketType === 'unix' ? { path: options.url } : parseHostPort(options.url);
  }
  let active = 0;
  let cursor = 0;
  let lastErrorLogMs = 0;
  // The error event carries the reason (WRONGPASS, ECONNREFUSED); connect() itself often only says "closed".
  let lastError: Error | undefined;

  const base: RedisOptions = {
    ...address,
    ...parseRedisAuth(options.auth),
    ...(options.tls === undefined ? {} : { tls: buildRedisTlsOptions(options.tls) }),
    lazyConnect: true,
    // Fail fast instead of queueing while disconnected; never replay a command after a reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: options.timeoutMs,
    connectTimeout: options.timeoutMs,
    retryStrategy,
  };

  const setActive = (n: number): void => {
    active = n;
    cxActive.set(n);
    deps.onActiveChange?.(n);
  };

  const makeClient = (): Redis => {
    const client = new Redis(base);
    let ready = false;
    client.on('ready', () => {
      ready = true;
      cxTotal.inc();
      setActive(active + 1);
    });
    client.on('close', () => {
      if (!ready) return;
      ready = false;
      cxLocalClose.inc();
      setActive(active - 1);
    });
    // ioredis gives a client up for good ('end') when a sentinel failover is detected while that client is
    // re-dialling (its connector then rejects with "Connection is closed."); without this the pool would fail
    // every request until a restart. Seen in redis-failover.test.ts about one run in four.
    let endAttempts = 0;
    client.on('ready', () => {
      endAttempts = 0;
    });
    client.on('end', () => {
      if (!reconnect || closing || !clients.includes(client)) return;
      const timer = setTimeout(() => {
        endTimers.delete(timer);
        if (client.status === 'end' && !closing) client.connect().catch(() => undefined);
      }, reconnectDelayMs(++endAttempts));
      endTimers.add(timer);
    });
    // ioredis emits 'error' for every failed (re)connect; without a listener Node would crash the process.
    client.on('error', (err: Error) => {
      lastError = err;
      const now = Date.now();
      if (now - lastErrorLogMs < 5000) return;
      lastErrorLogMs = now;
      deps.logger.warn('redis connection error', { prefix: deps.statsPrefix, error: err.message });
    });
    return client;
  };

  const endTimers = new Set<NodeJS.Timeout>();
  let clients: Redis[] = Array.from({ length: options.poolSize }, makeClient);

  return {
    perKeyPipelines: false,
    parallelism: 1,
    next() {
      for (let i = 0; i < clients.length; i++) {
        const client = clients[cursor]!;
        cursor = (cursor + 1) % clients.length;
        if (client.status === 'ready') return client;
      }
      return clients[cursor]!;
    },
    async connect() {
      lastError = undefined;
      for (const client of clients) {
        try {
          if (client.status === 'wait' || client.status === 'end') await client.connect();
          const pong = await client.ping();
          if (pong !== 'PONG') throw new Error(`PING answered '${pong}'`);
        } catch (err) {
          const reason = lastError ?? (err as Error);
          throw new BackendError(reason.message, { cause: reason });
        }
      }
    },
    enableReconnect() {
      reconnect = true;
    },
    activeCount: () => active,
    reset() {
      for (const client of clients) {
        // Keep the 'error' listener: a late error event without one would crash the process.
        client.removeAllListeners('ready');
        client.removeAllListeners('close');
        client.disconnect();
      }
      setActive(0);
      clients = Array.from({ length: options.poolSize }, makeClient);
    },
    async close() {
      closing = true;
      for (const timer of endTimers) clearTimeout(timer);
      endTimers.clear();
      await Promise.all(
        clients.map(async (client) => {
          if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
          else client.disconnect();
        }),
      );
    },
  };
}
