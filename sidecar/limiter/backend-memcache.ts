// The memcache counter store: read with one get per node, answer, then increment asynchronously (§2.10).
import { Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import type { Clock } from '../clock.js';
import { BackendError } from '../errors.js';
import type { Logger } from '../logger.js';
import { nameWithTags, type Counter, type StatsStore } from '../stats/stats-store.js';
import type { CounterBackend, CounterOp } from './backend.js';
import { createMemcacheClient, type MemcacheClient } from './memcache-client.js';
import { MemcacheError } from './memcache-error.js';
import { resolveMemcacheServers, startSrvRefresh, type SrvLookup, type SrvRefresh } from './memcache-srv.js';

/**
 * Bound on each connect and each request/reply exchange. gomemcache uses 100 ms socket deadlines; ours is a timer,
 * which also counts event-loop delay, so a busy process would fail open on healthy nodes at 100 ms.
 */
export const DEFAULT_MEMCACHE_TIMEOUT_MS = 500;

/** The MEMCACHE_* / MC_* settings (the shape of settings.memcache). */
export interface MemcacheConnectionSettings {
  /** MEMCACHE_HOST_PORT: `host:port` nodes; the order decides key placement, so it must match on every instance. */
  readonly hostPort: readonly string[];
  /** MEMCACHE_SRV: `_service._proto.name`, or '' (exclusive with hostPort). */
  readonly srv: string;
  /** MEMCACHE_SRV_REFRESH in ms; 0 = resolve once at startup. */
  readonly srvRefreshMs: number;
  /** MEMCACHE_MAX_IDLE_CONNS per node. */
  readonly maxIdleConns: number;
  /** MEMCACHE_TLS and its PEM file paths ('' = not given). */
  readonly tls: boolean;
  readonly tlsClientCert: string;
  readonly tlsClientKey: string;
  readonly tlsCaCert: string;
  readonly tlsSkipHostnameVerification: boolean;
}

export interface MemcacheBackendOptions {
  readonly settings: MemcacheConnectionSettings;
  readonly stats: StatsStore;
  readonly logger: Logger;
  /** Bound on each connect and exchange; DEFAULT_MEMCACHE_TIMEOUT_MS by default. */
  readonly timeoutMs?: number;
  /** SRV resolution; node:dns with the system's servers by default. */
  readonly lookupSrv?: SrvLookup;
  /** For expirations above 30 days (absolute times); the system clock by default. */
  readonly clock?: Clock;
}

export interface MemcacheBackend extends CounterBackend {
  /** Resolves when every asynchronous increment started so far has ended (upstream's Flush). */
  flush(): Promise<void>;
  /** The nodes in use, in placement order. */
  servers(): readonly string[];
}

interface MemcacheStats {
  readonly multigetSuccess: Counter;
  readonly multigetError: Counter;
  readonly incrementSuccess: Counter;
  readonly incrementMiss: Counter;
  readonly incrementError: Counter;
  readonly addSuccess: Counter;
  readonly addError: Counter;
  readonly addNotStored: Counter;
  readonly keysRequested: Counter;
  readonly keysFound: Counter;
}

function memcacheStats(stats: StatsStore): MemcacheStats {
  const tagged = (name: string, code: string): Counter =>
    stats.counter(nameWithTags(`ratelimit.memcache.${name}`, { code }));
  return {
    multigetSuccess: tagged('multiget', 'success'),
    multigetError: tagged('multiget', 'error'),
    incrementSuccess: tagged('increment', 'success'),
    incrementMiss: tagged('increment', 'miss'),
    incrementError: tagged('increment', 'error'),
    addSuccess: tagged('add', 'success'),
    addError: tagged('add', 'error'),
    addNotStored: tagged('add', 'not_stored'),
    keysRequested: stats.counter('ratelimit.memcache.keys_requested'),
    keysFound: stats.counter('ratelimit.memcache.keys_found'),
  };
}

/**
 * A stored counter as upstream reads it: Go's strconv.ParseInt(v, 10, 32) then uint32(). Anything else (not a
 * number, or beyond int32) reads as 0, so a counter past 2^31−1 restarts from 0 (upstream quirk, kept).
 */
export function parseStoredCount(value: string | undefined): number {
  if (value === undefined || !/^[+-]?\d{1,10}$/.test(value)) return 0;
  const n = Number(value);
  if (n > 2147483647 || n < -2147483648) return 0;
  return n >>> 0;
}

/** TLS options from MEMCACHE_TLS_* (PEM files read here, once). */
function tlsOptions(settings: MemcacheConnectionSettings): tls.ConnectionOptions | undefined {
  if (!settings.tls) return undefined;
  const read = (name: string, file: string): string | undefined => {
    if (file === '') return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new MemcacheError('connection', `cannot read ${name} '${file}': ${(err as Error).message}`, {
        cause: err,
      });
    }
  };
  const ca = read('MEMCACHE_TLS_CACERT', settings.tlsCaCert);
  const cert = read('MEMCACHE_TLS_CLIENT_CERT', settings.tlsClientCert);
  const key = read('MEMCACHE_TLS_CLIENT_KEY', settings.tlsClientKey);
  // Only keys that are set: an explicit `checkServerIdentity: undefined` would replace Node's default check.
  const options: tls.ConnectionOptions = {};
  // The CA is trusted in addition to the system roots, as for Redis.
  if (ca !== undefined) options.ca = [...tls.rootCertificates, ca];
  if (cert !== undefined) options.cert = cert;
  if (key !== undefined) options.key = key;
  if (settings.tlsSkipHostnameVerification) options.checkServerIdentity = () => undefined;
  return options;
}

