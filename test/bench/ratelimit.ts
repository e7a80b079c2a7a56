// Rate limit benchmark: ghz at fixed concurrency against ours (memory, Redis) and upstream (same Redis); prints a table.
//
// Run: source test/tools/env.sh && npx tsx test/bench/ratelimit.ts
// Knobs: BENCH_DURATION_S (measured seconds per run, default 8), BENCH_ROUNDS (interleaved rounds, median shown,
//        default 2), BENCH_CONCURRENCY (default 32),
//        BENCH_TARGETS (comma list of ours-memory,ours-redis,ours-redis-2w,upstream; default these four; also
//        ours-redis-window, ours-cluster, ours-cluster-window, upstream-cluster: REDIS_PIPELINE_WINDOW on, and a
//        local 3-master Redis Cluster started only when a cluster target is chosen),
//        BENCH_PIPELINE_WINDOW (REDIS_PIPELINE_WINDOW of the *-window and upstream-cluster targets, default 1ms),
//        BENCH_OURS (build: tsc to a temp dir, run with node, the default; source: run through tsx).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startChorusRateLimit } from '../differential/chorus-service.js';
import { createRlsClient } from '../differential/rls-client.js';
import { startRedisCluster, type RedisClusterNodes } from '../integration/sidecar/backends/redis-cluster-nodes.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import {
  requireTool,
  startUpstreamRateLimit,
  writeRuleFiles,
  type RateLimitService,
} from '../support/upstream-ratelimit.js';
import { compileSidecar } from './compiled-sidecar.js';
import { runGhz, type GhzResult } from './ghz-run.js';
import { treeRssMiB } from './process-rss.js';

const DESCRIPTOR_COUNTS = [1, 3] as const;
const DEFAULT_TARGETS = ['ours-memory', 'ours-redis', 'ours-redis-2w', 'upstream'] as const;
const TARGETS = [
  ...DEFAULT_TARGETS,
  'ours-redis-window',
  'ours-cluster',
  'ours-cluster-window',
  'upstream-cluster',
] as const;
type Target = (typeof TARGETS)[number];
const isClusterTarget = (t: Target): boolean => t.includes('cluster');

const RULES = `
domain: bench
descriptors:
  - key: k1
    rate_limit: { unit: hour, requests_per_unit: 1000000000 }
  - key: k2
    rate_limit: { unit: hour, requests_per_unit: 1000000000 }
  - key: k3
    rate_limit: { unit: hour, requests_per_unit: 1000000000 }
`;

interface Settings {
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly concurrency: number;
  /** `build`: ours compiled with tsc and run with plain node (as shipped); `source`: through tsx. */
  readonly oursFrom: 'build' | 'source';
  /** Interleaved measurement rounds; the table shows each cell's median run. */
  readonly rounds: number;
  readonly targets: readonly Target[];
  /** REDIS_PIPELINE_WINDOW for the *-window targets and upstream-cluster (a Go duration). */
  readonly pipelineWindow: string;
}

function parseOursFrom(raw: string | undefined): 'build' | 'source' {
  if (raw === undefined || raw === '' || raw === 'build') return 'build';
  if (raw === 'source') return 'source';
  throw new Error(`BENCH_OURS must be build or source, got ${raw}`);
}

