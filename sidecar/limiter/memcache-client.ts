// A memcached text-protocol client over a node list: get (multi), incr and add, one pool per node.
import type tls from 'node:tls';
import { MemcacheError } from './memcache-error.js';
import { createMemcacheNodePool, type MemcacheNodePool } from './memcache-node-pool.js';
import { parseGetReply, parseIncrReply, parseStoreReply } from './memcache-reply.js';
import { createMemcacheServerList, type MemcacheAddress } from './memcache-server-list.js';

/** memcached reads an expiration above 30 days as an absolute Unix time instead of a relative one. */
export const MEMCACHE_MAX_RELATIVE_EXPIRATION_SECONDS = 60 * 60 * 24 * 30;

export interface MemcacheGetResult {
  /** Values found, by key (misses are absent). May be partial when `error` is set: other nodes' values stay. */
  readonly items: ReadonlyMap<string, string>;
  /** The last failure among the nodes asked (gomemcache GetMulti), or undefined when every node answered. */
  readonly error: MemcacheError | undefined;
}

export interface MemcacheClient {
  /**
   * Reads all keys, one `get` per node, nodes in parallel. Never throws: an illegal key or an empty node list
   * gives no items and that error (as gomemcache, which checks every key before asking any node).
   */
  getMulti(keys: readonly string[]): Promise<MemcacheGetResult>;
  /**
   * `incr key delta` on the key's node; resolves with the new value.
   * @throws MemcacheError `cache_miss` when the key does not exist, or any transport/key error
   */
  increment(key: string, delta: number): Promise<number>;
  /**
   * `add key 0 expiration len` with `value`; expiration in seconds from now (converted to an absolute time
   * above 30 days, see MEMCACHE_MAX_RELATIVE_EXPIRATION_SECONDS).
   * @throws MemcacheError `not_stored` when the key already exists, or any transport/key error
   */
  add(key: string, value: string, expirationSeconds: number): Promise<void>;
  /** Replaces the node list (order matters for key placement); pools of nodes no longer listed are closed. */
  setServers(addresses: readonly string[]): void;
  /** Current node addresses, in order. */
  servers(): readonly string[];
  /** Idle connections of each current node (for tests and debugging). */
  idleConnections(): ReadonlyMap<string, number>;
  /** Closes every connection; later calls fail with `connection`. Idempotent. */
  close(): void;
}

export interface MemcacheClientOptions {
  /** Node addresses (`host:port`, `[v6]:port`) in the order that decides key placement. */
  readonly servers: readonly string[];
  /** MEMCACHE_MAX_IDLE_CONNS per node. */
  readonly maxIdleConns: number;
  /** Bound on each connect and on each request/reply exchange. */
  readonly timeoutMs: number;
  /** TLS client options (MEMCACHE_TLS*), or undefined for plain TCP. */
  readonly tls?: tls.ConnectionOptions;
  /** Whole seconds since the epoch, for long expirations; Date.now by default. */
  readonly nowSeconds?: () => number;
}

export function createMemcacheClient(options: MemcacheClientOptions): MemcacheClient {
  const serverList = createMemcacheServerList(options.servers);
  const pools = new Map<string, MemcacheNodePool>();
  const nowSeconds = options.nowSeconds ?? ((): number => Math.floor(Date.now() / 1000));
  let closed = false;

  const poolFor = (node: MemcacheAddress): MemcacheNodePool => {
    if (closed) throw new MemcacheError('connection', 'memcache: client is closed');
    let pool = pools.get(node.address);
    if (pool === undefined) {
      pool = createMemcacheNodePool(node, {
        maxIdle: options.maxIdleConns,
        timeoutMs: options.timeoutMs,
        tls: options.tls,
      });
      pools.set(node.address, pool);
    }
    return pool;
  };

  const asMemcacheError = (err: unknown): MemcacheError =>
    err instanceof MemcacheError ? err : new MemcacheError('connection', (err as Error).message, { cause: err });

  return {
    async getMulti(keys) {
      const items = new Map<string, string>();
      const byNode = new Map<MemcacheAddress, string[]>();
      try {
        for (const key of keys) {
          const node = serverList.pick(key);
          const list = byNode.get(node);
          if (list === undefined) byNode.set(node, [key]);
          else list.push(key);
        }
      } catch (err) {
        return { items, error: asMemcacheError(err) };
      }
      let error: MemcacheError | undefined;
      await Promise.all(
        [...byNode].map(async ([node, nodeKeys]) => {
          try {
            const found = await poolFor(node).withConnection((c) =>
              c.send(`get ${nodeKeys.join(' ')}\r\n`, parseGetReply, options.timeoutMs),
            );
            for (const [key, value] of found) items.set(key, value);
          } catch (err) {
            error = asMemcacheError(err);
          }
        }),
      );
      return { items, error };
    },

    async increment(key, delta) {
      const node = serverList.pick(key);
      const reply = await poolFor(node).withConnection((c) =>
        c.send(`incr ${key} ${delta}\r\n`, parseIncrReply, options.timeoutMs),
      );
      if (reply === 'miss') throw new MemcacheError('cache_miss', 'memcache: cache miss');
      return reply;
    },

    async add(key, value, expirationSeconds) {
      const node = serverList.pick(key);
      const expiration =
        expirationSeconds > MEMCACHE_MAX_RELATIVE_EXPIRATION_SECONDS
          ? nowSeconds() + expirationSeconds
          : expirationSeconds;
      const data = Buffer.from(value, 'latin1');
      const command = Buffer.concat([
        Buffer.from(`add ${key} 0 ${expiration} ${data.length}\r\n`, 'latin1'),
        data,
        Buffer.from('\r\n'),
      ]);
      const reply = await poolFor(node).withConnection((c) => c.send(command, parseStoreReply, options.timeoutMs));
      if (reply === 'not_stored') throw new MemcacheError('not_stored', 'memcache: item not stored');
    },

    setServers(addresses) {
      serverList.set(addresses);
      const keep = new Set(addresses);
      for (const [address, pool] of pools) {
        if (!keep.has(address)) {
          pool.close();
          pools.delete(address);
        }
      }
    },
    servers: () => serverList.nodes().map((n) => n.address),
    idleConnections: () => new Map([...pools].map(([address, pool]) => [address, pool.idleCount()])),
    close() {
      closed = true;
      for (const pool of pools.values()) pool.close();
      pools.clear();
    },
  };
}
