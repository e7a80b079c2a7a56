// The sidecar's settings: every environment variable read once, at startup, into one typed readonly tree.
// Names and defaults follow upstream's src/settings/settings.go; the seed's KV_*/MC_* spellings are aliases.
import { invalidValue, quoteValue, SettingsError } from './settings-error.js';
import { parseGoBool, parseGoDurationMs, parseGoFloat, parseGoInt, parseGoList, parseGoMap } from './go-values.js';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'panic';
export type LogFormat = 'text' | 'json';
export type ConfigType = 'FILE' | 'GRPC_XDS_SOTW';
export type BackendType = 'redis' | 'memcache' | 'memory';
export type RedisType = 'single' | 'sentinel' | 'cluster';
export type RedisSocketType = 'tcp' | 'unix';

export interface ServerSettings {
  /** HTTP listener (/json, /healthcheck). Port 0 picks a free port. */
  readonly host: string;
  readonly port: number;
  readonly grpcHost: string;
  readonly grpcPort: number;
  /** When non-empty, gRPC listens on this unix socket path instead of grpcHost:grpcPort. */
  readonly grpcUds: string;
  readonly debugHost: string;
  readonly debugPort: number;
  readonly grpcMaxConnectionAgeMs: number;
  readonly grpcMaxConnectionAgeGraceMs: number;
  readonly grpcServerUseTls: boolean;
  readonly grpcServerTlsCert: string;
  readonly grpcServerTlsKey: string;
  readonly grpcClientTlsCaCert: string;
  readonly grpcClientTlsSan: string;
  /** Worker processes sharing the ports (node:cluster); always 1 with the memory backend. */
  readonly workers: number;
}

export interface LoggingSettings {
  readonly level: LogLevel;
  readonly format: LogFormat;
}

export interface XdsSettings {
  readonly nodeId: string;
  /** CONFIG_GRPC_XDS_NODE_METADATA split as `k=v,k2=v2` (items without `=` are dropped, as upstream). */
  readonly nodeMetadata: Readonly<Record<string, string>>;
  readonly serverUrl: string;
  readonly serverConnectRetryIntervalMs: number;
  readonly clientAdditionalHeaders: Readonly<Record<string, string>>;
  readonly serverUseTls: boolean;
  readonly clientTlsCert: string;
  readonly clientTlsKey: string;
  readonly serverTlsCaCert: string;
  readonly serverTlsSan: string;
  readonly backoffInitialIntervalMs: number;
  readonly backoffMaxIntervalMs: number;
  readonly backoffRandomFactor: number;
  readonly backoffJitter: boolean;
  /** 0 = the gRPC default. */
  readonly maxMsgSizeInBytes: number;
}

export interface ConfigSourceSettings {
  readonly type: ConfigType;
  readonly forceStartWithoutInitialConfig: boolean;
  readonly runtimeRoot: string;
  readonly runtimeSubdirectory: string;
  readonly runtimeAppDirectory: string;
  readonly runtimeIgnoreDotFiles: boolean;
  readonly runtimeWatchRoot: boolean;
  readonly mergeDomainConfig: boolean;
  readonly xds: XdsSettings;
}

export interface DogStatsdMogrifier {
  readonly name: string;
  readonly pattern: string;
  readonly metricName: string;
  readonly tags: Readonly<Record<string, string>>;
}

export interface StatsSettings {
  readonly useStatsd: boolean;
  readonly statsdHost: string;
  readonly statsdPort: number;
  readonly useDogStatsd: boolean;
  readonly dogStatsdMogrifiers: readonly DogStatsdMogrifier[];
  readonly usePrometheus: boolean;
  /** PROMETHEUS_ADDR as given, `host:port` or `:port`. */
  readonly prometheusAddr: string;
  /** Host part of PROMETHEUS_ADDR; '' = every interface. */
  readonly prometheusHost: string;
  readonly prometheusPort: number;
  readonly prometheusPath: string;
  readonly prometheusMapperYaml: string;
  readonly prometheusResponseTimeAsMilliseconds: boolean;
  readonly extraTags: Readonly<Record<string, string>>;
  readonly flushIntervalMs: number;
  readonly disableStats: boolean;
}