function parseSettings(env: NodeJS.ProcessEnv): Settings {
  const positive = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${raw}`);
    return n;
  };
  const targets = (env.BENCH_TARGETS ?? DEFAULT_TARGETS.join(',')).split(',').map((t) => t.trim());
  for (const t of targets) {
    if (!(TARGETS as readonly string[]).includes(t)) throw new Error(`unknown BENCH_TARGETS entry ${t}`);
  }
  return {
    durationSeconds: positive('BENCH_DURATION_S', 8),
    rounds: positive('BENCH_ROUNDS', 2),
    oursFrom: parseOursFrom(env.BENCH_OURS),
    warmupSeconds: 2,
    concurrency: positive('BENCH_CONCURRENCY', 32),
    targets: targets as Target[],
    pipelineWindow: env.BENCH_PIPELINE_WINDOW ?? '1ms',
  };
}

function benchRequest(descriptors: number): { domain: string; descriptors: unknown[] } {
  return {
    domain: 'bench',
    descriptors: Array.from({ length: descriptors }, (_, i) => ({ entries: [{ key: `k${i + 1}`, value: 'v' }] })),
  };
}

interface Row {
  readonly target: Target;
  readonly descriptors: number;
  readonly result?: GhzResult;
  readonly rssMiB?: number;
  readonly failure?: string;
}

async function startTarget(
  target: Target,
  redis: RedisServer,
  cluster: RedisClusterNodes | undefined,
  runtimeRoot: string,
  compiledMain: string | undefined,
  pipelineWindow: string,
): Promise<RateLimitService> {
  const clusterUrl = (): string => {
    if (cluster === undefined) throw new Error('no Redis Cluster started');
    return cluster.url;
  };
  const common = {
    USE_STATSD: 'false',
    LOG_LEVEL: 'warn',
    RUNTIME_ROOT: runtimeRoot,
    RUNTIME_SUBDIRECTORY: 'ratelimit',
    RUNTIME_WATCH_ROOT: 'false',
  };
  switch (target) {
    case 'ours-memory':
      return startChorusRateLimit({ compiledMain, env: { ...common, BACKEND_TYPE: 'memory' } });
    case 'ours-redis':
      return startChorusRateLimit({
        compiledMain,
        env: {
          ...common,
          BACKEND_TYPE: 'redis',
          REDIS_SOCKET_TYPE: 'tcp',
          REDIS_URL: redis.url,
          CACHE_KEY_PREFIX: 'ours:',
        },
      });
    case 'ours-redis-2w':
      // Two node:cluster workers on one port: the gRPC stack, not Redis, is our ceiling (DESIGN.md).
      return startChorusRateLimit({
        compiledMain,
        env: {
          ...common,
          BACKEND_TYPE: 'redis',
          REDIS_SOCKET_TYPE: 'tcp',
          REDIS_URL: redis.url,
          CACHE_KEY_PREFIX: 'ours2:',
          WORKERS: '2',
        },
      });
    case 'ours-redis-window':
      return startChorusRateLimit({
        compiledMain,
        env: {
          ...common,
          BACKEND_TYPE: 'redis',
          REDIS_SOCKET_TYPE: 'tcp',
          REDIS_URL: redis.url,
          CACHE_KEY_PREFIX: 'oursw:',
          REDIS_PIPELINE_WINDOW: pipelineWindow,
        },
      });
    case 'ours-cluster':
    case 'ours-cluster-window':
      return startChorusRateLimit({
        compiledMain,
        env: {
          ...common,
          BACKEND_TYPE: 'redis',
          REDIS_TYPE: 'cluster',
          REDIS_URL: clusterUrl(),
          CACHE_KEY_PREFIX: target === 'ours-cluster' ? 'oursc:' : 'ourscw:',
          REDIS_PIPELINE_WINDOW: target === 'ours-cluster' ? '0' : pipelineWindow,
        },
      });
    case 'upstream-cluster':
      // Upstream applies the window only in cluster mode, where its README calls it required.
      return startUpstreamRateLimit({
        redisUrl: clusterUrl(),
        runtimeRoot,
        runtimeSubdirectory: 'ratelimit',
        env: {
          CACHE_KEY_PREFIX: 'upc:',
          STATS_FLUSH_INTERVAL: '10s',
          REDIS_TYPE: 'cluster',
          REDIS_PIPELINE_WINDOW: pipelineWindow,
        },
      });
    case 'upstream':
      return startUpstreamRateLimit({
        redisUrl: redis.url,
        runtimeRoot,
        runtimeSubdirectory: 'ratelimit',
        // The launcher's 100 ms flush is for tests; upstream's default keeps the stats sink off the hot path.
        env: { CACHE_KEY_PREFIX: 'up:', STATS_FLUSH_INTERVAL: '10s' },
      });
  }
}

/** One request through our own client, so a benchmark never measures a service that rejects everything. */
async function checkAnswers(service: RateLimitService, descriptors: number): Promise<void> {
  const client = createRlsClient(service.grpcAddress);
  try {
    const outcome = await client.shouldRateLimit({
      domain: 'bench',
      hitsAddend: 0,
      descriptors: Array.from({ length: descriptors }, (_, i) => ({
        entries: [{ key: `k${i + 1}`, value: 'check' }],
        limit: undefined,
        hitsAddend: undefined,
      })),
    });
    if (outcome.kind === 'error') throw new Error(`gRPC error ${outcome.code}: ${outcome.message}`);
    const limited = outcome.response.statuses.filter((s) => s.currentLimit?.requestsPerUnit === 1_000_000_000);
    if (outcome.response.overallCode !== 1 || limited.length !== descriptors) {
      throw new Error(`unexpected answer ${JSON.stringify(outcome.response)}`);
    }
  } finally {
    client.close();
  }
}

function fmt(n: number | undefined, digits = 0): string {
  return n === undefined || Number.isNaN(n) ? '-' : n.toFixed(digits);
}

function printTable(rows: readonly Row[], settings: Settings): void {
  // Cluster targets compare with upstream in cluster mode, the others with upstream on one Redis.
  const upstreamRps = (target: Target, d: number): number | undefined =>
    rows.find((r) => r.target === (isClusterTarget(target) ? 'upstream-cluster' : 'upstream') && r.descriptors === d)
      ?.result?.requestsPerSecond;
  const header = [
    'target',
    'descr',
    'requests/s',
    'decisions/s',
    'p50 ms',
    'p99 ms',
    'errors',
    'RSS MiB',
    'vs upstream',
  ];
  const lines = rows.map((r) => {
    if (r.result === undefined) return [r.target, String(r.descriptors), `FAILED: ${r.failure ?? '?'}`];
    const errors = Object.values(r.result.errors).reduce((a, b) => a + b, 0);
    const up = upstreamRps(r.target, r.descriptors);
    return [
      r.target,
      String(r.descriptors),
      fmt(r.result.requestsPerSecond),
      fmt(r.result.requestsPerSecond * r.descriptors),
      fmt(r.result.p50Ms, 2),
      fmt(r.result.p99Ms, 2),
      r.result.cutAtEnd > 0 ? `${errors} (+${r.result.cutAtEnd} cut)` : String(errors),
      fmt(r.rssMiB),
      up === undefined || r.target.startsWith('upstream') ? '' : `${fmt(r.result.requestsPerSecond / up, 2)}x`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const row = (cells: readonly string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  console.log(
    `\nShouldRateLimit, ghz --concurrency ${settings.concurrency}, ${settings.durationSeconds}s measured after ${settings.warmupSeconds}s warm-up, median of ${settings.rounds} interleaved round(s), ours from ${settings.oursFrom}, pipeline window ${settings.pipelineWindow} (*-window, upstream-cluster), load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'})`,
  );
  console.log(row(header));
  // Calls ghz cuts off when the duration ends are not server errors; they are listed, not counted.
  for (const l of lines) console.log(row(l));
  for (const r of rows) {
    if (r.result !== undefined && Object.keys(r.result.errors).length > 0) {
      console.log(`errors ${r.target} x${r.descriptors}: ${JSON.stringify(r.result.errors)}`);
    }
  }
}

