// The upstream Go rate limit service (envoyproxy/ratelimit) as a child process for differential tests and benchmarks.
import { accessSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './ports.js';
import { startProcess, type RunningProcess } from './process.js';

/** A rate limit service (upstream or ours) listening on loopback ports. */
export interface RateLimitService {
  /** Short label used in failure messages ("upstream", "chorus"). */
  readonly label: string;
  readonly pid: number;
  /** `127.0.0.1:<port>` of the gRPC listener (no scheme). */
  readonly grpcAddress: string;
  /** `http://127.0.0.1:<port>` of the HTTP listener (/healthcheck, /json). */
  readonly httpUrl: string;
  /** `http://127.0.0.1:<port>` of the debug listener (/stats, /rlconfig). */
  readonly debugUrl: string;
  /** Everything the process wrote so far (stdout and stderr), for failure messages. */
  output(): string;
  /** Stops the process (SIGTERM, then SIGKILL) and resolves once it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

/** The upstream service plus a reader for its counters. */
export interface UpstreamRateLimit extends RateLimitService {
  /**
   * Cumulative value of every counter the service has flushed, keyed by the full stat name
   * (e.g. `ratelimit.service.rate_limit.domain.key_value.total_hits`). Waits until at least one complete stats
   * flush has started after this call, so counts include every request answered before the call.
   */
  counters(): Promise<ReadonlyMap<string, number>>;
}

export interface UpstreamRateLimitOptions {
  /** Redis `host:port` (TCP). */
  readonly redisUrl: string;
  /** RUNTIME_ROOT; rule files live in `<runtimeRoot>/<runtimeSubdirectory>/config/`. */
  readonly runtimeRoot: string;
  readonly runtimeSubdirectory: string;
  /** Extra or overriding environment (e.g. SHADOW_MODE, CACHE_KEY_PREFIX, LIMIT_RESPONSE_HEADERS_ENABLED). */
  readonly env?: Readonly<Record<string, string>>;
  /** How long to wait for /healthcheck to answer 200; default 20000. */
  readonly startTimeoutMs?: number;
}

/** Options for launching any ratelimit-compatible service binary with upstream's environment contract. */
export interface RateLimitProcessOptions {
  readonly label: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  /** Environment for the service; the launcher adds PORT, GRPC_PORT, DEBUG_PORT and the *_HOST loopback binds. */
  readonly env: Readonly<Record<string, string>>;
  readonly startTimeoutMs?: number;
  /** Called with every chunk of stderr (the upstream stats sink writes there). */
  readonly onStderr?: (chunk: string) => void;
}

export class MissingToolError extends Error {
  readonly code = 'missing_tool';
  constructor(message: string) {
    super(message);
    this.name = 'MissingToolError';
  }
}

/** The bin dir test/tools/env.sh exports, with the same default when the file was not sourced. */
export function toolsBinDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CHORUS_TOOLS_BIN !== undefined && env.CHORUS_TOOLS_BIN !== '') return env.CHORUS_TOOLS_BIN;
  const toolsDir =
    env.CHORUS_TOOLS_DIR !== undefined && env.CHORUS_TOOLS_DIR !== ''
      ? env.CHORUS_TOOLS_DIR
      : path.join(env.XDG_CACHE_HOME ?? path.join(env.HOME ?? '/root', '.cache'), 'chorus-tools');
  return path.join(toolsDir, 'bin');
}

/** Path of a binary built by test/tools/build-tools.sh, or a MissingToolError that says how to build it. */
export function requireTool(name: string): string {
  const candidate = path.join(toolsBinDir(), name);
  try {
    accessSync(candidate, constants.X_OK);
  } catch {
    throw new MissingToolError(
      `${candidate} is missing: run \`make tools\` (bash test/tools/build-tools.sh) and \`source test/tools/env.sh\``,
    );
  }
  return candidate;
}