export interface LimitSettings {
  readonly backendType: BackendType;
  /** True when BACKEND_TYPE was not given and no Redis URL was set, so the embedded memory store was chosen. */
  readonly backendDefaulted: boolean;
  readonly cacheKeyPrefix: string;
  readonly expirationJitterMaxSeconds: number;
  /** Already rounded to float32 as upstream stores it. */
  readonly nearLimitRatio: number;
  readonly localCacheSizeInBytes: number;
  readonly stopCacheKeyIncrementWhenOverlimit: boolean;
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly responseDynamicMetadata: boolean;
  readonly rateLimitResponseHeadersEnabled: boolean;
  readonly headerRateLimitLimit: string;
  readonly headerRateLimitRemaining: string;
  readonly headerRateLimitReset: string;
  readonly healthyWithAtLeastOneConfigLoaded: boolean;
}

export interface RedisInstanceSettings {
  readonly socketType: RedisSocketType;
  readonly type: RedisType;
  readonly url: string;
  readonly poolSize: number;
  /** `password` or `user:password` (split at the first `:`). */
  readonly auth: string;
  readonly tls: boolean;
  readonly sentinelAuth: string;
  readonly timeoutMs: number;
  readonly pipelineWindowMs: number;
  readonly pipelineLimit: number;
  readonly clusterPipelineParallelism: number;
  readonly poolOnEmptyBehavior: 'WAIT';
}

export interface RedisSettings extends RedisInstanceSettings {
  readonly tlsClientCert: string;
  readonly tlsClientKey: string;
  readonly tlsCaCert: string;
  readonly tlsSkipHostnameVerification: boolean;
  readonly healthCheckActiveConnection: boolean;
  readonly startupInitialIntervalMs: number;
  readonly startupMaxIntervalMs: number;
  /** 0 = retry forever. */
  readonly startupMaxElapsedTimeMs: number;
  readonly perSecond: boolean;
  readonly perSecondInstance: RedisInstanceSettings;
}

export interface MemcacheSettings {
  readonly hostPort: readonly string[];
  readonly srv: string;
  readonly srvRefreshMs: number;
  readonly maxIdleConns: number;
  readonly tls: boolean;
  readonly tlsClientCert: string;
  readonly tlsClientKey: string;
  readonly tlsCaCert: string;
  readonly tlsSkipHostnameVerification: boolean;
}

export interface TracingSettings {
  readonly enabled: boolean;
  readonly exporterProtocol: 'http' | 'grpc';
  readonly serviceName: string;
  readonly serviceNamespace: string;
  /** Empty means "a random UUIDv4 at startup" (chosen by the tracer, not here). */
  readonly serviceInstanceId: string;
  readonly samplingRate: number;
}

export interface Settings {
  readonly server: ServerSettings;
  readonly logging: LoggingSettings;
  readonly configSource: ConfigSourceSettings;
  readonly stats: StatsSettings;
  readonly limits: LimitSettings;
  readonly redis: RedisSettings;
  readonly memcache: MemcacheSettings;
  readonly tracing: TracingSettings;
  /** Non-fatal remarks found while parsing (ignored deprecated values, defaults chosen); main logs them. */
  readonly warnings: readonly string[];
}

/** Reads one variable under its upstream name and, where one exists, its seed alias (KV_* / MC_*). */
class EnvReader {
  readonly warnings: string[] = [];
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** The alias name of an upstream name, or undefined: REDIS_X → KV_X, MEMCACHE_X → MC_X. */
  static aliasOf(name: string): string | undefined {
    if (name.startsWith('REDIS_')) return 'KV_' + name.slice('REDIS_'.length);
    if (name.startsWith('MEMCACHE_')) return 'MC_' + name.slice('MEMCACHE_'.length);
    return undefined;
  }

