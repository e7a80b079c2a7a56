// Upstream and ours started side by side on the same rule files and environment, each on its own real Redis.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { startUpstreamRateLimit, writeRuleFiles, type RateLimitService } from '../support/upstream-ratelimit.js';
import { startChorusRateLimit } from './chorus-service.js';
import { createRlsClient, type RlsClient } from './rls-client.js';

/** One side of the comparison. */
export interface DiffService extends RateLimitService {
  readonly client: RlsClient;
  readonly redis: RedisServer;
  counters(): Promise<ReadonlyMap<string, number>>;
}

export interface ServicePair {
  readonly upstream: DiffService;
  readonly ours: DiffService;
  /** Directory holding `<sub>/config/*` (RUNTIME_ROOT). */
  readonly runtimeRoot: string;
  stop(): Promise<void>;
}

export interface ServicePairOptions {
  /** Rule files by file name, written to both services' config directory. */
  readonly files: Readonly<Record<string, string>>;
  /** Extra environment given to both services. */
  readonly env?: Readonly<Record<string, string>>;
  /** Environment for one side only (e.g. where each sends its statsd lines), applied after `env`. */
  readonly upstreamEnv?: Readonly<Record<string, string>>;
  readonly oursEnv?: Readonly<Record<string, string>>;
}

/**
 * Which implementation plays "ours": `chorus` (default) or `upstream`, which runs upstream against itself to
 * validate the harness (CHORUS_DIFF_TARGET=upstream).
 */
export function diffTarget(): 'chorus' | 'upstream' {
  const target = process.env.CHORUS_DIFF_TARGET ?? 'chorus';
  if (target !== 'chorus' && target !== 'upstream') throw new Error(`CHORUS_DIFF_TARGET must be chorus or upstream`);
  return target;
}

/** Backend ours runs with: `redis` (default) or `memory` (CHORUS_DIFF_BACKEND), to compare the in-memory store too. */
export function diffBackend(): 'redis' | 'memory' {
  const backend = process.env.CHORUS_DIFF_BACKEND ?? 'redis';
  if (backend !== 'redis' && backend !== 'memory') throw new Error(`CHORUS_DIFF_BACKEND must be redis or memory`);
  return backend;
}

const SUBDIRECTORY = 'ratelimit';

export async function startServicePair(options: ServicePairOptions): Promise<ServicePair> {
  const runtimeRoot = mkdtempSync(path.join(os.tmpdir(), 'chorus-diff-'));
  writeRuleFiles(runtimeRoot, SUBDIRECTORY, options.files);
  const started: Array<{ stop(): Promise<void> }> = [];
  const stopAll = async (): Promise<void> => {
    for (const s of started.reverse()) await s.stop();
    rmSync(runtimeRoot, { recursive: true, force: true });
  };
  try {
    const upRedis = await startRedisServer();
    started.push(upRedis);
    const ourRedis = await startRedisServer();
    started.push(ourRedis);
    const base = (redis: RedisServer): Record<string, string> => ({
      USE_STATSD: 'false',
      LOG_LEVEL: 'warn',
      REDIS_SOCKET_TYPE: 'tcp',
      REDIS_URL: redis.url,
      RUNTIME_ROOT: runtimeRoot,
      RUNTIME_SUBDIRECTORY: SUBDIRECTORY,
      RUNTIME_WATCH_ROOT: 'false',
      BACKEND_TYPE: diffBackend(),
      ...options.env,
      ...options.oursEnv,
    });
    const up = await startUpstreamRateLimit({
      redisUrl: upRedis.url,
      runtimeRoot,
      runtimeSubdirectory: SUBDIRECTORY,
      env: { ...options.env, ...options.upstreamEnv },
    });
    started.push(up);
    const ours =
      diffTarget() === 'upstream'
        ? await startUpstreamRateLimit({
            redisUrl: ourRedis.url,
            runtimeRoot,
            runtimeSubdirectory: SUBDIRECTORY,
            env: { ...options.env, ...options.oursEnv },
          })
        : await startChorusRateLimit({ env: base(ourRedis) });
    started.push(ours);
    const upstream: DiffService = { ...up, client: createRlsClient(up.grpcAddress), redis: upRedis };
    const mine: DiffService = { ...ours, client: createRlsClient(ours.grpcAddress), redis: ourRedis };
    started.push({ stop: async () => upstream.client.close() }, { stop: async () => mine.client.close() });
    return { upstream, ours: mine, runtimeRoot, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
