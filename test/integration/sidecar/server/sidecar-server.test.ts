// The whole sidecar in process (memory backend, config files in a temp dir): gRPC, health, /json, debug, statsd,
// Prometheus and the CLI client.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  HealthCheckResponse_ServingStatus,
  HealthClient,
  type HealthCheckResponse,
} from '../../../../proto/gen/grpc/health/v1/health.js';
import {
  RateLimitResponse_Code,
  RateLimitServiceClient,
  type RateLimitRequest,
  type RateLimitResponse,
} from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { LogFields, Logger } from '../../../../sidecar/logger.js';
import {
  defaultRunnerDeps,
  startRateLimitServer,
  type RunnerDeps,
  type RunningRateLimitServer,
} from '../../../../sidecar/runner.js';
import { loadSettings } from '../../../../sidecar/settings/settings.js';
import { freePort } from '../../../support/ports.js';
import { startRedisServer } from '../../../support/redis-server.js';
import { makeSidecarConfigDir, quietRunnerDeps, sidecarTestEnv } from '../../../support/sidecar.js';

const CONFIG = `domain: test
descriptors:
  - key: key1
    value: value1
    rate_limit:
      unit: minute
      requests_per_unit: 2
  - key: free
`;

interface RecordingLogger extends Logger {
  readonly lines: string[];
}

function recordingLogger(): RecordingLogger {
  const lines: string[] = [];
  const log =
    (level: string) =>
    (message: string, fields?: LogFields): void => {
      lines.push(`${level} ${message}${fields === undefined ? '' : ' ' + JSON.stringify(fields)}`);
    };
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** The production wiring, with the fallback stats sink (USE_STATSD=false) kept out of the test output. */
/** The shared loopback settings on the memory backend (a test may override BACKEND_TYPE). */
function baseEnv(root: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return sidecarTestEnv(root, { BACKEND_TYPE: 'memory', ...extra });
}

function request(domain: string, entries: [string, string][]): RateLimitRequest {
  return {
    domain,
    descriptors: [
      { entries: entries.map(([key, value]) => ({ key, value })), limit: undefined, hitsAddend: undefined },
    ],
    hitsAddend: 1,
  };
}

function call(client: InstanceType<typeof RateLimitServiceClient>, req: RateLimitRequest): Promise<RateLimitResponse> {
  return new Promise((resolve, reject) => {
    client.shouldRateLimit(req, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err, res) =>
      err !== null ? reject(err) : resolve(res),
    );
  });
}

function check(client: InstanceType<typeof HealthClient>, service: string): Promise<HealthCheckResponse> {
  return new Promise((resolve, reject) => {
    client.check({ service }, new grpc.Metadata(), { deadline: Date.now() + 10_000 }, (err, res) =>
      err !== null ? reject(err) : resolve(res),
    );
  });
}

async function httpRequest(
  port: number,
  pathName: string,
  init: { method?: string; body?: string } = {},
): Promise<{ status: number; type: string | null; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${pathName}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    body: init.body,
  });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

