// The Redis counter store: one pipelined INCRBY+EXPIRE round trip per request per Redis, per-second split (§2.2).
import type { Redis } from 'ioredis';
import { BackendError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { StatsStore } from '../stats/stats-store.js';
import type { CounterBackend, CounterOp } from './backend.js';
import { exponentialBackoff, type BackoffOptions } from './backoff.js';
import { createClusterPool } from './redis-cluster-pool.js';
import { createRedisPool, type RedisClientOptions, type RedisPool, type RedisPoolDeps } from './redis-pool.js';

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
}

/**
 * Connects (retrying with backoff until PING = PONG on every connection, forever when maxElapsedMs is 0) and
 * returns the backend. Logs "connecting to redis on <url> with pool size N" like upstream.
 * @throws BackendError 'timed out waiting for Redis connection …' when maxElapsedMs passes, or when aborted.
 */
export async function connectRedisBackend(options: RedisBackendOptions): Promise<RedisBackend> {
  const { logger, stats } = options;
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

  type Pipeline = ReturnType<Redis['pipeline']>;

  /** Executes one pipeline and returns its replies, or throws BackendError with Redis' text. */
  const run = async (pipeline: Pipeline): Promise<unknown[]> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const results = await Promise.race([
        pipeline.exec(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`redis request timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      if (results === null) throw new Error('redis pipeline was aborted');
      const out = new Array<unknown>(results.length);
      for (let i = 0; i < results.length; i++) {
        const [err, value] = results[i]!;
        if (err !== null) throw err;
        out[i] = value;
      }
      return out;
    } catch (err) {
      throw new BackendError((err as Error).message, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  };

  const append = (pipeline: Pipeline, op: CounterOp, increment: boolean): void => {
    if (increment) {
      pipeline.incrby(op.key, op.hits);
      pipeline.expire(op.key, op.ttlSeconds);
    } else {
      pipeline.get(op.key);
    }
  };

  /**
   * Cluster mode (upstream groups commands by key): one small pipeline per key, `pool.parallelism` at a time
   * (1 = serially, as upstream's default). Writes each key's INCRBY/GET reply into out.
   */
  const runPerKey = async (
    pool: RedisPool,
    ops: readonly CounterOp[],
    indices: readonly number[],
    increment: boolean,
    out: number[],
  ): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < indices.length) {
        const index = indices[next++]!;
        const pipeline = pool.next().pipeline();
        append(pipeline, ops[index]!, increment);
        out[index] = toCount((await run(pipeline))[0]);
      }
    };
    const workers: Promise<void>[] = [];
    for (let w = 0; w < Math.min(pool.parallelism, indices.length); w++) workers.push(worker());
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
      const runOn = (pool: RedisPool, indices: number[]): Promise<void> =>
        pool.perKeyPipelines
          ? runPerKey(pool, ops, indices, increment, out)
          : runShared(pool, ops, indices, increment, out);
      await Promise.all([
        mainIndices.length > 0 ? runOn(main, mainIndices) : undefined,
        secondIndices.length > 0 ? runOn(perSecond!, secondIndices) : undefined,
      ]);
      return out;
    }
    let mainPipeline: Pipeline | undefined;
    let secondPipeline: Pipeline | undefined;
    for (const op of ops) {
      let pipeline: Pipeline;
      if (perSecond !== undefined && op.perSecond) pipeline = secondPipeline ??= perSecond.next().pipeline();
      else pipeline = mainPipeline ??= main.next().pipeline();
      append(pipeline, op, increment);
    }
    const [mainReplies, secondReplies] = await Promise.all([
      mainPipeline === undefined ? undefined : run(mainPipeline),
      secondPipeline === undefined ? undefined : run(secondPipeline),
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
    pool: RedisPool,
    ops: readonly CounterOp[],
    indices: readonly number[],
    increment: boolean,
    out: number[],
  ): Promise<void> => {
    const pipeline = pool.next().pipeline();
    for (const index of indices) append(pipeline, ops[index]!, increment);
    const replies = await run(pipeline);
    const stride = increment ? 2 : 1;
    for (let k = 0; k < indices.length; k++) out[indices[k]!] = toCount(replies[k * stride]);
  };

  return {
    increment: (ops) => execute(ops, true),
    get: (ops) => execute(ops, false),
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(pools.map((p) => p.close()));
    },
    activeConnections: () => ({ main: main.activeCount(), perSecond: perSecond?.activeCount() ?? 0 }),
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