/** The run with the median requests/s (the lower middle one for an even count). */
function medianRun(results: readonly GhzResult[]): GhzResult | undefined {
  const sorted = [...results].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

async function main(): Promise<void> {
  const settings = parseSettings(process.env);
  const ghz = requireTool('ghz');
  const runtimeRoot = mkdtempSync(path.join(os.tmpdir(), 'chorus-bench-'));
  writeRuleFiles(runtimeRoot, 'ratelimit', { 'bench.yaml': RULES });
  const ours = settings.oursFrom === 'build' ? await compileSidecar() : undefined;
  const redis = await startRedisServer();
  const cluster = settings.targets.some(isClusterTarget) ? await startRedisCluster() : undefined;
  const services = new Map<Target, RateLimitService>();
  const failures = new Map<string, string>();
  const results = new Map<string, GhzResult[]>();
  const rss = new Map<Target, number>();
  const cell = (target: Target, descriptors: number): string => `${target}/${descriptors}`;
  try {
    // All targets stay up for the whole run and are measured in interleaved rounds, so a load change on the
    // shared machine hits every target alike; an idle server costs next to nothing meanwhile.
    for (const target of settings.targets) {
      try {
        services.set(
          target,
          await startTarget(target, redis, cluster, runtimeRoot, ours?.main, settings.pipelineWindow),
        );
      } catch (err) {
        const failure = (err as Error).message.split('\n').slice(0, 2).join(' ');
        for (const d of DESCRIPTOR_COUNTS) failures.set(cell(target, d), failure);
      }
    }
    for (let round = 1; round <= settings.rounds; round++) {
      for (const [target, service] of services) {
        for (const descriptors of DESCRIPTOR_COUNTS) {
          const key = cell(target, descriptors);
          if (failures.has(key)) continue;
          try {
            await checkAnswers(service, descriptors);
            const common = {
              ghz,
              address: service.grpcAddress,
              request: benchRequest(descriptors),
              skipFirst: 0,
              concurrency: settings.concurrency,
            };
            await runGhz({ ...common, durationSeconds: settings.warmupSeconds });
            const result = await runGhz({ ...common, durationSeconds: settings.durationSeconds });
            results.set(key, [...(results.get(key) ?? []), result]);
            rss.set(target, Math.max(rss.get(target) ?? 0, treeRssMiB(service.pid)));
            console.error(`round ${round} ${target} x${descriptors}: ${result.requestsPerSecond.toFixed(0)} req/s`);
          } catch (err) {
            failures.set(key, (err as Error).message.split('\n')[0] ?? 'failed');
          }
        }
      }
    }
  } finally {
    for (const service of services.values()) await service.stop();
    await redis.stop();
    await cluster?.stop();
    rmSync(runtimeRoot, { recursive: true, force: true });
    ours?.remove();
  }
  const rows: Row[] = [];
  for (const target of settings.targets) {
    for (const descriptors of DESCRIPTOR_COUNTS) {
      const key = cell(target, descriptors);
      const failure = failures.get(key);
      const result = failure === undefined ? medianRun(results.get(key) ?? []) : undefined;
      rows.push({ target, descriptors, result, rssMiB: rss.get(target), failure });
    }
  }
  printTable(rows, settings);
  if (rows.some((r) => r.result === undefined)) process.exitCode = 1;
}

await main();
