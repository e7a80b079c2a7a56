// loadSettings: defaults, KV_/MC_ aliases, one-line errors, incompatible combinations.
import { expect } from 'chai';
import { loadSettings } from '../../../../sidecar/settings/settings.js';
import { SettingsError } from '../../../../sidecar/settings/settings-error.js';

function errorOf(env: NodeJS.ProcessEnv): SettingsError {
  try {
    loadSettings(env);
  } catch (err) {
    expect(err).to.be.instanceOf(SettingsError);
    return err as SettingsError;
  }
  throw new Error('expected a SettingsError');
}

describe('loadSettings', () => {
  it('has upstream defaults with an empty environment (memory backend as the embedded default)', () => {
    const s = loadSettings({});
    expect(s.server).to.include({
      host: '0.0.0.0',
      port: 8080,
      grpcHost: '0.0.0.0',
      grpcPort: 8081,
      grpcUds: '',
      debugHost: '0.0.0.0',
      debugPort: 6070,
      grpcMaxConnectionAgeMs: 86_400_000,
      grpcMaxConnectionAgeGraceMs: 3_600_000,
      workers: 1,
    });
    expect(s.logging).to.deep.equal({ level: 'warn', format: 'text' });
    expect(s.configSource).to.include({
      type: 'FILE',
      forceStartWithoutInitialConfig: false,
      runtimeRoot: '/srv/runtime_data/current',
      runtimeSubdirectory: '',
      runtimeAppDirectory: 'config',
      runtimeIgnoreDotFiles: false,
      runtimeWatchRoot: true,
      mergeDomainConfig: false,
    });
    expect(s.configSource.xds).to.include({
      nodeId: 'default',
      serverUrl: 'localhost:18000',
      serverConnectRetryIntervalMs: 3000,
      backoffInitialIntervalMs: 10_000,
      backoffMaxIntervalMs: 60_000,
      backoffRandomFactor: 0.5,
      backoffJitter: true,
      maxMsgSizeInBytes: 0,
    });
    expect(s.stats).to.include({
      useStatsd: true,
      statsdHost: 'localhost',
      statsdPort: 8125,
      usePrometheus: false,
      prometheusHost: '',
      prometheusPort: 9090,
      prometheusPath: '/metrics',
      flushIntervalMs: 10_000,
      disableStats: false,
    });
    expect(s.limits).to.include({
      backendType: 'memory',
      backendDefaulted: true,
      cacheKeyPrefix: '',
      expirationJitterMaxSeconds: 300,
      nearLimitRatio: Math.fround(0.8),
      localCacheSizeInBytes: 0,
      headerRateLimitLimit: 'RateLimit-Limit',
      headerRateLimitRemaining: 'RateLimit-Remaining',
      headerRateLimitReset: 'RateLimit-Reset',
    });
    expect(s.redis).to.include({
      socketType: 'unix',
      type: 'single',
      url: '/var/run/nutcracker/ratelimit.sock',
      poolSize: 10,
      timeoutMs: 10_000,
      clusterPipelineParallelism: 1,
      startupInitialIntervalMs: 1000,
      startupMaxIntervalMs: 30_000,
      startupMaxElapsedTimeMs: 0,
      perSecond: false,
    });
    expect(s.redis.perSecondInstance.url).to.equal('/var/run/nutcracker/ratelimitpersecond.sock');
    expect(s.memcache).to.include({ srv: '', srvRefreshMs: 0, maxIdleConns: 2 });
    expect(s.tracing).to.include({
      enabled: false,
      exporterProtocol: 'http',
      serviceName: 'RateLimit',
      samplingRate: 1,
    });
    expect(s.warnings.join('\n')).to.contain('embedded in-memory counter store');
  });

  it('chooses redis when a Redis URL is set and BACKEND_TYPE is not', () => {
    expect(loadSettings({ REDIS_URL: 'localhost:6379' }).limits).to.include({
      backendType: 'redis',
      backendDefaulted: false,
    });
    expect(loadSettings({ KV_URL: 'localhost:6379' }).limits.backendType).to.equal('redis');
  });

  it('accepts every BACKEND_TYPE spelling and refuses others', () => {
    expect(loadSettings({ BACKEND_TYPE: 'redis' }).limits.backendType).to.equal('redis');
    expect(loadSettings({ BACKEND_TYPE: 'memcache' }).limits.backendType).to.equal('memcache');
    expect(loadSettings({ BACKEND_TYPE: 'mc' }).limits.backendType).to.equal('memcache');
    expect(loadSettings({ BACKEND_TYPE: 'memory' }).limits.backendType).to.equal('memory');
    expect(errorOf({ BACKEND_TYPE: 'Redis' }).message).to.equal(
      'invalid value "Redis" for BACKEND_TYPE: expected redis, memcache (or mc) or memory',
    );
  });

  it('reads the seed KV_*/MC_* names as aliases of REDIS_*/MEMCACHE_*', () => {
    const s = loadSettings({
      BACKEND_TYPE: 'redis',
      KV_SOCKET_TYPE: 'tcp',
      KV_URL: 'h:1',
      KV_POOL_SIZE: '3',
      KV_TYPE: 'CLUSTER',
      KV_AUTH: 'u:p',
      KV_TLS: 'true',
      KV_PIPELINE_WINDOW: '150us',
      KV_HEALTH_CHECK_ACTIVE_CONNECTION: 't',
      KV_PERSECOND: '1',
      KV_PERSECOND_URL: 'm,h:2',
      KV_PERSECOND_TYPE: 'sentinel',
      MC_HOST_PORT: 'a:1,b:2',
      MC_MAX_IDLE_CONNS: '5',
      MC_SRV_REFRESH: '1m',
    });
    expect(s.redis).to.include({
      socketType: 'tcp',
      url: 'h:1',
      poolSize: 3,
      type: 'cluster',
      auth: 'u:p',
      tls: true,
      healthCheckActiveConnection: true,
      perSecond: true,
    });
    expect(s.redis.pipelineWindowMs).to.be.closeTo(0.15, 1e-12);
    expect(s.redis.perSecondInstance).to.include({ url: 'm,h:2', type: 'sentinel' });
    expect(s.memcache.hostPort).to.deep.equal(['a:1', 'b:2']);
    expect(s.memcache).to.include({ maxIdleConns: 5, srvRefreshMs: 60_000 });
  });

  it('accepts both spellings when equal and refuses them when they differ', () => {
    expect(loadSettings({ KV_URL: 'h:1', REDIS_URL: 'h:1' }).redis.url).to.equal('h:1');
    const err = errorOf({ KV_URL: 'h:1', REDIS_URL: 'h:2' });
    expect(err.code).to.equal('alias_conflict');
    expect(err.message).to.equal('KV_URL="h:1" and REDIS_URL="h:2" are both set and differ: set only one of them');
    expect(errorOf({ MC_SRV: 'a', MEMCACHE_SRV: 'b' }).variable).to.equal('MC_SRV/MEMCACHE_SRV');
  });

  it('names the variable, the value and the expected form in one line', () => {
    const cases: [NodeJS.ProcessEnv, string][] = [
      [{ PORT: 'eighty' }, 'invalid value "eighty" for PORT: expected an integer (e.g. 10)'],
      [{ GRPC_PORT: '70000' }, 'invalid value "70000" for GRPC_PORT: expected an integer from 0 to 65535'],
      [{ USE_STATSD: 'yes' }, 'invalid value "yes" for USE_STATSD: expected a boolean (true, false, 1, 0, t, f)'],
      [
        { REDIS_TIMEOUT: '10' },
        'invalid value "10" for REDIS_TIMEOUT: expected a Go duration such as 10s, 1h2m3.5s, 150ms or 150us',
      ],
      [{ KV_POOL_SIZE: 'x' }, 'invalid value "x" for KV_POOL_SIZE: expected an integer (e.g. 10)'],
      [{ EXTRA_TAGS: 'a:1,b' }, 'invalid value "a:1,b" for EXTRA_TAGS: expected a map written k1:v1,k2:v2'],
      [{ NEAR_LIMIT_RATIO: 'abc' }, 'invalid value "abc" for NEAR_LIMIT_RATIO: expected a number (e.g. 0.8)'],
      [
        { LOG_LEVEL: 'verbose' },
        'invalid value "verbose" for LOG_LEVEL: expected one of trace, debug, info, warn, error, fatal, panic',
      ],
      [{ CONFIG_TYPE: 'file' }, 'invalid value "file" for CONFIG_TYPE: expected FILE or GRPC_XDS_SOTW'],
      [{ REDIS_TYPE: 'ring' }, 'invalid value "ring" for REDIS_TYPE: expected single, sentinel or cluster'],
      [{ KV_SOCKET_TYPE: 'udp' }, 'invalid value "udp" for KV_SOCKET_TYPE: expected tcp or unix'],
      [
        { REDIS_POOL_ON_EMPTY_BEHAVIOR: 'create' },
        'invalid value "create" for REDIS_POOL_ON_EMPTY_BEHAVIOR: expected WAIT (CREATE and ERROR are not supported)',
      ],
      [
        { TRACING_EXPORTER_PROTOCOL: 'udp' },
        'invalid value "udp" for TRACING_EXPORTER_PROTOCOL: expected http or grpc',
      ],
      [
        { PROMETHEUS_ADDR: '9090' },
        'invalid value "9090" for PROMETHEUS_ADDR: expected a listen address host:port or :port',
      ],
      [{ PORT: '' }, 'invalid value "" for PORT: expected an integer (e.g. 10)'],
    ];
    for (const [env, message] of cases) {
      const err = errorOf(env);
      expect(err.message, JSON.stringify(env)).to.equal(message);
      expect(err.message).to.not.contain('\n');
      expect(err.code).to.equal('invalid_value');
    }
  });

  it('refuses the sink combinations upstream refuses', () => {
    expect(errorOf({ USE_PROMETHEUS: 'true' }).message).to.equal(
      'USE_STATSD and USE_PROMETHEUS cannot both be true: set USE_STATSD=false to use Prometheus',
    );
    expect(errorOf({ USE_DOG_STATSD: 'true' }).code).to.equal('incompatible');
    expect(loadSettings({ USE_PROMETHEUS: 'true', USE_STATSD: 'false' }).stats.usePrometheus).to.equal(true);
    expect(errorOf({ MC_HOST_PORT: 'a:1', MEMCACHE_SRV: '_m._tcp.x' }).code).to.equal('incompatible');
  });

  it('maps log levels as logrus does', () => {
    expect(loadSettings({ LOG_LEVEL: 'DEBUG' }).logging.level).to.equal('debug');
    expect(loadSettings({ LOG_LEVEL: 'warning' }).logging.level).to.equal('warn');
    expect(loadSettings({ LOG_LEVEL: 'panic' }).logging.level).to.equal('panic');
    expect(loadSettings({ LOG_FORMAT: 'json' }).logging.format).to.equal('json');
    expect(loadSettings({ LOG_FORMAT: 'xml' }).logging.format).to.equal('text');
  });

  it('parses maps, lists, node metadata, float32 ratio and Prometheus addresses', () => {
    const s = loadSettings({
      EXTRA_TAGS: 'env:prod,zone:a',
      CONFIG_GRPC_XDS_NODE_METADATA: 'a=1,bad,b=2=3,c=3',
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: 'authorization:Bearer x',
      NEAR_LIMIT_RATIO: '0.9',
      PROMETHEUS_ADDR: '127.0.0.1:9191',
      USE_DOG_STATSD_MOGRIFIERS: 'A',
      DOG_STATSD_MOGRIFIER_A_PATTERN: '^ratelimit\\.(.*)$',
      DOG_STATSD_MOGRIFIER_A_NAME: 'rl.$1',
      DOG_STATSD_MOGRIFIER_A_TAGS: 'k:$1',
    });
    expect(s.stats.extraTags).to.deep.equal({ env: 'prod', zone: 'a' });
    expect(s.configSource.xds.nodeMetadata).to.deep.equal({ a: '1', c: '3' });
    expect(s.configSource.xds.clientAdditionalHeaders).to.deep.equal({ authorization: 'Bearer x' });
    expect(s.limits.nearLimitRatio).to.equal(Math.fround(0.9));
    expect(s.stats).to.include({ prometheusHost: '127.0.0.1', prometheusPort: 9191 });
    expect(s.stats.dogStatsdMogrifiers).to.deep.equal([
      { name: 'A', pattern: '^ratelimit\\.(.*)$', metricName: 'rl.$1', tags: { k: '$1' } },
    ]);
    expect(loadSettings({ NEAR_LIMIT_RATIO: '1.5' }).limits.nearLimitRatio).to.equal(1);
  });

  it('forces one worker with the memory backend and keeps WORKERS otherwise', () => {
    const memory = loadSettings({ WORKERS: '4' });
    expect(memory.server.workers).to.equal(1);
    expect(memory.warnings.join('\n')).to.contain('WORKERS=4 ignored');
    expect(loadSettings({ WORKERS: '4', BACKEND_TYPE: 'redis' }).server.workers).to.equal(4);
    expect(errorOf({ WORKERS: '0' }).message).to.equal(
      'invalid value "0" for WORKERS: expected an integer from 1 to 256',
    );
  });

  it('refuses a sentinel URL without sentinels and warns on ignored values', () => {
    expect(errorOf({ BACKEND_TYPE: 'redis', REDIS_TYPE: 'sentinel', REDIS_URL: 'master' }).message).to.equal(
      'invalid value "master" for REDIS_URL: expected masterName,sentinel1:port[,...] for sentinel',
    );
    const s = loadSettings({ REDIS_PIPELINE_LIMIT: '8', REDIS_POOL_ON_EMPTY_BEHAVIOR: 'block' });
    expect(s.warnings.join('\n')).to.contain('REDIS_PIPELINE_LIMIT has no effect while REDIS_PIPELINE_WINDOW is 0');
    const windowed = loadSettings({ REDIS_PIPELINE_LIMIT: '8', REDIS_PIPELINE_WINDOW: '150us' });
    expect(windowed.warnings.join('\n')).to.not.contain('PIPELINE_LIMIT');
    expect([windowed.redis.pipelineWindowMs, windowed.redis.pipelineLimit]).to.deep.equal([0.15, 8]);
    expect(s.warnings.join('\n')).to.contain('REDIS_POOL_ON_EMPTY_BEHAVIOR=block is unknown; using WAIT');
  });
});