  /** The raw value and the name it came from; the seed name wins, a conflicting pair is an error. */
  lookup(name: string): { value: string; from: string } | undefined {
    const alias = EnvReader.aliasOf(name);
    const own = this.env[name];
    const aliased = alias === undefined ? undefined : this.env[alias];
    if (alias !== undefined && aliased !== undefined) {
      if (own !== undefined && own !== aliased) {
        throw new SettingsError(
          'alias_conflict',
          `${alias}/${name}`,
          `${alias}=${quoteValue(aliased)} and ${name}=${quoteValue(own)} are both set and differ: set only one of them`,
        );
      }
      return { value: aliased, from: alias };
    }
    return own === undefined ? undefined : { value: own, from: name };
  }

  isSet(name: string): boolean {
    return this.lookup(name) !== undefined;
  }

  string(name: string, def: string): string {
    return this.lookup(name)?.value ?? def;
  }

  bool(name: string, def: boolean): boolean {
    const found = this.lookup(name);
    if (found === undefined) return def;
    const v = parseGoBool(found.value);
    if (v === undefined) throw invalidValue(found.from, found.value, 'a boolean (true, false, 1, 0, t, f)');
    return v;
  }

  int(name: string, def: number, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number {
    const found = this.lookup(name);
    if (found === undefined) return def;
    const v = parseGoInt(found.value);
    if (v === undefined) throw invalidValue(found.from, found.value, 'an integer (e.g. 10)');
    if (v < min || v > max) throw invalidValue(found.from, found.value, `an integer from ${min} to ${max}`);
    return v;
  }

  port(name: string, def: number): number {
    return this.int(name, def, 0, 65535);
  }

  float(name: string, def: number): number {
    const found = this.lookup(name);
    if (found === undefined) return def;
    const v = parseGoFloat(found.value);
    if (v === undefined) throw invalidValue(found.from, found.value, 'a number (e.g. 0.8)');
    return v;
  }

  durationMs(name: string, def: number): number {
    const found = this.lookup(name);
    if (found === undefined) return def;
    const v = parseGoDurationMs(found.value);
    if (v === undefined) {
      throw invalidValue(found.from, found.value, 'a Go duration such as 10s, 1h2m3.5s, 150ms or 150us');
    }
    return v;
  }

  map(name: string): Readonly<Record<string, string>> {
    const found = this.lookup(name);
    if (found === undefined) return {};
    const v = parseGoMap(found.value);
    if (v === undefined) throw invalidValue(found.from, found.value, 'a map written k1:v1,k2:v2');
    return v;
  }

  list(name: string): readonly string[] {
    const found = this.lookup(name);
    return found === undefined ? [] : parseGoList(found.value);
  }

  oneOf<T extends string>(name: string, def: T, allowed: Readonly<Record<string, T>>, expected: string): T {
    const found = this.lookup(name);
    if (found === undefined) return def;
    const v = allowed[found.value];
    if (v === undefined) throw invalidValue(found.from, found.value, expected);
    return v;
  }
}

const LOG_LEVELS: Readonly<Record<string, LogLevel>> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  fatal: 'fatal',
  panic: 'panic',
};

function readLogging(r: EnvReader): LoggingSettings {
  const found = r.lookup('LOG_LEVEL');
  let level: LogLevel = 'warn';
  if (found !== undefined) {
    // logrus.ParseLevel lower-cases its input.
    const parsed = LOG_LEVELS[found.value.toLowerCase()];
    if (parsed === undefined) {
      throw invalidValue('LOG_LEVEL', found.value, 'one of trace, debug, info, warn, error, fatal, panic');
    }
    level = parsed;
  }
  // Upstream treats every LOG_FORMAT other than `json` as text.
  const format: LogFormat = r.string('LOG_FORMAT', 'text') === 'json' ? 'json' : 'text';
  return { level, format };
}

