// The composition root of the sidecar: stats, health, config source, decision service, servers and shutdown.
import { readFileSync } from 'node:fs';
import { loadRateLimitConfig, xdsConfigToSource } from './config/index.js';
import { createFileConfigSource } from './config/file-source.js';
import type { RateLimitConfig } from './config/types.js';
import { createXdsConfigSource } from './xds/index.js';
import { systemClock, type Clock } from './clock.js';
import { createHealth, type Health } from './health.js';
import { silentLogger, type Logger } from './logger.js';
import type { DecisionService } from './server/decision-service.js';
import { startDebugServer, type RunningDebugServer } from './server/debug-server.js';
import { startGrpcServer, type RunningGrpcServer } from './server/grpc-server.js';
import { createGrpcServerCredentials } from './server/grpc-tls.js';
import { startHttpServer, type RunningHttpServer } from './server/http-server.js';
import {
  connectMemcacheBackend,
  connectRedisBackend,
  createFixedWindowLimiter,
  createLocalOverLimitCache,
  createMemoryBackend,
  type CounterBackend,
  type RedisClientOptions,
  type RedisTlsOptions,
} from './limiter/index.js';
import { createRateLimitService } from './service/index.js';
import { SettingsError } from './settings/settings-error.js';
import type { RedisInstanceSettings, Settings } from './settings/settings.js';
import { createRateLimitStatsCache } from './stats/rate-limit-stats.js';
import { parseMapperYaml } from './stats/prometheus-mapper.js';
import { createPrometheusExporter, startPrometheusServer, type RunningPrometheusServer } from './stats/prometheus.js';
import { startDogStatsdSink } from './stats/dogstatsd-sink.js';
import { startLoggingSink } from './stats/logging-sink.js';
import { startStatsdSink, type StatsdSink } from './stats/statsd-sink.js';
import { StatsStore } from './stats/stats-store.js';
import { createTracing } from './tracing/index.js';

/** What a config source reports to the runner (the file source and the xDS source share this shape). */
export interface ConfigSourceCallbacks {
  readonly logger: Logger;
  /** A complete new config was loaded; `names` are the files or resources it came from. */
  onConfig(config: RateLimitConfig, names: readonly string[]): void;
  /** A load failed; the previous config stays in force. */
  onError(err: Error): void;
}

