// createTracing on its own: off is a pass-through, B3 multi-header parents, memcache spans, errors, OTLP over gRPC.
import * as grpc from '@grpc/grpc-js';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import type { RateLimitRequest, RateLimitResponse } from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { RateLimitUnit } from '../../../../proto/gen/envoy/type/v3/ratelimit_unit.js';
import { ServiceError } from '../../../../sidecar/errors.js';
import type { CounterBackend } from '../../../../sidecar/limiter/index.js';
import { silentLogger } from '../../../../sidecar/logger.js';
import type { DecisionService } from '../../../../sidecar/server/decision-service.js';
import { createTracing, requestText, type TracingOptions } from '../../../../sidecar/tracing/index.js';

const ON: TracingOptions = {
  enabled: true,
  exporterProtocol: 'http',
  serviceName: 'RateLimit',
  serviceNamespace: '',
  serviceInstanceId: '',
  samplingRate: 1,
};
const REQUEST: RateLimitRequest = {
  domain: 'd',
  descriptors: [{ entries: [{ key: 'k', value: 'v w"' }], limit: { requestsPerUnit: 3, unit: 2 }, hitsAddend: 0 }],
  hitsAddend: 0,
};
const RESPONSE = {} as RateLimitResponse;

function backendStub(): CounterBackend & { flush(): Promise<void> } {
  return {
    increment: async (ops) => ops.map((op) => op.hits),
    get: async (ops) => ops.map(() => 0),
    close: async () => undefined,
    flush: async () => undefined,
  };
}

