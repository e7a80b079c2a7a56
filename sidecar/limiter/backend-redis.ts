// The Redis counter store: one pipelined INCRBY+EXPIRE round trip per request per Redis (or per batch of requests with a pipeline window), per-second split (§2.2).
import type { Cluster } from 'ioredis';
import { BackendError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { StatsStore } from '../stats/stats-store.js';
import type { CounterBackend, CounterOp } from './backend.js';
import { exponentialBackoff, type BackoffOptions } from './backoff.js';
import {
  checkPipelineSettings,
  createCommandBatcher,
  type CommandBatcher,
  type RedisCommand,
  type RedisReply,
} from './redis-batcher.js';
import { createClusterPool } from './redis-cluster-pool.js';
import { createRedisPool, type RedisClientOptions, type RedisPool, type RedisPoolDeps } from './redis-pool.js';
import { redisKeySlot } from './redis-slot.js';

export type { RedisClientOptions } from './redis-pool.js';

export interface RedisBackendOptions {
  /** The main Redis (REDIS_*). */
  readonly main: RedisClientOptions;
  /** The per-second Redis (REDIS_PERSECOND_*), or undefined when REDIS_PERSECOND is false. */
  readonly perSecond?: RedisClientOptions;
  /** REDIS_STARTUP_*: retry until every connection answers PING with PONG. */
  readonly startup: BackoffOptions;
  /**
   * REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: after startup, report unhealthy while a pool has no ready connection
   * and healthy again when one is back. When false, health only goes healthy once, after startup.
   */
  readonly healthCheckActiveConnection: boolean;
  /** Health component callback (the `redis` component starts unhealthy; main owns the checker). */
  readonly onHealthChange?: (healthy: boolean) => void;
  readonly stats: StatsStore;
  readonly logger: Logger;
  /** Aborts the startup retry loop (SIGTERM during startup). */
  readonly signal?: AbortSignal;
  /** Uniform [0, 1) for backoff jitter; Math.random by default. */
  readonly random?: () => number;
}

export interface RedisBackend extends CounterBackend {
  /** Ready connections of the main pool and of the per-second pool (0 when there is none). */
  activeConnections(): { main: number; perSecond: number };
  /** Pipelines sent so far on all pools (with a pipeline window, one per flushed batch). */
  pipelineCount(): number;
}

/**
 * Connects (retrying with backoff until PING = PONG on every connection, forever when maxElapsedMs is 0) and
 * returns the backend. Logs "connecting to redis on <url> with pool size N" like upstream.
 * @throws BackendError 'timed out waiting for Redis connection …' when maxElapsedMs passes, or when aborted.
 */
export async function connectRedisBackend(options: RedisBackendOptions): Promise<RedisBackend> {
  const { logger, stats } = options;
  for (const client of [options.main, options.perSecond]) {
    if (client !== undefined) checkPipelineSettings(client.pipelineWindowMs ?? 0, client.pipelineLimit ?? 0);
  }
  let mainActive = 0;
  let perSecondActive = 0;
  let started = false;
  let healthy: boolean | undefined;
  const setHealth = (value: boolean): void => {
    if (healthy === value) return;
    healthy = value;
    options.onHealthChange?.(value);
  };
  const onActiveChange = (): void => {
    if (!started || !options.healthCheckActiveConnection) return;
    setHealth(mainActive > 0 && (options.perSecond === undefined || perSecondActive > 0));
  };

  logger.warn(`connecting to redis on ${options.main.url} with pool size ${options.main.poolSize}`);
  const main = createPool(options.main, {
    stats,
    statsPrefix: 'ratelimit.redis_pool',
    logger,
    onActiveChange: (n) => {
      mainActive = n;
      onActiveChange();
    },
  });
  let perSecond: RedisPool | undefined;
  if (options.perSecond !== undefined) {
    logger.warn(
      `connecting to per second redis on ${options.perSecond.url} with pool size ${options.perSecond.poolSize}`,
    );
    perSecond = createPool(options.perSecond, {
      stats,
      statsPrefix: 'ratelimit.redis_per_second_pool',
      logger,
      onActiveChange: (n) => {
        perSecondActive = n;
        onActiveChange();
      },
    });
  }
  const pools = perSecond === undefined ? [main] : [main, perSecond];

  const startMs = Date.now();
  const nextDelay = exponentialBackoff(options.startup, options.random);
  for (;;) {
    try {
      for (const pool of pools) await pool.connect();
      break;
    } catch (err) {
      for (const pool of pools) pool.reset();
      const message = (err as Error).message;
      const delay = nextDelay();
      const maxElapsed = options.startup.maxElapsedMs;
      if (maxElapsed > 0 && Date.now() - startMs + delay > maxElapsed) {
        await Promise.all(pools.map((p) => p.close()));
        throw new BackendError(`timed out waiting for Redis connection: ${message}`, { cause: err });
      }
      logger.warn('redis not reachable yet, retrying', { error: message, retryInMs: delay });
      try {
        await sleep(delay, options.signal);
      } catch (abortErr) {
        await Promise.all(pools.map((p) => p.close()));
        throw new BackendError('redis startup connect aborted', { cause: abortErr });
      }
    }
  }
  for (const pool of pools) pool.enableReconnect();
  started = true;
  setHealth(true);

  const timeoutMs = Math.max(options.main.timeoutMs, options.perSecond?.timeoutMs ?? 0);
  let closed = false;

  let pipelines = 0;
  const batchers: CommandBatcher[] = [];

  /** Sends one pipeline on a connection of the pool; counts it. */
  const execPipeline = async (pool: RedisPool, commands: readonly RedisCommand[]): Promise<readonly RedisReply[]> => {
    pipelines++;
    const results = await pool
      .next()
      .pipeline(commands as unknown as unknown[][])
      .exec();
    if (results === null) throw new Error('redis pipeline was aborted');
    return results;
  };

  /** One request's replies as values; the first command error becomes the request's error. */
  const values = (results: readonly RedisReply[]): unknown[] => {
    const out = new Array<unknown>(results.length);
    for (let i = 0; i < results.length; i++) {
      const [err, value] = results[i]!;
      if (err !== null) throw err;
      out[i] = value;
    }
    return out;
  };

  const asBackendError = (err: unknown): BackendError =>
    err instanceof BackendError ? err : new BackendError((err as Error).message, { cause: err });

  /** Window 0: one pipeline for this request alone, bounded by the request timeout. */
  const runAlone = async (pool: RedisPool, commands: readonly RedisCommand[]): Promise<unknown[]> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const results = await Promise.race([
        execPipeline(pool, commands),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`redis request timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return values(results);
    } catch (err) {
      throw asBackendError(err);
    } finally {
      clearTimeout(timer);
    }
  };

  type Send = (commands: readonly RedisCommand[]) => Promise<unknown[]>;

  /**
   * How a pool's commands are sent: alone (window 0), or through a batcher (one per pool; in cluster mode one
   * per master node, found from the client's slot map, because a pipeline may only reach one node).
   */
  const makeSender = (pool: RedisPool, client: RedisClientOptions): Send => {
    const windowMs = client.pipelineWindowMs ?? 0;
    if (!(windowMs > 0)) return (commands) => runAlone(pool, commands);
    const newBatcher = (): CommandBatcher => {
      const batcher = createCommandBatcher({
        windowMs,
        limit: client.pipelineLimit ?? 0,
        flush: (commands) => execPipeline(pool, commands),
      });
      batchers.push(batcher);
      return batcher;
    };
    const submit = async (batcher: CommandBatcher, commands: readonly RedisCommand[]): Promise<unknown[]> => {
      try {
        return values(await batcher.submit(commands, timeoutMs));
      } catch (err) {
        throw asBackendError(err);
      }
    };
    if (!pool.perKeyPipelines) {
      const batcher = newBatcher();
      return (commands) => submit(batcher, commands);
    }
    const byNode = new Map<string, CommandBatcher>();
    return (commands) => {
      const slot = redisKeySlot(commands[0]![1]);
      const node = (pool.next() as Cluster).slots[slot]?.[0] ?? `slot ${slot}`;
      let batcher = byNode.get(node);
      if (batcher === undefined) byNode.set(node, (batcher = newBatcher()));
      return submit(batcher, commands);
    };
  };

  const sendMain = makeSender(main, options.main);
  const sendSecond = perSecond === undefined ? undefined : makeSender(perSecond, options.perSecond!);
  const batching = (client: RedisClientOptions): boolean => (client.pipelineWindowMs ?? 0) > 0;

  const append = (commands: RedisCommand[], op: CounterOp, increment: boolean): void => {
    if (increment) {
      commands.push(['incrby', op.key, op.hits], ['expire', op.key, op.ttlSeconds]);
    } else {
      commands.push(['get', op.key]);
    }
  };

  /**
   * Cluster mode (upstream groups commands by key): one small pipeline per key, `pool.parallelism` at a time
   * (1 = serially, as upstream's default; with a pipeline window all at once, since they are batched anyway).
   * Writes each key's INCRBY/GET reply into out.
   */
  const runPerKey = async (
    send: Send,
    width: number,
    ops: readonly CounterOp[],
    indices: readonly number[],
    increment: boolean,
    out: number[],
  ): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < indices.length) {
        const index = indices[next++]!;
        const commands: RedisCommand[] = [];
        append(commands, ops[index]!, increment);
        out[index] = toCount((await send(commands))[0]);
      }
    };
    const workers: Promise<void>[] = [];
    for (let w = 0; w < Math.min(width, indices.length); w++) workers.push(worker());
    await Promise.all(workers);
  };

  /**
   * One pipeline per Redis (main, and per-second for SECOND keys when configured), run concurrently; returns the
   * INCRBY (or GET) reply of each op in op order.
   */
  const execute = async (ops: readonly CounterOp[], increment: boolean): Promise<number[]> => {
    if (closed) throw new BackendError('redis backend is closed');
    const out = new Array<number>(ops.length);
    if (main.perKeyPipelines || perSecond?.perKeyPipelines === true) {
      const mainIndices: number[] = [];
      const secondIndices: number[] = [];
      for (let i = 0; i < ops.length; i++) {
        (perSecond !== undefined && ops[i]!.perSecond ? secondIndices : mainIndices).push(i);
      }
      const runOn = (pool: RedisPool, client: RedisClientOptions, send: Send, indices: number[]): Promise<void> =>
        pool.perKeyPipelines
          ? runPerKey(send, batching(client) ? indices.length : pool.parallelism, ops, indices, increment, out)
          : runShared(send, ops, indices, increment, out);
      await Promise.all([
        mainIndices.length > 0 ? runOn(main, options.main, sendMain, mainIndices) : undefined,
        secondIndices.length > 0 ? runOn(perSecond!, options.perSecond!, sendSecond!, secondIndices) : undefined,
      ]);
      return out;
    }
    let mainCommands: RedisCommand[] | undefined;
    let secondCommands: RedisCommand[] | undefined;
    for (const op of ops) {
      let commands: RedisCommand[];
      if (perSecond !== undefined && op.perSecond) commands = secondCommands ??= [];
      else commands = mainCommands ??= [];
      append(commands, op, increment);
    }
    const [mainReplies, secondReplies] = await Promise.all([
      mainCommands === undefined ? undefined : sendMain(mainCommands),
      secondCommands === undefined ? undefined : sendSecond!(secondCommands),
    ]);
    const stride = increment ? 2 : 1;
    let m = 0;
    let s = 0;
    for (let i = 0; i < ops.length; i++) {
      const reply =
        perSecond !== undefined && ops[i]!.perSecond ? secondReplies![s++ * stride] : mainReplies![m++ * stride];
      out[i] = toCount(reply);
    }
    return out;
  };

  /** One pipeline on a non-cluster pool for the ops at `indices` (used when the other pool is a cluster). */
  const runShared = async (
    send: Send,
    ops: readonly CounterOp[],
    indices: readonly number[],
    increment: boolean,
    out: number[],
  ): Promise<void> => {
    const commands: RedisCommand[] = [];
    for (const index of indices) append(commands, ops[index]!, increment);
    const replies = await send(commands);
    const stride = increment ? 2 : 1;
    for (let k = 0; k < indices.length; k++) out[indices[k]!] = toCount(replies[k * stride]);
  };

  return {
    increment: (ops) => execute(ops, true),
    get: (ops) => execute(ops, false),
    async close() {
      if (closed) return;
      closed = true;
      for (const batcher of batchers) batcher.flushNow();
      await Promise.all(pools.map((p) => p.close()));
    },
    activeConnections: () => ({ main: main.activeCount(), perSecond: perSecond?.activeCount() ?? 0 }),
    pipelineCount: () => pipelines,
  };
}

function createPool(options: RedisClientOptions, deps: RedisPoolDeps): RedisPool {
  return options.type === 'cluster' ? createClusterPool(options, deps) : createRedisPool(options, deps);
}

/** An INCRBY reply (number) or a GET reply (string or null) as a count. */
function toCount(reply: unknown): number {
  if (typeof reply === 'number') return reply;
  if (reply === null || reply === undefined) return 0;
  const n = Number(reply);
  if (!Number.isFinite(n)) throw new BackendError(`unexpected redis reply '${String(reply)}'`);
  return n;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