describe('sidecar servers (in process, memory backend)', function () {
  this.timeout(60_000);
  let root: string;
  let logger: RecordingLogger;
  let running: RunningRateLimitServer;
  let statsdServer: net.Server;
  let statsdLines = '';
  let rl: InstanceType<typeof RateLimitServiceClient>;
  let health: InstanceType<typeof HealthClient>;

  before(async () => {
    root = makeSidecarConfigDir(CONFIG);
    statsdServer = net.createServer((socket) => socket.on('data', (d: Buffer) => (statsdLines += d.toString())));
    await new Promise<void>((resolve) => statsdServer.listen(0, '127.0.0.1', resolve));
    const statsdPort = (statsdServer.address() as net.AddressInfo).port;
    const settings = loadSettings(
      baseEnv(root, {
        USE_STATSD: 'true',
        STATSD_HOST: '127.0.0.1',
        STATSD_PORT: String(statsdPort),
        STATS_FLUSH_INTERVAL: '50ms',
      }),
    );
    logger = recordingLogger();
    running = await startRateLimitServer(settings, { ...defaultRunnerDeps(logger), shutdownGraceMs: 2000 });
    rl = new RateLimitServiceClient(`127.0.0.1:${running.grpcPort}`, grpc.credentials.createInsecure());
    health = new HealthClient(`127.0.0.1:${running.grpcPort}`, grpc.credentials.createInsecure());
  });

  after(async () => {
    rl?.close();
    health?.close();
    await running?.stop();
    await new Promise<void>((resolve) => statsdServer.close(() => resolve()));
    rmSync(root, { recursive: true, force: true });
  });

  it('logs the debug, HTTP and gRPC listen addresses', () => {
    const text = logger.lines.join('\n');
    expect(text).to.contain(`warn Listening for debug on '127.0.0.1:${running.debugPort}'`);
    expect(text).to.contain(`warn Listening for HTTP on '127.0.0.1:${running.httpPort}'`);
    expect(text).to.contain(`warn Listening for gRPC on '127.0.0.1:${running.grpcPort}'`);
    expect(running.stats.counter('ratelimit.service.config_load_success').value()).to.equal(1);
  });

  it('answers ShouldRateLimit over gRPC until the limit is reached', async () => {
    const first = await call(rl, request('test', [['key1', 'value1']]));
    expect(first.overallCode).to.equal(RateLimitResponse_Code.OK);
    expect(first.statuses[0]?.limitRemaining).to.equal(1);
    expect(first.statuses[0]?.currentLimit).to.deep.include({ requestsPerUnit: 2, unit: 2 });
    await call(rl, request('test', [['key1', 'value1']]));
    const third = await call(rl, request('test', [['key1', 'value1']]));
    expect(third.overallCode).to.equal(RateLimitResponse_Code.OVER_LIMIT);
    const free = await call(rl, request('test', [['free', 'anything']]));
    expect(free.overallCode).to.equal(RateLimitResponse_Code.OK);
  });

  it('maps service errors to gRPC UNKNOWN with the message', async () => {
    const err = (await call(rl, request('', [['key1', 'value1']])).then(
      () => undefined,
      (e: unknown) => e,
    )) as grpc.ServiceError;
    expect(err.code).to.equal(grpc.status.UNKNOWN);
    expect(err.details).to.equal('rate limit domain must not be empty');
  });

  it('rejects undecodable request bytes without crashing', async () => {
    const raw = new grpc.Client(`127.0.0.1:${running.grpcPort}`, grpc.credentials.createInsecure());
    try {
      const err = await new Promise<grpc.ServiceError>((resolve, reject) => {
        raw.makeUnaryRequest(
          '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]),
          (e, res) => (e !== null ? resolve(e) : reject(new Error(`unexpected answer ${String(res)}`))),
        );
      });
      expect([grpc.status.INTERNAL, grpc.status.INVALID_ARGUMENT]).to.include(err.code);
      // A domain of bytes C3 28 (not UTF-8): protobuf-go refuses it with INTERNAL, so do we.
      const badUtf8 = await new Promise<grpc.ServiceError>((resolve, reject) => {
        raw.makeUnaryRequest(
          '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from([0x0a, 0x02, 0xc3, 0x28, 0x12, 0x00]),
          (e, res) => (e !== null ? resolve(e) : reject(new Error(`unexpected answer ${String(res)}`))),
        );
      });
      expect(badUtf8.code).to.equal(grpc.status.INTERNAL);
    } finally {
      raw.close();
    }
    const still = await call(rl, request('test', [['free', 'x']]));
    expect(still.overallCode).to.equal(RateLimitResponse_Code.OK);
  });

  it('serves gRPC health for "ratelimit" and "" and refuses unknown services', async () => {
    expect((await check(health, '')).status).to.equal(HealthCheckResponse_ServingStatus.SERVING);
    expect((await check(health, 'ratelimit')).status).to.equal(HealthCheckResponse_ServingStatus.SERVING);
    const err = (await check(health, 'other').then(
      () => undefined,
      (e: unknown) => e,
    )) as grpc.ServiceError;
    expect(err.code).to.equal(grpc.status.NOT_FOUND);
  });

  it('reports an unhealthy component over HTTP and gRPC, Check and Watch', async () => {
    expect(await httpRequest(running.httpPort, '/healthcheck')).to.include({ status: 200, body: 'OK' });
    const seen: number[] = [];
    const stream = health.watch({ service: 'ratelimit' });
    const gotTwo = new Promise<void>((resolve) =>
      stream.on('data', (r: HealthCheckResponse) => {
        seen.push(r.status);
        if (seen.length === 2) resolve();
      }),
    );
    stream.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 100));
    running.health.set('sigterm', false);
    try {
      await gotTwo;
      expect(seen).to.deep.equal([
        HealthCheckResponse_ServingStatus.SERVING,
        HealthCheckResponse_ServingStatus.NOT_SERVING,
      ]);
      const down = await httpRequest(running.httpPort, '/healthcheck');
      expect(down).to.include({ status: 500, body: '' });
      expect((await check(health, 'ratelimit')).status).to.equal(HealthCheckResponse_ServingStatus.NOT_SERVING);
      expect((await check(health, '')).status).to.equal(HealthCheckResponse_ServingStatus.SERVING);
    } finally {
      stream.cancel();
      running.health.set('sigterm', true);
    }
  });

  it('answers /json with 200, 429 and 400 as upstream', async () => {
    const ok = await httpRequest(running.httpPort, '/json', {
      body: '{"domain":"test","descriptors":[{"entries":[{"key":"free","value":"x"}]}]}',
    });
    expect(ok).to.include({ status: 200, type: 'application/json' });
    expect(JSON.parse(ok.body)).to.deep.equal({ overallCode: 'OK', statuses: [{ code: 'OK' }] });

    const over = await httpRequest(running.httpPort, '/json', {
      method: 'PUT',
      body: '{"domain":"test","descriptors":[{"entries":[{"key":"key1","value":"value1"}]}]}',
    });
    expect(over.status).to.equal(429);
    const overBody = JSON.parse(over.body) as { overallCode: string; statuses: Record<string, unknown>[] };
    expect(overBody.overallCode).to.equal('OVER_LIMIT');
    expect(overBody.statuses[0]).to.include({ code: 'OVER_LIMIT' });
    expect(overBody.statuses[0]?.currentLimit).to.deep.equal({ requestsPerUnit: 2, unit: 'MINUTE' });
    expect(overBody.statuses[0]).to.not.have.property('limitRemaining');
    expect(overBody.statuses[0]?.durationUntilReset).to.match(/^\d+s$/);

    for (const body of ['', 'garbage', '{"domain":"test","bogus":1}', '{"domain":""}']) {
      const bad = await httpRequest(running.httpPort, '/json', { method: 'POST', body });
      expect(bad, body).to.deep.equal({ status: 400, type: 'text/plain; charset=utf-8', body: 'Bad Request\n' });
    }
    const notUtf8 = await fetch(`http://127.0.0.1:${running.httpPort}/json`, {
      method: 'POST',
      body: Buffer.from('{"domain":"te\xffst"}', 'latin1'),
    });
    expect(notUtf8.status).to.equal(400);
    expect(await notUtf8.text()).to.equal('Bad Request\n');
    expect((await httpRequest(running.httpPort, '/nope')).status).to.equal(404);
    expect((await httpRequest(running.httpPort, '/json/')).status).to.equal(404);
  });

  it('serves the debug endpoints', async () => {
    const index = await httpRequest(running.debugPort, '/');
    expect(index.body).to.equal(
      '/debug/pprof/: root of various pprof endpoints. hit for help.\n' +
        '/debug/pprof/profile: CPU profiling endpoint\n' +
        '/debug/pprof/trace: trace endpoint\n' +
        '/rlconfig: print out the currently loaded configuration for debugging\n' +
        '/stats: print out stats\n',
    );
    const rlconfig = await httpRequest(running.debugPort, '/rlconfig');
    expect(rlconfig.body).to.contain(
      'test.key1_value1: unit=MINUTE requests_per_unit=2, shadow_mode: false, quota_mode: false',
    );
    const stats = await httpRequest(running.debugPort, '/stats');
    expect(stats.body).to.contain('ratelimit.service.config_load_success: 1\n');
    expect(stats.body).to.match(/ratelimit_server\.ShouldRateLimit\.total_requests: \d+\n/);
    expect(stats.body).to.match(/^cmdline: \[.*\]\nmemstats: \{"rss":\d+/);
    const lines = stats.body.trim().split('\n');
    expect(lines).to.deep.equal([...lines].sort());
    expect((await httpRequest(running.debugPort, '/debug/pprof/')).body).to.contain('/debug/pprof/profile');
    const profile = await httpRequest(running.debugPort, '/debug/pprof/profile?seconds=1');
    expect(profile.status).to.equal(200);
    expect(JSON.parse(profile.body)).to.have.property('nodes');
    expect((await httpRequest(running.debugPort, '/debug/pprof/profile?seconds=abc')).status).to.equal(400);
    const heap = await httpRequest(running.debugPort, '/debug/pprof/heap');
    expect(heap.status).to.equal(200);
    expect(heap.body.startsWith('{"snapshot":')).to.equal(true);
  });

  it('flushes counters, timers and deltas to a statsd server over TCP', async () => {
    await call(rl, request('test', [['free', 'y']]));
    const deadline = Date.now() + 10_000;
    while (!statsdLines.includes('ratelimit_server.ShouldRateLimit.response_time:') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(statsdLines).to.match(/^ratelimit_server\.ShouldRateLimit\.total_requests:\d+\|c$/m);
    expect(statsdLines).to.match(/^ratelimit_server\.ShouldRateLimit\.response_time:[\d.]+\|ms$/m);
    expect(statsdLines).to.match(/^ratelimit\.service\.rate_limit\.test\.key1_value1\.total_hits:\d+\|c$/m);
    expect(statsdLines).to.contain('ratelimit.service.config_load_success:1|c\n');
    // Counters are deltas: the config load is counted once however many flushes happened.
    expect(statsdLines.split('ratelimit.service.config_load_success:').length).to.equal(2);
  });

  it('runs the CLI client against the server', async () => {
    const result = await runClient([
      '-dial_string',
      `127.0.0.1:${running.grpcPort}`,
      '-domain=test',
      '-descriptors',
      'free=z',
    ]);
    expect(result.code).to.equal(0);
    expect(result.stdout).to.equal(
      [
        'Flag: --descriptors="[ <key=free, value=z> ] "',
        `Flag: --dial_string="127.0.0.1:${running.grpcPort}"`,
        'Flag: --domain="test"',
        'Flag: --grpc-cert-file=""',
        'Flag: --grpc-key-file=""',
        'Flag: --grpc-server-ca-file=""',
        'Flag: --grpc-use-tls="false"',
        'Flag: --oltp-protocol=""',
        'response: overall_code:OK statuses:{code:OK}',
        '',
      ].join('\n'),
    );
    const failed = await runClient(['-dial_string', `127.0.0.1:${running.grpcPort}`, '-descriptors', 'free=z']);
    expect(failed.code).to.equal(1);
    expect(failed.stdout).to.contain(
      'request error: rpc error: code = Unknown desc = rate limit domain must not be empty',
    );
    const bad = await runClient(['-descriptors', 'a=b=c']);
    expect(bad.code).to.equal(2);
    expect(bad.stdout).to.equal('');
    expect(bad.stderr).to.contain('invalid value "a=b=c" for flag -descriptors: invalid descriptor list');
  });
});