/** Writes rule files into `<root>/<sub>/config/`, creating the directories; returns that config directory. */
export function writeRuleFiles(
  runtimeRoot: string,
  runtimeSubdirectory: string,
  files: Readonly<Record<string, string>>,
): string {
  const dir = path.join(runtimeRoot, runtimeSubdirectory, 'config');
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a ratelimit-compatible service on free loopback ports and waits until /healthcheck returns 200. */
export async function startRateLimitProcess(options: RateLimitProcessOptions): Promise<RateLimitService> {
  const [httpPort, grpcPort, debugPort] = [await freePort(), await freePort(), await freePort()];
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    HOST: '127.0.0.1',
    GRPC_HOST: '127.0.0.1',
    DEBUG_HOST: '127.0.0.1',
    ...options.env,
    PORT: String(httpPort),
    GRPC_PORT: String(grpcPort),
    DEBUG_PORT: String(debugPort),
  };
  const proc: RunningProcess = startProcess(options.command, options.args, { env, cwd: options.cwd });
  if (options.onStderr !== undefined) {
    const onStderr = options.onStderr;
    proc.child.stderr?.on('data', (chunk: Buffer) => onStderr(chunk.toString()));
  }
  const service: RateLimitService = {
    label: options.label,
    pid: proc.child.pid ?? -1,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    httpUrl: `http://127.0.0.1:${httpPort}`,
    debugUrl: `http://127.0.0.1:${debugPort}`,
    output: () => proc.output(),
    stop: () => proc.stop(),
  };
  const timeoutMs = options.startTimeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  let lastProblem: string;
  for (;;) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
      throw new Error(
        `${options.label} exited during startup (code ${proc.child.exitCode}, signal ${proc.child.signalCode}):\n${proc.output()}`,
      );
    }
    try {
      const res = await fetch(`${service.httpUrl}/healthcheck`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return service;
      lastProblem = `/healthcheck answered ${res.status}`;
    } catch (err) {
      lastProblem = (err as Error).message;
    }
    if (Date.now() > deadline) {
      await proc.stop();
      throw new Error(`${options.label} not healthy after ${timeoutMs} ms (${lastProblem}):\n${proc.output()}`);
    }
    await sleep(100);
  }
}

/** Parses the gostats logging sink (JSON lines on stderr) into cumulative counters and a flush count. */
function createLoggingSinkReader(): {
  feed(chunk: string): void;
  readonly counters: Map<string, number>;
  flushes(): number;
} {
  const counters = new Map<string, number>();
  let flushCount = 0;
  let partial = '';
  return {
    counters,
    flushes: () => flushCount,
    feed(chunk: string) {
      partial += chunk;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.includes('gostats.loggingsink')) continue;
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          continue;
        }
        const json = (parsed as { json?: Record<string, string> }).json ?? {};
        if (json.type === 'all stats') flushCount += 1;
        else if (json.type === 'counter' && json.name !== undefined && json.value !== undefined) {
          // gostats flushes counters as deltas since the previous flush.
          counters.set(json.name, (counters.get(json.name) ?? 0) + Number(json.value));
        }
      }
    },
  };
}

const STATS_FLUSH_INTERVAL_MS = 100;

/**
 * Starts the upstream Go service (CHORUS_TOOLS_BIN/ratelimit) against a Redis and a rule directory.
 * Its debug /stats is Go expvar, where gostats counters never appear, so counters are read from the gostats
 * logging sink instead (the sink upstream picks when no statsd/dogstatsd/prometheus sink is configured).
 */
export async function startUpstreamRateLimit(options: UpstreamRateLimitOptions): Promise<UpstreamRateLimit> {
  const command = requireTool('ratelimit');
  const sink = createLoggingSinkReader();
  const service = await startRateLimitProcess({
    label: 'upstream',
    command,
    args: [],
    startTimeoutMs: options.startTimeoutMs,
    onStderr: (chunk) => sink.feed(chunk),
    env: {
      USE_STATSD: 'false',
      STATS_FLUSH_INTERVAL: `${STATS_FLUSH_INTERVAL_MS}ms`,
      LOG_LEVEL: 'warn',
      BACKEND_TYPE: 'redis',
      REDIS_SOCKET_TYPE: 'tcp',
      REDIS_TYPE: 'single',
      REDIS_URL: options.redisUrl,
      RUNTIME_ROOT: options.runtimeRoot,
      RUNTIME_SUBDIRECTORY: options.runtimeSubdirectory,
      RUNTIME_WATCH_ROOT: 'false',
      ...options.env,
    },
  });
  return {
    ...service,
    async counters() {
      // Two flush markers: the first may belong to a flush already under way when we were called.
      const target = sink.flushes() + 2;
      const deadline = Date.now() + 50 * STATS_FLUSH_INTERVAL_MS;
      while (sink.flushes() < target) {
        if (Date.now() > deadline) throw new Error(`upstream stats did not flush:\n${service.output().slice(-2000)}`);
        await sleep(STATS_FLUSH_INTERVAL_MS / 2);
      }
      return new Map(sink.counters);
    },
  };
}