/**
 * Builds the memcache backend: the node list from MEMCACHE_HOST_PORT, or from MEMCACHE_SRV resolved now (and
 * every srvRefreshMs). No connection is opened here; memcache fails open, so the backend is healthy from the start.
 * @throws MemcacheError `no_servers` when neither list nor SRV is set (or both are), `srv` when the startup lookup
 * fails, `connection` for an unreadable TLS file or a malformed `host:port`
 */
export async function connectMemcacheBackend(options: MemcacheBackendOptions): Promise<MemcacheBackend> {
  const { settings, logger } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_MEMCACHE_TIMEOUT_MS;
  if (settings.srv !== '' && settings.hostPort.length > 0) {
    throw new MemcacheError('no_servers', 'both MEMCACHE_HOST_PORT and MEMCACHE_SRV are set: set only one');
  }
  if (settings.srv === '' && settings.hostPort.length === 0) {
    throw new MemcacheError(
      'no_servers',
      'BACKEND_TYPE=memcache needs MEMCACHE_HOST_PORT (MC_HOST_PORT) or MEMCACHE_SRV (MC_SRV)',
    );
  }
  let lookup: SrvLookup | undefined;
  let servers: readonly string[] = settings.hostPort;
  if (settings.srv !== '') {
    lookup = options.lookupSrv ?? ((name: string) => new Resolver().resolveSrv(name));
    servers = await resolveMemcacheServers(settings.srv, lookup);
    logger.info('memcache hosts from SRV', { srv: settings.srv, servers });
  }
  const clock = options.clock;
  const client = createMemcacheClient({
    servers,
    maxIdleConns: settings.maxIdleConns,
    timeoutMs,
    tls: tlsOptions(settings),
    nowSeconds: clock === undefined ? undefined : () => Math.floor(clock.nowMs() / 1000),
  });
  let refresh: SrvRefresh | undefined;
  if (lookup !== undefined && settings.srvRefreshMs > 0) {
    refresh = startSrvRefresh({
      srv: settings.srv,
      intervalMs: settings.srvRefreshMs,
      lookup,
      initial: servers,
      logger,
      onServers: (next) => client.setServers(next),
    });
  }
  return createMemcacheBackend(client, { stats: memcacheStats(options.stats), logger, refresh });
}

function createMemcacheBackend(
  client: MemcacheClient,
  deps: { readonly stats: MemcacheStats; readonly logger: Logger; readonly refresh: SrvRefresh | undefined },
): MemcacheBackend {
  const { stats, logger } = deps;
  const pending = new Set<Promise<void>>();
  let closed = false;

  /** One GetMulti; failures are logged and counted, and the keys not read count as 0 (fail open). */
  const read = async (ops: readonly CounterOp[]): Promise<number[]> => {
    if (closed) throw new BackendError('memcache backend is closed');
    const keys = ops.map((op) => op.key);
    stats.keysRequested.add(keys.length);
    const { items, error } = await client.getMulti(keys);
    if (error !== undefined) {
      stats.multigetError.inc();
      logger.error('Error multi-getting memcache keys', { keys, error: error.message });
    } else {
      stats.keysFound.add(items.size);
      stats.multigetSuccess.inc();
    }
    return ops.map((op) => parseStoredCount(items.get(op.key)));
  };

  /** incr; on a miss add with the TTL; if the add lost a race, incr again. Errors are logged only. */
  const incrementOne = async (op: CounterOp): Promise<void> => {
    try {
      await client.increment(op.key, op.hits);
      stats.incrementSuccess.inc();
      return;
    } catch (err) {
      if (!(err instanceof MemcacheError && err.code === 'cache_miss')) {
        stats.incrementError.inc();
        logger.error(`Failed to increment key ${op.key}`, { error: (err as Error).message });
        return;
      }
      stats.incrementMiss.inc();
    }
    try {
      await client.add(op.key, String(op.hits), op.ttlSeconds);
      stats.addSuccess.inc();
      return;
    } catch (err) {
      if (!(err instanceof MemcacheError && err.code === 'not_stored')) {
        stats.addError.inc();
        logger.error(`Failed to add key ${op.key}`, { error: (err as Error).message });
        return;
      }
      stats.addNotStored.inc();
    }
    try {
      await client.increment(op.key, op.hits);
      stats.incrementSuccess.inc();
    } catch (err) {
      if (err instanceof MemcacheError && err.code === 'cache_miss') stats.incrementMiss.inc();
      else stats.incrementError.inc();
      logger.error(`Failed to increment key ${op.key} after failing to add`, { error: (err as Error).message });
    }
  };

  /** Keys one after another, as upstream's goroutine does, so one request holds at most one connection. */
  const incrementAll = async (ops: readonly CounterOp[]): Promise<void> => {
    for (const op of ops) {
      // hits 0 (check only, or a frozen key) would only create an empty counter.
      if (op.hits > 0) await incrementOne(op);
    }
  };

  return {
    async increment(ops) {
      const befores = await read(ops);
      const task: Promise<void> = incrementAll(ops).finally(() => pending.delete(task));
      pending.add(task);
      return befores.map((before, i) => before + ops[i]!.hits);
    },
    get: read,
    async flush() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    servers: () => client.servers(),
    async close() {
      if (closed) return;
      closed = true;
      deps.refresh?.stop();
      // Each increment is bounded by the timeout, so this ends.
      while (pending.size > 0) await Promise.all([...pending]);
      client.close();
    },
  };
}