function readServer(r: EnvReader): ServerSettings {
  return {
    host: r.string('HOST', '0.0.0.0'),
    port: r.port('PORT', 8080),
    grpcHost: r.string('GRPC_HOST', '0.0.0.0'),
    grpcPort: r.port('GRPC_PORT', 8081),
    grpcUds: r.string('GRPC_UDS', ''),
    debugHost: r.string('DEBUG_HOST', '0.0.0.0'),
    debugPort: r.port('DEBUG_PORT', 6070),
    grpcMaxConnectionAgeMs: r.durationMs('GRPC_MAX_CONNECTION_AGE', 24 * 3_600_000),
    grpcMaxConnectionAgeGraceMs: r.durationMs('GRPC_MAX_CONNECTION_AGE_GRACE', 3_600_000),
    grpcServerUseTls: r.bool('GRPC_SERVER_USE_TLS', false),
    grpcServerTlsCert: r.string('GRPC_SERVER_TLS_CERT', ''),
    grpcServerTlsKey: r.string('GRPC_SERVER_TLS_KEY', ''),
    grpcClientTlsCaCert: r.string('GRPC_CLIENT_TLS_CACERT', ''),
    grpcClientTlsSan: r.string('GRPC_CLIENT_TLS_SAN', ''),
    workers: r.int('WORKERS', 1, 1, 256),
  };
}

/** Upstream splits CONFIG_GRPC_XDS_NODE_METADATA on `,` then `=`, keeping only items with exactly one `=`. */
function parseNodeMetadata(text: string): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  if (text === '') return out;
  for (const item of text.split(',')) {
    const parts = item.split('=');
    if (parts.length === 2) out[parts[0] ?? ''] = parts[1] ?? '';
  }
  return out;
}

function readConfigSource(r: EnvReader): ConfigSourceSettings {
  return {
    type: r.oneOf<ConfigType>(
      'CONFIG_TYPE',
      'FILE',
      { FILE: 'FILE', GRPC_XDS_SOTW: 'GRPC_XDS_SOTW' },
      'FILE or GRPC_XDS_SOTW',
    ),
    forceStartWithoutInitialConfig: r.bool('FORCE_START_WITHOUT_INITIAL_CONFIG', false),
    runtimeRoot: r.string('RUNTIME_ROOT', '/srv/runtime_data/current'),
    runtimeSubdirectory: r.string('RUNTIME_SUBDIRECTORY', ''),
    runtimeAppDirectory: r.string('RUNTIME_APPDIRECTORY', 'config'),
    runtimeIgnoreDotFiles: r.bool('RUNTIME_IGNOREDOTFILES', false),
    runtimeWatchRoot: r.bool('RUNTIME_WATCH_ROOT', true),
    mergeDomainConfig: r.bool('MERGE_DOMAIN_CONFIG', false),
    xds: {
      nodeId: r.string('CONFIG_GRPC_XDS_NODE_ID', 'default'),
      nodeMetadata: parseNodeMetadata(r.string('CONFIG_GRPC_XDS_NODE_METADATA', '')),
      serverUrl: r.string('CONFIG_GRPC_XDS_SERVER_URL', 'localhost:18000'),
      serverConnectRetryIntervalMs: r.durationMs('CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL', 3000),
      clientAdditionalHeaders: r.map('CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS'),
      serverUseTls: r.bool('CONFIG_GRPC_XDS_SERVER_USE_TLS', false),
      clientTlsCert: r.string('CONFIG_GRPC_XDS_CLIENT_TLS_CERT', ''),
      clientTlsKey: r.string('CONFIG_GRPC_XDS_CLIENT_TLS_KEY', ''),
      serverTlsCaCert: r.string('CONFIG_GRPC_XDS_SERVER_TLS_CACERT', ''),
      serverTlsSan: r.string('CONFIG_GRPC_XDS_SERVER_TLS_SAN', ''),
      backoffInitialIntervalMs: r.durationMs('XDS_CLIENT_BACKOFF_INITIAL_INTERVAL', 10_000),
      backoffMaxIntervalMs: r.durationMs('XDS_CLIENT_BACKOFF_MAX_INTERVAL', 60_000),
      backoffRandomFactor: r.float('XDS_CLIENT_BACKOFF_RANDOM_FACTOR', 0.5),
      backoffJitter: r.bool('XDS_CLIENT_BACKOFF_JITTER', true),
      maxMsgSizeInBytes: r.int('XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES', 0, 0),
    },
  };
}