export interface ConfigSource {
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

export type ConfigSourceFactory = (settings: Settings, callbacks: ConfigSourceCallbacks) => ConfigSource;

/** Everything the decision service needs from the runner. */
export interface DecisionServiceContext {
  readonly settings: Settings;
  /** The config now in force; undefined until the first successful load. */
  readonly getConfig: () => RateLimitConfig | undefined;
  readonly stats: StatsStore;
  readonly health: Health;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Aborted when a stop is requested while the backend is still connecting. */
  readonly signal: AbortSignal;
}

export interface DecisionServiceHandle {
  readonly service: DecisionService;
  /** Closes the backend connections. */
  close(): Promise<void>;
}

/** Builds the service; may wait for its backend (Redis retries until PING answers, as upstream's startup). */
export type DecisionServiceFactory = (context: DecisionServiceContext) => Promise<DecisionServiceHandle>;

export interface RunnerDeps {
  readonly logger: Logger;
  readonly createConfigSource: ConfigSourceFactory;
  readonly createDecisionService: DecisionServiceFactory;
  readonly clock?: Clock;
  /** How long in-flight calls may take after a stop before their connections are closed. */
  readonly shutdownGraceMs?: number;
  /** Aborting it during startup (a signal before the servers are up) makes startRateLimitServer reject. */
  readonly signal?: AbortSignal;
  /** Where the fallback logging stats sink writes; standard error by default. */
  readonly statsOutput?: (text: string) => void;
}

/** Startup was aborted through RunnerDeps.signal before the servers were listening. */
export class StartupAbortedError extends Error {
  readonly code = 'startup_aborted';
  constructor() {
    super('startup aborted');
    this.name = 'StartupAbortedError';
  }
}

export interface RunningRateLimitServer {
  readonly grpcPort: number;
  readonly httpPort: number;
  readonly debugPort: number;
  /** The Prometheus port, or undefined when USE_PROMETHEUS is off. */
  readonly prometheusPort: number | undefined;
  readonly health: Health;
  readonly stats: StatsStore;
  /** The config now in force. */
  currentConfig(): RateLimitConfig | undefined;
  /**
   * What main does on SIGINT/SIGTERM/SIGHUP: SIGTERM marks health `sigterm` failed, then every listener stops
   * accepting, in-flight calls finish, the config source and backend close. Resolves when all is stopped.
   */
  handleSignal(signal: NodeJS.Signals): Promise<void>;
  /** Stops everything (same as a signal, without touching health). Safe to call twice. */
  stop(): Promise<void>;
}

const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
// Rotated gRPC server certificates are picked up within this time (upstream watches the directory).
const TLS_REFRESH_INTERVAL_MS = 5_000;

/**
 * Starts the sidecar (with the production wiring and no logging when `deps` is omitted). Unless
 * FORCE_START_WITHOUT_INITIAL_CONFIG, resolves only after the first config event
 * (a success or an error) and the servers are listening. Port 0 in the settings picks free ports.
 * @throws Error when a listener cannot be bound (everything already started is stopped first)
 */
export async function startRateLimitServer(
  settings: Settings,
  deps: RunnerDeps = defaultRunnerDeps(silentLogger),
): Promise<RunningRateLimitServer> {
  const { logger } = deps;
  const clock = deps.clock ?? systemClock;
  const graceMs = deps.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
  const stats = new StatsStore(settings.stats.extraTags);
  const health = createHealth({
    // Only Redis reports its own state; the memory store is always there and memcache fails open.
    backendStartsHealthy: settings.limits.backendType !== 'redis',
    requireConfig: settings.limits.healthyWithAtLeastOneConfigLoaded,
  });
  for (const warning of settings.warnings) logger.warn(warning);

  let current: RateLimitConfig | undefined;
  const loadSuccess = stats.counter('ratelimit.service.config_load_success');
  const loadError = stats.counter('ratelimit.service.config_load_error');
  // The file source stands in for upstream's goruntime loader, which also reports these two stats (spec §2.16).
  const runtimeStats =
    settings.configSource.type === 'FILE'
      ? { loadAttempts: stats.counter('runtime.load_attempts'), numValues: stats.gauge('runtime.num_values') }
      : undefined;
  let firstEvent: () => void = () => undefined;
  const firstEventSeen = new Promise<void>((resolve) => (firstEvent = resolve));

  const cleanups: (() => Promise<void>)[] = [];
  const startup = new AbortController();
  const onOuterAbort = (): void => startup.abort();
  deps.signal?.addEventListener('abort', onOuterAbort, { once: true });
  if (deps.signal?.aborted === true) startup.abort();
  const aborted = new Promise<never>((_, reject) => {
    const fail = (): void => reject(new StartupAbortedError());
    if (startup.signal.aborted) fail();
    else startup.signal.addEventListener('abort', fail, { once: true });
  });
  aborted.catch(() => undefined);
  const untilAborted = <T>(p: Promise<T>): Promise<T> => Promise.race([p, aborted]);
  const runCleanups = async (): Promise<void> => {
    while (cleanups.length > 0) {
      const next = cleanups.pop();
      try {
        await next?.();
      } catch (err) {
        logger.error(`error while stopping: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };

  try {
    let sink: StatsdSink | undefined;
    const sinks = settings.stats;
    if (!sinks.disableStats && !sinks.useStatsd && !sinks.usePrometheus && !sinks.useDogStatsd) {
      // No sink chosen: upstream's gostats falls back to printing every flush (JSON lines on standard error).
      const logging = startLoggingSink(stats, { flushIntervalMs: sinks.flushIntervalMs, write: deps.statsOutput });
      cleanups.push(async () => logging.stop());
    }
    if (!sinks.disableStats && sinks.useDogStatsd) {
      const dog = startDogStatsdSink(stats, {
        host: sinks.statsdHost,
        port: sinks.statsdPort,
        flushIntervalMs: sinks.flushIntervalMs,
        mogrifiers: sinks.dogStatsdMogrifiers,
        logger,
      });
      cleanups.push(() => dog.stop());
    }
    if (!settings.stats.disableStats && settings.stats.useStatsd) {
      sink = startStatsdSink(stats, {
        host: settings.stats.statsdHost,
        port: settings.stats.statsdPort,
        flushIntervalMs: settings.stats.flushIntervalMs,
        logger,
      });
      const s = sink;
      cleanups.push(() => s.stop());
    }

    const decision = await untilAborted(
      deps.createDecisionService({
        settings,
        getConfig: () => current,
        stats,
        health,
        clock,
        logger,
        signal: startup.signal,
      }),
    );
    cleanups.push(() => decision.close());

    const source = deps.createConfigSource(settings, {
      logger,
      onConfig(config, names) {
        current = config;
        loadSuccess.inc();
        runtimeStats?.loadAttempts.inc();
        runtimeStats?.numValues.set(names.length);
        health.set('config', config.domains.length > 0);
        logger.info('successfully loaded new configuration', { files: names.join(',') });
        firstEvent();
      },
      onError(err) {
        loadError.inc();
        runtimeStats?.loadAttempts.inc();
        logger.error(`error loading new configuration from runtime: ${err.message}`);
        firstEvent();
      },
    });
    await untilAborted(Promise.resolve(source.start()));
    cleanups.push(async () => {
      await source.stop();
    });

    if (!settings.configSource.forceStartWithoutInitialConfig) {
      logger.info('Waiting for initial ratelimit config update event');
      await untilAborted(firstEventSeen);
    }

    // Listeners stop together, so the grace period is spent once, not once per listener.
    const listeners: { stop(graceMs: number): Promise<void> }[] = [];
    cleanups.push(async () => {
      await Promise.all(listeners.map((l) => l.stop(graceMs)));
    });
    const server = settings.server;
    const debug: RunningDebugServer = await startDebugServer(server.debugHost, server.debugPort, {
      currentConfig: () => current,
      stats,
      logger,
    });
    listeners.push(debug);
    logger.warn(`Listening for debug on '${joinHostPort(server.debugHost, debug.port)}'`);

    let prometheus: RunningPrometheusServer | undefined;
    if (!settings.stats.disableStats && settings.stats.usePrometheus) {
      const mapperFile = settings.stats.prometheusMapperYaml;
      const exporter = createPrometheusExporter(stats, {
        extraTagKeys: Object.keys(settings.stats.extraTags),
        responseTimeAsMilliseconds: settings.stats.prometheusResponseTimeAsMilliseconds,
        mapper:
          mapperFile === ''
            ? undefined
            : parseMapperYaml(readSettingFile('PROMETHEUS_MAPPER_YAML', mapperFile), mapperFile),
      });
      const p = await startPrometheusServer(
        settings.stats.prometheusHost,
        settings.stats.prometheusPort,
        settings.stats.prometheusPath,
        exporter,
        logger,
      );
      prometheus = p;
      listeners.push(p);
      logger.warn(`Listening for Prometheus on '${joinHostPort(settings.stats.prometheusHost, p.port)}'`);
    }

    const grpcAddress =
      server.grpcUds !== '' ? `unix:${server.grpcUds}` : joinHostPort(server.grpcHost, server.grpcPort);
    const tls = server.grpcServerUseTls
      ? createGrpcServerCredentials({
          certFile: server.grpcServerTlsCert,
          keyFile: server.grpcServerTlsKey,
          clientCaFile: server.grpcClientTlsCaCert,
          clientSan: server.grpcClientTlsSan,
          refreshIntervalMs: TLS_REFRESH_INTERVAL_MS,
        })
      : undefined;
    if (tls !== undefined) await untilAborted(tls.ready);
    const grpcServer: RunningGrpcServer = await startGrpcServer(grpcAddress, {
      credentials: tls?.credentials,
      requiredClientSan: server.grpcServerUseTls ? server.grpcClientTlsSan : '',
      service: decision.service,
      health,
      stats,
      logger,
      maxConnectionAgeMs: server.grpcMaxConnectionAgeMs,
      maxConnectionAgeGraceMs: server.grpcMaxConnectionAgeGraceMs,
    });
    listeners.push(grpcServer);
    logger.warn(
      `Listening for gRPC on '${server.grpcUds !== '' ? server.grpcUds : joinHostPort(server.grpcHost, grpcServer.port)}'`,
    );

    const http: RunningHttpServer = await startHttpServer(server.host, server.port, {
      service: decision.service,
      health,
      logger,
    });
    listeners.push(http);
    logger.warn(`Listening for HTTP on '${joinHostPort(server.host, http.port)}'`);

    let stopping: Promise<void> | undefined;
    deps.signal?.removeEventListener('abort', onOuterAbort);
    const stop = (): Promise<void> => {
      stopping ??= runCleanups();
      return stopping;
    };
    return {
      grpcPort: grpcServer.port,
      httpPort: http.port,
      debugPort: debug.port,
      prometheusPort: prometheus?.port,
      health,
      stats,
      currentConfig: () => current,
      async handleSignal(signal) {
        logger.info(`Ratelimit server received ${signal}, shutting down gracefully`);
        if (signal === 'SIGTERM') health.set('sigterm', false);
        await stop();
      },
      stop,
    };
  } catch (err) {
    deps.signal?.removeEventListener('abort', onOuterAbort);
    await runCleanups();
    throw err;
  }
}

/** Go's net.JoinHostPort: brackets around IPv6 hosts. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The real decision service: the counter store chosen by BACKEND_TYPE, the shared fixed-window limiter with the
 * optional local over-limit cache, and the ShouldRateLimit service.
 * @throws SettingsError for a backend this build cannot run yet
 */
export async function createDefaultDecisionService(context: DecisionServiceContext): Promise<DecisionServiceHandle> {
  const { settings, stats, clock, logger } = context;
  const limits = settings.limits;
  let backend: CounterBackend;
  switch (limits.backendType) {
    case 'memory':
      backend = createMemoryBackend({ clock, stats });
      break;
    case 'redis': {
      const redis = settings.redis;
      // Upstream builds one TLS config from the REDIS_TLS_* files for both instances.
      const tls: RedisTlsOptions | undefined =
        redis.tls || (redis.perSecond && redis.perSecondInstance.tls)
          ? {
              certPem: readPem('REDIS_TLS_CLIENT_CERT', redis.tlsClientCert),
              keyPem: readPem('REDIS_TLS_CLIENT_KEY', redis.tlsClientKey),
              caPem: readPem('REDIS_TLS_CACERT', redis.tlsCaCert),
              skipHostnameVerification: redis.tlsSkipHostnameVerification,
            }
          : undefined;
      const clientOptions = (instance: RedisInstanceSettings): RedisClientOptions => ({
        type: instance.type,
        socketType: instance.socketType,
        url: instance.url,
        poolSize: instance.poolSize,
        auth: instance.auth,
        timeoutMs: instance.timeoutMs,
        tls: instance.tls ? tls : undefined,
        sentinelAuth: instance.sentinelAuth,
        clusterPipelineParallelism: instance.clusterPipelineParallelism,
        pipelineWindowMs: instance.pipelineWindowMs,
        pipelineLimit: instance.pipelineLimit,
      });
      backend = await connectRedisBackend({
        main: clientOptions(redis),
        perSecond: redis.perSecond ? clientOptions(redis.perSecondInstance) : undefined,
        startup: {
          initialIntervalMs: redis.startupInitialIntervalMs,
          maxIntervalMs: redis.startupMaxIntervalMs,
          maxElapsedMs: redis.startupMaxElapsedTimeMs,
        },
        healthCheckActiveConnection: redis.healthCheckActiveConnection,
        onHealthChange: (healthy) => context.health.set('backend', healthy),
        stats,
        logger,
        signal: context.signal,
      });
      break;
    }
    case 'memcache':
      backend = await connectMemcacheBackend({ settings: settings.memcache, stats, logger, clock });
      break;
    default:
      throw new SettingsError(
        'unsupported',
        'BACKEND_TYPE',
        `BACKEND_TYPE=${limits.backendType} is not supported by this build yet: use memory`,
      );
  }
  const localCache =
    limits.localCacheSizeInBytes > 0
      ? createLocalOverLimitCache({ maxBytes: limits.localCacheSizeInBytes, clock, stats })
      : undefined;
  const rateLimitStats = createRateLimitStatsCache(stats);
  const tracing = createTracing(settings.tracing, { logger });
  const limiter = createFixedWindowLimiter({
    backend: tracing.traceBackend(backend, limits.backendType, settings.redis.perSecond),
    localCache,
    stats: rateLimitStats,
    clock,
    settings: {
      cacheKeyPrefix: limits.cacheKeyPrefix,
      nearLimitRatio: limits.nearLimitRatio,
      expirationJitterMaxSeconds: limits.expirationJitterMaxSeconds,
      stopCacheKeyIncrementWhenOverlimit: limits.stopCacheKeyIncrementWhenOverlimit,
    },
  });
  const service = createRateLimitService({
    getConfig: context.getConfig,
    limiter,
    stats,
    clock,
    logger,
    rateLimitStats,
    settings: {
      shadowMode: limits.shadowMode,
      quotaMode: limits.quotaMode,
      responseDynamicMetadata: limits.responseDynamicMetadata,
      responseHeaders: {
        enabled: limits.rateLimitResponseHeadersEnabled,
        limitHeader: limits.headerRateLimitLimit,
        remainingHeader: limits.headerRateLimitRemaining,
        resetHeader: limits.headerRateLimitReset,
      },
    },
  });
  return {
    service: tracing.traceService(service),
    close: async () => {
      await limiter.close();
      await tracing.shutdown();
    },
  };
}

/**
 * Reads a PEM file named by a setting; '' when the setting is empty.
 * @throws SettingsError naming the variable when the file cannot be read
 */
function readPem(variable: string, file: string): string {
  return file === '' ? '' : readSettingFile(variable, file);
}

/**
 * Reads a file named by a setting.
 * @throws SettingsError naming the variable when the file cannot be read
 */
function readSettingFile(variable: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new SettingsError(
      'invalid_value',
      variable,
      `cannot read ${variable} file ${JSON.stringify(file)}: ${(err as Error).message}`,
    );
  }
}

/** The config source for CONFIG_TYPE: files under RUNTIME_ROOT, or the xDS (ADS) server. */
export function chooseConfigSource(settings: Settings, callbacks: ConfigSourceCallbacks): ConfigSource {
  const source = settings.configSource;
  switch (source.type) {
    case 'FILE':
      return createFileConfigSource(
        {
          runtimeRoot: source.runtimeRoot,
          runtimeSubdirectory: source.runtimeSubdirectory,
          runtimeAppDirectory: source.runtimeAppDirectory,
          ignoreDotFiles: source.runtimeIgnoreDotFiles,
          watchRoot: source.runtimeWatchRoot,
          mergeDomainConfig: source.mergeDomainConfig,
        },
        callbacks,
      );
    case 'GRPC_XDS_SOTW':
      return createXdsConfigSource(source, {
        ...callbacks,
        load: (configs, mergeDomainConfig) =>
          loadRateLimitConfig(configs.map(xdsConfigToSource), { mergeDomainConfig }),
      });
  }
}

/** The production wiring main.ts uses. */
export function defaultRunnerDeps(logger: Logger): RunnerDeps {
  return { logger, createConfigSource: chooseConfigSource, createDecisionService: createDefaultDecisionService };
}