describe('loadSettings: DogStatsD mogrifiers', () => {
  it('refuses a mogrifier without pattern or name, or with an empty tag', () => {
    const base = { USE_STATSD: 'false', USE_DOG_STATSD: 'true', USE_DOG_STATSD_MOGRIFIERS: 'A' };
    expect(errorOf({ ...base, DOG_STATSD_MOGRIFIER_A_NAME: 'x' }).message).to.equal(
      'invalid value "" for DOG_STATSD_MOGRIFIER_A_PATTERN: expected a regular expression for mogrifier A',
    );
    expect(errorOf({ ...base, DOG_STATSD_MOGRIFIER_A_PATTERN: '^a' }).variable).to.equal('DOG_STATSD_MOGRIFIER_A_NAME');
    expect(
      errorOf({ ...base, DOG_STATSD_MOGRIFIER_A_PATTERN: '(', DOG_STATSD_MOGRIFIER_A_NAME: 'x' }).message,
    ).to.equal('invalid value "(" for DOG_STATSD_MOGRIFIER_A_PATTERN: expected a regular expression');
    expect(
      errorOf({
        ...base,
        DOG_STATSD_MOGRIFIER_A_PATTERN: '^a',
        DOG_STATSD_MOGRIFIER_A_NAME: 'x',
        DOG_STATSD_MOGRIFIER_A_TAGS: 'k:',
      }).variable,
    ).to.equal('DOG_STATSD_MOGRIFIER_A_TAGS');
  });
});