function readMogrifiers(r: EnvReader): DogStatsdMogrifier[] {
  return r.list('USE_DOG_STATSD_MOGRIFIERS').map((name) => {
    const prefix = `DOG_STATSD_MOGRIFIER_${name}_`;
    // Upstream refuses a mogrifier without PATTERN or NAME and tags with an empty key or value.
    const pattern = r.string(prefix + 'PATTERN', '');
    if (pattern === '') throw invalidValue(prefix + 'PATTERN', pattern, `a regular expression for mogrifier ${name}`);
    try {
      new RegExp(pattern);
    } catch {
      throw invalidValue(prefix + 'PATTERN', pattern, 'a regular expression');
    }
    const metricName = r.string(prefix + 'NAME', '');
    if (metricName === '')
      throw invalidValue(prefix + 'NAME', metricName, `a metric name (may use $1…) for mogrifier ${name}`);
    const tags = r.map(prefix + 'TAGS');
    for (const [key, value] of Object.entries(tags)) {
      if (key === '' || value === '') {
        throw invalidValue(
          prefix + 'TAGS',
          r.string(prefix + 'TAGS', ''),
          'a map k1:v1,k2:v2 with non-empty keys and values',
        );
      }
    }
    return { name, pattern, metricName, tags };
  });
}

/** Splits a Go listen address (`:9090`, `host:9090`, `[::1]:9090`) into host ('' = every interface) and port. */
export function parseListenAddress(addr: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(addr);
  if (m === null) return undefined;
  const port = Number(m[2]);
  if (port > 65535) return undefined;
  return { host: (m[1] ?? '').replace(/^\[|\]$/g, ''), port };
}

function readStats(r: EnvReader): StatsSettings {
  const prometheusAddr = r.string('PROMETHEUS_ADDR', ':9090');
  const listenAt = parseListenAddress(prometheusAddr);
  if (listenAt === undefined)
    throw invalidValue('PROMETHEUS_ADDR', prometheusAddr, 'a listen address host:port or :port');
  const stats: StatsSettings = {
    useStatsd: r.bool('USE_STATSD', true),
    statsdHost: r.string('STATSD_HOST', 'localhost'),
    statsdPort: r.port('STATSD_PORT', 8125),
    useDogStatsd: r.bool('USE_DOG_STATSD', false),
    dogStatsdMogrifiers: readMogrifiers(r),
    usePrometheus: r.bool('USE_PROMETHEUS', false),
    prometheusAddr,
    prometheusHost: listenAt.host,
    prometheusPort: listenAt.port,
    prometheusPath: r.string('PROMETHEUS_PATH', '/metrics'),
    prometheusMapperYaml: r.string('PROMETHEUS_MAPPER_YAML', ''),
    prometheusResponseTimeAsMilliseconds: r.bool('PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS', false),
    extraTags: r.map('EXTRA_TAGS'),
    flushIntervalMs: r.durationMs('STATS_FLUSH_INTERVAL', 10_000),
    disableStats: r.bool('DISABLE_STATS', false),
  };
  if (stats.flushIntervalMs <= 0) {
    throw invalidValue('STATS_FLUSH_INTERVAL', r.string('STATS_FLUSH_INTERVAL', ''), 'a positive Go duration');
  }
  // Upstream's runner refuses these combinations at startup (a fatal log).
  if (!stats.disableStats) {
    if (stats.useStatsd && stats.usePrometheus) {
      throw new SettingsError(
        'incompatible',
        'USE_STATSD/USE_PROMETHEUS',
        'USE_STATSD and USE_PROMETHEUS cannot both be true: set USE_STATSD=false to use Prometheus',
      );
    }
    if (stats.useDogStatsd && (stats.useStatsd || stats.usePrometheus)) {
      throw new SettingsError(
        'incompatible',
        'USE_DOG_STATSD',
        'USE_DOG_STATSD=true requires USE_STATSD=false and USE_PROMETHEUS=false',
      );
    }
  }
  return stats;
}