describe('tracing', () => {
  it('disabled: the service and the backend are returned as they are (nothing on the hot path)', async () => {
    const tracing = createTracing({ ...ON, enabled: false }, { logger: silentLogger });
    const service = { shouldRateLimit: async () => RESPONSE };
    const backend = backendStub();
    expect(tracing.enabled).to.equal(false);
    expect(tracing.traceService(service)).to.equal(service);
    expect(tracing.traceBackend(backend, 'redis', false)).to.equal(backend);
    await tracing.shutdown();
  });

  it('enabled: memory has no backend span; B3 multi-header parents /json; memcache span counts keys', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = createTracing(ON, { logger: silentLogger, exporter });
    const memory = backendStub();
    expect(tracing.traceBackend(memory, 'memory', false)).to.equal(memory);
    const backend = tracing.traceBackend(backendStub(), 'memcache', false);
    // Other members pass through untouched.
    expect(backend.flush).to.be.a('function');
    const service = tracing.traceService<DecisionService>({
      shouldRateLimit: async () => {
        await backend.increment([
          { key: 'a', hits: 1, ttlSeconds: 60, perSecond: false },
          { key: 'b', hits: 1, ttlSeconds: 1, perSecond: true },
        ]);
        return RESPONSE;
      },
    });
    await service.shouldRateLimit(REQUEST, {
      'x-b3-traceid': '463ac35c9f6413ad48485a3953bb6124',
      'x-b3-spanid': 'a2fb4a1d1a96d312',
      'x-b3-sampled': '1',
    });
    await tracing.forceFlush();
    const spans = exporter.getFinishedSpans();
    const byName = new Map(spans.map((s) => [s.name, s]));
    expect([...byName.keys()].sort()).to.deep.equal([
      'Memcached Fetch Execution',
      'NewJsonHandler Remaining Execution',
      'ShouldRateLimit Execution',
    ]);
    const handler = byName.get('NewJsonHandler Remaining Execution')!;
    expect(handler.spanContext().traceId).to.equal('463ac35c9f6413ad48485a3953bb6124');
    expect(handler.parentSpanContext?.spanId).to.equal('a2fb4a1d1a96d312');
    const execution = byName.get('ShouldRateLimit Execution')!;
    expect(execution.parentSpanContext?.spanId).to.equal(handler.spanContext().spanId);
    expect(execution.attributes['request string']).to.equal(requestText(REQUEST));
    const fetch = byName.get('Memcached Fetch Execution')!;
    expect(fetch.parentSpanContext?.spanId).to.equal(execution.spanContext().spanId);
    expect(fetch.attributes['keysToGet length']).to.equal(2);
    // A random UUIDv4 instance id when none is configured.
    expect(String(execution.resource.attributes['service.instance.id'])).to.match(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    await tracing.shutdown();
  });

  it('a failed decision marks the spans as errors and still ends them; Redis per-second split counted', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = createTracing(ON, { logger: silentLogger, exporter });
    const backend = tracing.traceBackend(backendStub(), 'redis', true);
    const service = tracing.traceService<DecisionService>({
      shouldRateLimit: async () => {
        await backend.increment([
          { key: 'a', hits: 1, ttlSeconds: 60, perSecond: false },
          { key: 'b', hits: 1, ttlSeconds: 1, perSecond: true },
          { key: 'c', hits: 1, ttlSeconds: 1, perSecond: true },
        ]);
        throw new ServiceError('empty_domain', 'rate limit domain must not be empty');
      },
    });
    const metadata = new grpc.Metadata();
    let caught: unknown;
    await service.shouldRateLimit(REQUEST, metadata).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(ServiceError);
    await tracing.forceFlush();
    const byName = new Map(exporter.getFinishedSpans().map((s) => [s.name, s]));
    const rpc = byName.get('envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit')!;
    expect(rpc.parentSpanContext).to.equal(undefined);
    expect(rpc.status.code).to.equal(2); // SpanStatusCode.ERROR
    expect(rpc.attributes['rpc.grpc.status_code']).to.equal(2);
    expect(byName.get('ShouldRateLimit Execution')!.status.message).to.equal('rate limit domain must not be empty');
    const pipeline = byName.get('Redis Pipeline Execution')!;
    expect(pipeline.attributes['pipeline length']).to.equal(2);
    expect(pipeline.attributes['perSecondPipeline length']).to.equal(4);
    await tracing.shutdown();
  });

  it('request string: text form, quoted values, unknown unit numbers kept', () => {
    expect(requestText(REQUEST)).to.equal(
      'domain:"d" descriptors:{entries:{key:"k" value:"v w\\""} limit:{requests_per_unit:3 unit:MINUTE} hits_addend:{value:0}}',
    );
    expect(
      requestText({
        domain: '',
        descriptors: [{ entries: [], limit: { requestsPerUnit: 1, unit: 42 as RateLimitUnit }, hitsAddend: undefined }],
        hitsAddend: 5,
      }),
    ).to.equal('descriptors:{limit:{requests_per_unit:1 unit:42}} hits_addend:5');
  });

  it('TRACING_EXPORTER_PROTOCOL=grpc exports OTLP over gRPC to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', async () => {
    const received: Buffer[] = [];
    const server = new grpc.Server();
    const raw = (b: Buffer): Buffer => b;
    server.addService(
      {
        Export: {
          path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
          requestStream: false,
          responseStream: false,
          requestSerialize: raw,
          requestDeserialize: raw,
          responseSerialize: raw,
          responseDeserialize: raw,
        },
      },
      {
        Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
          received.push(call.request);
          callback(null, Buffer.alloc(0)); // an empty ExportTraceServiceResponse
        },
      },
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
        err === null ? resolve(p) : reject(err),
      ),
    );
    const saved = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `http://127.0.0.1:${port}`;
    let tracing;
    try {
      tracing = createTracing(
        { ...ON, exporterProtocol: 'grpc', serviceName: 'grpc-exported' },
        { logger: silentLogger },
      );
    } finally {
      if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
      else process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = saved;
    }
    try {
      await tracing.traceService<DecisionService>({ shouldRateLimit: async () => RESPONSE }).shouldRateLimit(REQUEST);
      await tracing.shutdown();
      // Protobuf keeps strings as UTF-8 bytes: the span and service names are in the request.
      const all = Buffer.concat(received).toString('latin1');
      expect(received.length).to.be.greaterThan(0);
      expect(all).to.contain('ShouldRateLimit Execution');
      expect(all).to.contain('grpc-exported');
    } finally {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    }
  });
});
