// OpenTelemetry for the sidecar: tracer provider, sampler, OTLP exporter and propagators, built from the
// TRACING_* settings; off by default, and then a pass-through that adds nothing to the hot path.
import { randomUUID } from 'node:crypto';
import { type ContextManager, type TextMapPropagator } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpGrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as OtlpHttpTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { B3InjectEncoding, B3Propagator } from '@opentelemetry/propagator-b3';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { CounterBackend } from '../limiter/index.js';
import type { Logger } from '../logger.js';
import { traceCounterBackend, type TracedBackendKind } from './traced-backend.js';
import { traceDecisionService, type TraceableService } from './traced-decision-service.js';

/** The TRACING_* settings (the shape of settings.tracing). */
export interface TracingOptions {
  /** TRACING_ENABLED. */
  readonly enabled: boolean;
  /** TRACING_EXPORTER_PROTOCOL: OTLP over HTTP (JSON) or gRPC. */
  readonly exporterProtocol: 'http' | 'grpc';
  /** TRACING_SERVICE_NAME → service.name. */
  readonly serviceName: string;
  /** TRACING_SERVICE_NAMESPACE → service.namespace; '' leaves it out. */
  readonly serviceNamespace: string;
  /** TRACING_SERVICE_INSTANCE_ID → service.instance.id; '' = a random UUIDv4 per process. */
  readonly serviceInstanceId: string;
  /** TRACING_SAMPLING_RATE in [0, 1]: ParentBased(TraceIdRatio(rate)). */
  readonly samplingRate: number;
}

export interface TracingDeps {
  readonly logger: Logger;
  /** Replaces the OTLP exporter (tests); by default the exporter reads the standard OTEL_EXPORTER_OTLP_* variables. */
  readonly exporter?: SpanExporter;
}

export interface Tracing {
  readonly enabled: boolean;
  /**
   * The decision service with spans, parented on the carrier's `traceparent`/`b3` headers. When disabled, returns
   * `service` itself (no wrapper, no per-request work).
   */
  traceService<S extends TraceableService>(service: S): S;
  /**
   * The backend with a span per round trip (Redis and memcache; the memory store has none, as upstream has no such
   * backend). When disabled, or for 'memory', returns `backend` itself.
   */
  traceBackend<B extends CounterBackend>(backend: B, kind: TracedBackendKind | 'memory', perSecondRedis: boolean): B;
  /** Exports the spans ended so far. */
  forceFlush(): Promise<void>;
  /** Exports what is left and stops; idempotent. */
  shutdown(): Promise<void>;
}

function disabledTracing(): Tracing {
  return {
    enabled: false,
    traceService: (service) => service,
    traceBackend: (backend) => backend,
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
}

/** W3C trace context, B3 (single and multi header, both read; multi written) and baggage, as upstream. */
export function createTracePropagator(): TextMapPropagator {
  return new CompositePropagator({
    propagators: [
      new W3CTraceContextPropagator(),
      new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER }),
      new W3CBaggagePropagator(),
    ],
  });
}

export function createTracing(options: TracingOptions, deps: TracingDeps): Tracing {
  if (!options.enabled) return disabledTracing();
  const exporter =
    deps.exporter ?? (options.exporterProtocol === 'grpc' ? new OtlpGrpcTraceExporter() : new OtlpHttpTraceExporter());
  const attributes: Record<string, string> = {
    'service.name': options.serviceName,
    'service.instance.id': options.serviceInstanceId === '' ? randomUUID() : options.serviceInstanceId,
  };
  if (options.serviceNamespace !== '') attributes['service.namespace'] = options.serviceNamespace;
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes(attributes)),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.samplingRate) }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // Our own context manager instance instead of the process-global one: nothing else in the process is affected.
  const contextManager: ContextManager = new AsyncLocalStorageContextManager().enable();
  const tracer = provider.getTracer('chorus-ratelimit');
  const propagator = createTracePropagator();
  deps.logger.info('tracing enabled', {
    protocol: options.exporterProtocol,
    serviceName: options.serviceName,
    samplingRate: options.samplingRate,
  });
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    traceService: (service) => traceDecisionService(service, { tracer, propagator, contextManager }),
    traceBackend: (backend, kind, perSecondRedis) =>
      kind === 'memory' ? backend : traceCounterBackend(backend, { tracer, contextManager, kind, perSecondRedis }),
    forceFlush: () => provider.forceFlush(),
    shutdown() {
      stopped ??= provider
        .shutdown()
        .catch((err: unknown) => deps.logger.warn('tracing shutdown failed', { error: (err as Error).message }))
        .finally(() => contextManager.disable());
      return stopped;
    },
  };
}