function readLimits(r: EnvReader, warnings: string[]): LimitSettings {
  const backendFound = r.lookup('BACKEND_TYPE');
  let backendType: BackendType;
  let backendDefaulted = false;
  if (backendFound === undefined || backendFound.value === '') {
    // Upstream defaults to redis; with no Redis address at all we start the embedded store instead.
    if (r.isSet('REDIS_URL')) backendType = 'redis';
    else {
      backendType = 'memory';
      backendDefaulted = true;
    }
  } else {
    const byName: Readonly<Record<string, BackendType>> = {
      redis: 'redis',
      memcache: 'memcache',
      mc: 'memcache',
      memory: 'memory',
    };
    const parsed = byName[backendFound.value];
    if (parsed === undefined)
      throw invalidValue('BACKEND_TYPE', backendFound.value, 'redis, memcache (or mc) or memory');
    backendType = parsed;
  }
  let nearLimitRatio = Math.fround(r.float('NEAR_LIMIT_RATIO', 0.8));
  if (Number.isNaN(nearLimitRatio)) {
    throw invalidValue('NEAR_LIMIT_RATIO', r.string('NEAR_LIMIT_RATIO', ''), 'a number (e.g. 0.8)');
  }
  if (nearLimitRatio > 1) {
    warnings.push(`NEAR_LIMIT_RATIO=${nearLimitRatio} is above 1; using 1`);
    nearLimitRatio = 1;
  }
  return {
    backendType,
    backendDefaulted,
    cacheKeyPrefix: r.string('CACHE_KEY_PREFIX', ''),
    expirationJitterMaxSeconds: r.int('EXPIRATION_JITTER_MAX_SECONDS', 300, 0),
    nearLimitRatio,
    localCacheSizeInBytes: r.int('LOCAL_CACHE_SIZE_IN_BYTES', 0, 0),
    stopCacheKeyIncrementWhenOverlimit: r.bool('STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT', false),
    shadowMode: r.bool('SHADOW_MODE', false),
    quotaMode: r.bool('QUOTA_MODE', false),
    responseDynamicMetadata: r.bool('RESPONSE_DYNAMIC_METADATA', false),
    rateLimitResponseHeadersEnabled: r.bool('LIMIT_RESPONSE_HEADERS_ENABLED', false),
    headerRateLimitLimit: r.string('LIMIT_LIMIT_HEADER', 'RateLimit-Limit'),
    headerRateLimitRemaining: r.string('LIMIT_REMAINING_HEADER', 'RateLimit-Remaining'),
    headerRateLimitReset: r.string('LIMIT_RESET_HEADER', 'RateLimit-Reset'),
    healthyWithAtLeastOneConfigLoaded: r.bool('HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED', false),
  };
}

