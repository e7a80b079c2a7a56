// The whole sidecar with TRACING_ENABLED on Redis: spans reach a local OTLP/HTTP endpoint, parented on the
// caller's traceparent (gRPC) and b3 (/json) headers, with upstream's names and attributes.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  RateLimitResponse_Code,
  RateLimitServiceClient,
  type RateLimitRequest,
  type RateLimitResponse,
} from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import { defaultRunnerDeps, startRateLimitServer, type RunningRateLimitServer } from '../../../../sidecar/runner.js';
import { loadSettings } from '../../../../sidecar/settings/settings.js';
import { startRedisServer, type RedisServer } from '../../../support/redis-server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const CONFIG = `domain: traced
descriptors:
  - key: user
    rate_limit:
      unit: minute
      requests_per_unit: 5
`;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const B3_TRACE_ID = '80f198ee56343ba864fe8b2a57d3eff7';
const B3_PARENT_ID = 'e457b5a2e4d86bd1';

function call(
  client: RateLimitServiceClient,
  req: RateLimitRequest,
  metadata: grpc.Metadata,
): Promise<RateLimitResponse> {
  return new Promise((resolve, reject) => {
    client.shouldRateLimit(req, metadata, { deadline: Date.now() + 10_000 }, (err, res) =>
      err !== null ? reject(err) : resolve(res),
    );
  });
}

describe('sidecar tracing (OTLP/HTTP to a local endpoint, Redis backend)', () => {
  let redis: RedisServer;
  let receiver: OtlpReceiver;
  let root: string;
  let running: RunningRateLimitServer | undefined;
  let spans: readonly ReceivedSpan[] = [];

  before(async () => {
    [redis, receiver] = await Promise.all([startRedisServer(), startOtlpReceiver()]);
    root = mkdtempSync(path.join(os.tmpdir(), 'chorus-tracing-'));
    mkdirSync(path.join(root, 'config'));
    writeFileSync(path.join(root, 'config', 'config.yaml'), CONFIG);

    // The OTLP exporter reads the standard variable itself, as upstream's; set only while the sidecar starts.
    const saved = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = receiver.url;
    try {
      running = await startRateLimitServer(
        loadSettings({
          HOST: '127.0.0.1',
          PORT: '0',
          GRPC_HOST: '127.0.0.1',
          GRPC_PORT: '0',
          DEBUG_HOST: '127.0.0.1',
          DEBUG_PORT: '0',
          USE_STATSD: 'false',
          RUNTIME_ROOT: root,
          RUNTIME_SUBDIRECTORY: '',
          RUNTIME_WATCH_ROOT: 'false',
          BACKEND_TYPE: 'redis',
          REDIS_SOCKET_TYPE: 'tcp',
          REDIS_URL: redis.url,
          TRACING_ENABLED: 'true',
          TRACING_EXPORTER_PROTOCOL: 'http',
          TRACING_SERVICE_NAME: 'chorus-ratelimit-test',
          TRACING_SERVICE_NAMESPACE: 'chorus',
          TRACING_SERVICE_INSTANCE_ID: 'instance-7',
          // A ratio of 0 still records calls whose parent is sampled (ParentBased), and nothing else.
          TRACING_SAMPLING_RATE: '0',
        }),
        { ...defaultRunnerDeps(silentLogger), statsOutput: () => undefined, shutdownGraceMs: 2000 },
      );
    } finally {
      if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
      else process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = saved;
    }

    const client = new RateLimitServiceClient(`127.0.0.1:${running.grpcPort}`, grpc.credentials.createInsecure());
    const req: RateLimitRequest = {
      domain: 'traced',
      descriptors: [{ entries: [{ key: 'user', value: 'ann' }], limit: undefined, hitsAddend: undefined }],
      hitsAddend: 1,
    };
    const sampled = new grpc.Metadata();
    sampled.set('traceparent', `00-${TRACE_ID}-${PARENT_ID}-01`);
    expect((await call(client, req, sampled)).overallCode).to.equal(RateLimitResponse_Code.OK);
    // Parent not sampled, and no parent at all with ratio 0: no spans.
    const unsampled = new grpc.Metadata();
    unsampled.set('traceparent', `00-${'1'.repeat(32)}-${'2'.repeat(16)}-00`);
    await call(client, req, unsampled);
    await call(client, req, new grpc.Metadata());
    client.close();

    const json = await fetch(`http://127.0.0.1:${running.httpPort}/json`, {
      method: 'POST',
      headers: { b3: `${B3_TRACE_ID}-${B3_PARENT_ID}-1` },
      body: '{"domain":"traced","descriptors":[{"entries":[{"key":"user","value":"bob"}]}]}',
    });
    expect(json.status).to.equal(200);
    // Stopping shuts the tracer down, which exports every ended span.
    await running.stop();
    running = undefined;
    spans = receiver.spans();
  });
  after(async () => {
    await running?.stop();
    await Promise.all([redis.stop(), receiver.stop()]);
    rmSync(root, { recursive: true, force: true });
  });

  const one = (name: string, traceId: string): ReceivedSpan => {
    const found = spans.filter((s) => s.name === name && s.traceId === traceId);
    expect(found, `${name} in trace ${traceId}: ${spans.map((s) => s.name).join(', ')}`).to.have.length(1);
    return found[0]!;
  };

  it('gRPC: server span parented on traceparent, then ShouldRateLimit Execution, then Redis Pipeline Execution', () => {
    const server = one('envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit', TRACE_ID);
    expect(server.parentSpanId).to.equal(PARENT_ID);
    expect(server.kind).to.equal(2); // SPAN_KIND_SERVER
    expect(server.attributes.get('rpc.method')).to.equal('ShouldRateLimit');
    expect(server.attributes.get('rpc.grpc.status_code')).to.equal(0);

    const execution = one('ShouldRateLimit Execution', TRACE_ID);
    expect(execution.parentSpanId).to.equal(server.spanId);
    expect(execution.attributes.get('domain')).to.equal('traced');
    expect(execution.attributes.get('request string')).to.equal(
      'domain:"traced" descriptors:{entries:{key:"user" value:"ann"}} hits_addend:1',
    );

    const pipeline = one('Redis Pipeline Execution', TRACE_ID);
    expect(pipeline.parentSpanId).to.equal(execution.spanId);
    expect(pipeline.attributes.get('pipeline length')).to.equal(2); // INCRBY + EXPIRE
    expect(pipeline.attributes.get('perSecondPipeline length')).to.equal(0);
  });

  it('/json: NewJsonHandler Remaining Execution parented on the b3 header, ShouldRateLimit Execution under it', () => {
    const handler = one('NewJsonHandler Remaining Execution', B3_TRACE_ID);
    expect(handler.parentSpanId).to.equal(B3_PARENT_ID);
    const execution = one('ShouldRateLimit Execution', B3_TRACE_ID);
    expect(execution.parentSpanId).to.equal(handler.spanId);
    expect(one('Redis Pipeline Execution', B3_TRACE_ID).parentSpanId).to.equal(execution.spanId);
  });

  it('samples ParentBased(TraceIdRatio(0)): only the two sampled traces were exported', () => {
    expect(new Set(spans.map((s) => s.traceId))).to.deep.equal(new Set([TRACE_ID, B3_TRACE_ID]));
    expect(spans).to.have.length(6);
  });

  it('carries the service resource attributes', () => {
    const resource = spans[0]!.resource;
    expect(resource.get('service.name')).to.equal('chorus-ratelimit-test');
    expect(resource.get('service.namespace')).to.equal('chorus');
    expect(resource.get('service.instance.id')).to.equal('instance-7');
  });
});