describe('sidecar startup and shutdown', function () {
  this.timeout(60_000);

  it('waits for the first config event unless FORCE_START_WITHOUT_INITIAL_CONFIG', async () => {
    const root = makeSidecarConfigDir(CONFIG);
    try {
      let emit: (() => void) | undefined;
      const base = quietRunnerDeps(recordingLogger());
      const deps: RunnerDeps = {
        ...base,
        createConfigSource: (settings, callbacks) => {
          const real = base.createConfigSource(settings, {
            ...callbacks,
            onConfig: (config, names) => {
              emit = () => callbacks.onConfig(config, names);
            },
          });
          return real;
        },
      };
      let started = false;
      const pending = startRateLimitServer(loadSettings(baseEnv(root)), deps).then((r) => {
        started = true;
        return r;
      });
      const deadline = Date.now() + 10_000;
      while (emit === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      expect(started).to.equal(false);
      emit?.();
      const running = await pending;
      await running.stop();

      const forced = await startRateLimitServer(
        loadSettings(baseEnv(root, { FORCE_START_WITHOUT_INITIAL_CONFIG: 'true' })),
        { ...base, createConfigSource: () => ({ start: () => undefined, stop: () => undefined }) },
      );
      try {
        const res = await httpRequest(forced.httpPort, '/json', {
          body: '{"domain":"test","descriptors":[{"entries":[{"key":"free","value":"x"}]}]}',
        });
        expect(res.status).to.equal(400);
        expect(forced.currentConfig()).to.equal(undefined);
      } finally {
        await forced.stop();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('counts a bad config as config_load_error and still starts', async () => {
    const root = makeSidecarConfigDir(
      'domain: test\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: fortnight\n',
    );
    const logger = recordingLogger();
    let statsText = '';
    const running = await startRateLimitServer(loadSettings(baseEnv(root)), {
      ...defaultRunnerDeps(logger),
      statsOutput: (text) => (statsText += text),
    });
    try {
      expect(running.stats.counter('ratelimit.service.config_load_error').value()).to.equal(1);
      expect(running.currentConfig()).to.equal(undefined);
      expect(logger.lines.join('\n')).to.contain("invalid rate limit unit 'fortnight'");
    } finally {
      await running.stop();
      rmSync(root, { recursive: true, force: true });
    }
    // USE_STATSD=false and no other sink: gostats' logging sink lines, flushed once more on stop.
    const lines = statsText
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { logger: string; msg: string; json: Record<string, string> });
    expect(lines.every((l) => l.logger === 'gostats.loggingsink')).to.equal(true);
    expect(lines.map((l) => l.json)).to.deep.include({
      name: 'ratelimit.service.config_load_error',
      type: 'counter',
      value: '1.000000',
    });
    expect(lines[lines.length - 1]?.json).to.deep.equal({ type: 'all stats', value: '0.000000' });
  });

  it('on SIGTERM flips health, ends health watches and stops listening', async () => {
    const root = makeSidecarConfigDir(CONFIG);
    const running = await startRateLimitServer(loadSettings(baseEnv(root)), quietRunnerDeps(recordingLogger()));
    const health = new HealthClient(`127.0.0.1:${running.grpcPort}`, grpc.credentials.createInsecure());
    try {
      const seen: number[] = [];
      const stream = health.watch({ service: 'ratelimit' });
      const ended = new Promise<void>((resolve) => {
        stream.on('data', (r: HealthCheckResponse) => seen.push(r.status));
        stream.on('end', () => resolve());
        stream.on('error', () => resolve());
      });
      await new Promise((r) => setTimeout(r, 100));
      await running.handleSignal('SIGTERM');
      await ended;
      expect(seen).to.deep.equal([
        HealthCheckResponse_ServingStatus.SERVING,
        HealthCheckResponse_ServingStatus.NOT_SERVING,
      ]);
      expect(running.health.isHealthy()).to.equal(false);
      const refused = await fetch(`http://127.0.0.1:${running.httpPort}/healthcheck`).then(
        () => false,
        () => true,
      );
      expect(refused).to.equal(true);
    } finally {
      health.close();
      await running.stop();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('reloads changed files and tracks the config health component', async () => {
    const root = makeSidecarConfigDir('domain: other\ndescriptors: []\n');
    rmSync(path.join(root, 'config', 'config.yaml'));
    const running = await startRateLimitServer(
      loadSettings(baseEnv(root, { HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true' })),
      quietRunnerDeps(recordingLogger()),
    );
    try {
      // An empty directory is a valid config with no domains: loaded, but unhealthy.
      expect(running.stats.counter('ratelimit.service.config_load_success').value()).to.equal(1);
      expect(running.health.isHealthy()).to.equal(false);
      expect((await httpRequest(running.httpPort, '/healthcheck')).status).to.equal(500);
      writeFileSync(path.join(root, 'config', 'config.yaml'), CONFIG);
      const deadline = Date.now() + 15_000;
      while (running.currentConfig()?.hasDomain('test') !== true && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(running.currentConfig()?.hasDomain('test')).to.equal(true);
      expect(running.health.isHealthy()).to.equal(true);
      expect((await httpRequest(running.httpPort, '/healthcheck')).status).to.equal(200);
    } finally {
      await running.stop();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('serves gRPC on a unix socket when GRPC_UDS is set', async () => {
    const root = makeSidecarConfigDir(CONFIG);
    const socket = path.join(root, 'grpc.sock');
    // deps omitted: the production wiring with no logging.
    const running = await startRateLimitServer(
      loadSettings(baseEnv(root, { GRPC_UDS: socket, DISABLE_STATS: 'true' })),
    );
    const client = new RateLimitServiceClient(`unix:${socket}`, grpc.credentials.createInsecure());
    try {
      const res = await call(client, request('test', [['free', 'x']]));
      expect(res.overallCode).to.equal(RateLimitResponse_Code.OK);
    } finally {
      client.close();
      await running.stop();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('exposes Prometheus metrics with upstream names and labels', async () => {
    const root = makeSidecarConfigDir(CONFIG);
    const running = await startRateLimitServer(
      loadSettings(baseEnv(root, { USE_STATSD: 'false', USE_PROMETHEUS: 'true', PROMETHEUS_ADDR: '127.0.0.1:0' })),
      quietRunnerDeps(recordingLogger()),
    );
    const client = new RateLimitServiceClient(`127.0.0.1:${running.grpcPort}`, grpc.credentials.createInsecure());
    try {
      for (let i = 0; i < 3; i++) await call(client, request('test', [['key1', 'value1']]));
      await call(client, request('', [['key1', 'value1']])).catch(() => undefined);
      const port = running.prometheusPort ?? 0;
      const metrics = await httpRequest(port, '/metrics');
      expect(metrics.status).to.equal(200);
      expect(metrics.body).to.contain('ratelimit_service_rate_limit_total_hits{domain="test",key1="key1_value1"} 3');
      expect(metrics.body).to.contain('ratelimit_service_rate_limit_over_limit{domain="test",key1="key1_value1"} 1');
      expect(metrics.body).to.contain('ratelimit_service_rate_limit_within_limit{domain="test",key1="key1_value1"} 2');
      expect(metrics.body).to.contain('ratelimit_service_rate_limit_near_limit{domain="test",key1="key1_value1"} 1');
      expect(metrics.body).to.contain('ratelimit_service_total_requests{grpc_method="ShouldRateLimit"} 4');
      expect(metrics.body).to.contain('ratelimit_service_should_rate_limit_error{err_type="service_error"} 1');
      expect(metrics.body).to.contain('ratelimit_service_config_load_success 1');
      expect(metrics.body).to.match(/ratelimit_service_response_time_seconds_count\{grpc_method="ShouldRateLimit"\} 4/);
      expect((await httpRequest(port, '/other')).status).to.equal(404);
    } finally {
      client.close();
      await running.stop();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

function runClient(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'sidecar/cli/client.ts', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('sidecar servers on Redis', function () {
  this.timeout(60_000);

  it('reports a Redis outage as gRPC UNKNOWN and /json 400', async () => {
    const redis = await startRedisServer();
    const root = makeSidecarConfigDir(CONFIG);
    const running = await startRateLimitServer(
      loadSettings(
        baseEnv(root, { BACKEND_TYPE: 'redis', REDIS_SOCKET_TYPE: 'tcp', REDIS_URL: redis.url, REDIS_TIMEOUT: '1s' }),
      ),
      quietRunnerDeps(recordingLogger()),
    );
    const client = new RateLimitServiceClient(`127.0.0.1:${running.grpcPort}`, grpc.credentials.createInsecure());
    try {
      expect(running.health.isHealthy()).to.equal(true);
      const ok = await call(client, request('test', [['key1', 'value1']]));
      expect(ok.statuses[0]?.limitRemaining).to.equal(1);
      await redis.stop();
      const err = (await call(client, request('test', [['key1', 'value1']])).catch(
        (e: unknown) => e,
      )) as grpc.ServiceError;
      expect(err.code).to.equal(grpc.status.UNKNOWN);
      expect(err.details).to.not.equal('');
      const json = await httpRequest(running.httpPort, '/json', {
        body: '{"domain":"test","descriptors":[{"entries":[{"key":"key1","value":"value1"}]}]}',
      });
      expect(json).to.include({ status: 400, body: 'Bad Request\n' });
      expect(running.stats.counter('ratelimit.service.call.should_rate_limit.redis_error').value()).to.be.greaterThan(
        0,
      );
    } finally {
      client.close();
      await running.stop();
      await redis.stop();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('sidecar DogStatsD sink', function () {
  this.timeout(30_000);

  it('sends counters with EXTRA_TAGS and mogrifier tags as DogStatsD lines over UDP', async () => {
    const root = makeSidecarConfigDir(CONFIG);
    const udp = dgram.createSocket('udp4');
    let received = '';
    udp.on('message', (m) => (received += m.toString() + '\n'));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    const running = await startRateLimitServer(
      loadSettings(
        baseEnv(root, {
          USE_STATSD: 'false',
          USE_DOG_STATSD: 'true',
          STATSD_HOST: '127.0.0.1',
          STATSD_PORT: String(udp.address().port),
          STATS_FLUSH_INTERVAL: '50ms',
          EXTRA_TAGS: 'env:test',
          USE_DOG_STATSD_MOGRIFIERS: 'RL',
          DOG_STATSD_MOGRIFIER_RL_PATTERN: '^ratelimit\\.service\\.rate_limit\\.([^.]+)\\.(.*)\\.([^.]+)$',
          DOG_STATSD_MOGRIFIER_RL_NAME: 'ratelimit.service.rate_limit.$3',
          DOG_STATSD_MOGRIFIER_RL_TAGS: 'domain:$1,descriptor:$2',
        }),
      ),
      quietRunnerDeps(recordingLogger()),
    );
    const client = new RateLimitServiceClient(`127.0.0.1:${running.grpcPort}`, grpc.credentials.createInsecure());
    try {
      await call(client, request('test', [['key1', 'value1']]));
      const deadline = Date.now() + 10_000;
      while (!received.includes('total_hits') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(received).to.contain(
        'ratelimit.service.rate_limit.total_hits:1|c|#env:test,domain:test,descriptor:key1_value1\n',
      );
      expect(received).to.match(/^ratelimit_server\.ShouldRateLimit\.total_requests:1\|c\|#env:test$/m);
      expect(received).to.match(/^ratelimit_server\.ShouldRateLimit\.response_time:\d+\|ms\|#env:test$/m);
    } finally {
      client.close();
      await running.stop();
      udp.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('sidecar config source choice', function () {
  this.timeout(30_000);

  it('uses the xDS source for CONFIG_TYPE=GRPC_XDS_SOTW and starts without config when forced', async () => {
    const root = makeSidecarConfigDir(CONFIG);
    const running = await startRateLimitServer(
      loadSettings(
        baseEnv(root, {
          CONFIG_TYPE: 'GRPC_XDS_SOTW',
          CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${await freePort()}`,
          FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
        }),
      ),
      quietRunnerDeps(recordingLogger()),
    );
    try {
      // Nothing answers at that address, so no config arrives (the files in RUNTIME_ROOT are not read).
      expect(running.currentConfig()).to.equal(undefined);
      const res = await httpRequest(running.httpPort, '/json', {
        body: '{"domain":"test","descriptors":[{"entries":[{"key":"free","value":"x"}]}]}',
      });
      expect(res.status).to.equal(400);
    } finally {
      await running.stop();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