/** @param inUse the instance will be connected to, so its URL shape is checked now (upstream panics later) */
function readRedisInstance(
  r: EnvReader,
  prefix: string,
  defaultUrl: string,
  warnings: string[],
  inUse: boolean,
): RedisInstanceSettings {
  const typeName = prefix + 'TYPE';
  const typeFound = r.lookup(typeName);
  let type: RedisType = 'single';
  if (typeFound !== undefined) {
    const lower = typeFound.value.toLowerCase();
    if (lower !== 'single' && lower !== 'sentinel' && lower !== 'cluster') {
      throw invalidValue(typeFound.from, typeFound.value, 'single, sentinel or cluster');
    }
    type = lower;
  }
  const socketType = r.oneOf<RedisSocketType>(
    prefix + 'SOCKET_TYPE',
    'unix',
    { tcp: 'tcp', unix: 'unix' },
    'tcp or unix',
  );
  const behaviorFound = r.lookup(prefix + 'POOL_ON_EMPTY_BEHAVIOR');
  if (behaviorFound !== undefined) {
    const upper = behaviorFound.value.toUpperCase();
    if (upper === 'CREATE' || upper === 'ERROR') {
      // radix v4 has no such pool mode; upstream panics at startup, we fail with a clear message.
      throw invalidValue(behaviorFound.from, behaviorFound.value, 'WAIT (CREATE and ERROR are not supported)');
    }
    if (upper !== 'WAIT') warnings.push(`${behaviorFound.from}=${behaviorFound.value} is unknown; using WAIT`);
  }
  const pipelineLimit = r.int(prefix + 'PIPELINE_LIMIT', 0);
  const pipelineWindowMs = r.durationMs(prefix + 'PIPELINE_WINDOW', 0);
  // Upstream ignores the limit (deprecated); ours applies it, but only together with a window.
  if (pipelineLimit > 0 && pipelineWindowMs === 0) {
    warnings.push(`${prefix}PIPELINE_LIMIT has no effect while ${prefix}PIPELINE_WINDOW is 0`);
  }
  const parallelismName = prefix + 'CLUSTER_PIPELINE_PARALLELISM';
  const parallelism = r.int(parallelismName, 1);
  if (parallelism < 0) throw invalidValue(parallelismName, String(parallelism), 'an integer >= 0 (0 = pool size)');
  const url = r.string(prefix + 'URL', defaultUrl);
  if (inUse && type === 'sentinel' && url.split(',').length < 2) {
    throw invalidValue(
      r.lookup(prefix + 'URL')?.from ?? prefix + 'URL',
      url,
      'masterName,sentinel1:port[,...] for sentinel',
    );
  }
  return {
    socketType,
    type,
    url,
    poolSize: r.int(prefix + 'POOL_SIZE', 10, 1),
    auth: r.string(prefix + 'AUTH', ''),
    tls: r.bool(prefix + 'TLS', false),
    sentinelAuth: r.string(prefix + 'SENTINEL_AUTH', ''),
    timeoutMs: r.durationMs(prefix + 'TIMEOUT', 10_000),
    pipelineWindowMs,
    pipelineLimit,
    clusterPipelineParallelism: parallelism,
    poolOnEmptyBehavior: 'WAIT',
  };
}

function readRedis(r: EnvReader, warnings: string[], backendType: BackendType): RedisSettings {
  const inUse = backendType === 'redis';
  const perSecond = r.bool('REDIS_PERSECOND', false);
  const main = readRedisInstance(r, 'REDIS_', '/var/run/nutcracker/ratelimit.sock', warnings, inUse);
  const perSecondInstance = readRedisInstance(
    r,
    'REDIS_PERSECOND_',
    '/var/run/nutcracker/ratelimitpersecond.sock',
    warnings,
    inUse && perSecond,
  );
  return {
    ...main,
    tlsClientCert: r.string('REDIS_TLS_CLIENT_CERT', ''),
    tlsClientKey: r.string('REDIS_TLS_CLIENT_KEY', ''),
    tlsCaCert: r.string('REDIS_TLS_CACERT', ''),
    tlsSkipHostnameVerification: r.bool('REDIS_TLS_SKIP_HOSTNAME_VERIFICATION', false),
    healthCheckActiveConnection: r.bool('REDIS_HEALTH_CHECK_ACTIVE_CONNECTION', false),
    startupInitialIntervalMs: r.durationMs('REDIS_STARTUP_INITIAL_INTERVAL', 1000),
    startupMaxIntervalMs: r.durationMs('REDIS_STARTUP_MAX_INTERVAL', 30_000),
    startupMaxElapsedTimeMs: r.durationMs('REDIS_STARTUP_MAX_ELAPSED_TIME', 0),
    perSecond,
    perSecondInstance,
  };
}

function readMemcache(r: EnvReader): MemcacheSettings {
  const hostPort = r.list('MEMCACHE_HOST_PORT');
  const srv = r.string('MEMCACHE_SRV', '');
  if (hostPort.length > 0 && srv !== '') {
    throw new SettingsError(
      'incompatible',
      'MEMCACHE_HOST_PORT/MEMCACHE_SRV',
      'MEMCACHE_HOST_PORT (MC_HOST_PORT) and MEMCACHE_SRV (MC_SRV) are mutually exclusive: set only one',
    );
  }
  return {
    hostPort,
    srv,
    srvRefreshMs: r.durationMs('MEMCACHE_SRV_REFRESH', 0),
    maxIdleConns: r.int('MEMCACHE_MAX_IDLE_CONNS', 2, 0),
    tls: r.bool('MEMCACHE_TLS', false),
    tlsClientCert: r.string('MEMCACHE_TLS_CLIENT_CERT', ''),
    tlsClientKey: r.string('MEMCACHE_TLS_CLIENT_KEY', ''),
    tlsCaCert: r.string('MEMCACHE_TLS_CACERT', ''),
    tlsSkipHostnameVerification: r.bool('MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION', false),
  };
}

function readTracing(r: EnvReader): TracingSettings {
  const protocol = r.oneOf<'http' | 'grpc'>(
    'TRACING_EXPORTER_PROTOCOL',
    'http',
    { http: 'http', grpc: 'grpc', '': 'http' },
    'http or grpc',
  );
  const samplingRate = r.float('TRACING_SAMPLING_RATE', 1);
  if (!(samplingRate >= 0 && samplingRate <= 1)) {
    throw invalidValue('TRACING_SAMPLING_RATE', r.string('TRACING_SAMPLING_RATE', ''), 'a number from 0 to 1');
  }
  return {
    enabled: r.bool('TRACING_ENABLED', false),
    exporterProtocol: protocol,
    serviceName: r.string('TRACING_SERVICE_NAME', 'RateLimit'),
    serviceNamespace: r.string('TRACING_SERVICE_NAMESPACE', ''),
    serviceInstanceId: r.string('TRACING_SERVICE_INSTANCE_ID', ''),
    samplingRate,
  };
}

/**
 * Reads every sidecar setting from `env` (only main.ts passes process.env).
 * @throws SettingsError for a malformed value, an alias pair that disagrees, or an incompatible combination.
 */
export function loadSettings(env: NodeJS.ProcessEnv): Settings {
  const r = new EnvReader(env);
  const warnings = r.warnings;
  const logging = readLogging(r);
  const server = readServer(r);
  const configSource = readConfigSource(r);
  const stats = readStats(r);
  const limits = readLimits(r, warnings);
  const redis = readRedis(r, warnings, limits.backendType);
  const memcache = readMemcache(r);
  const tracing = readTracing(r);
  let effectiveServer = server;
  if (limits.backendType === 'memory' && server.workers > 1) {
    warnings.push(`WORKERS=${server.workers} ignored: the memory backend keeps its counters in one process`);
    effectiveServer = { ...server, workers: 1 };
  }
  if (limits.backendDefaulted) {
    warnings.push('no BACKEND_TYPE and no REDIS_URL/KV_URL set: using the embedded in-memory counter store');
  }
  return { server: effectiveServer, logging, configSource, stats, limits, redis, memcache, tracing, warnings };
}
