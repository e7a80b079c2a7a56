// Spans around one decision: the gRPC server span or `NewJsonHandler Remaining Execution`, then
// `ShouldRateLimit Execution`, parented on the caller's W3C/B3 headers (upstream src/service/ratelimit.go).
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type ContextManager,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import type { RateLimitRequest, RateLimitResponse } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { requestText } from './request-text.js';
import { headerGetter, isMetadataCarrier, metadataGetter, type TraceCarrier } from './trace-carrier.js';

/** The decision call as the servers make it (structurally the servers' DecisionService). */
export interface TraceableService {
  shouldRateLimit(request: RateLimitRequest, carrier?: TraceCarrier): Promise<RateLimitResponse>;
}

export interface TracedServiceDeps {
  readonly tracer: Tracer;
  readonly propagator: TextMapPropagator;
  /** Carries the active span into the backend calls (our own instance, not the global one). */
  readonly contextManager: ContextManager;
}

/** The gRPC method as otelgrpc names its server span. */
const GRPC_SPAN_NAME = 'envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
const GRPC_STATUS_UNKNOWN = 2;

export function traceDecisionService<S extends TraceableService>(inner: S, deps: TracedServiceDeps): S {
  const { tracer, propagator, contextManager } = deps;

  const fail = (span: Span | undefined, err: unknown): void => {
    if (span === undefined) return;
    if (err instanceof Error) span.recordException(err);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  };

  const traced: TraceableService = {
    async shouldRateLimit(request, carrier) {
      let parent: Context = ROOT_CONTEXT;
      let outer: Span | undefined;
      if (carrier !== undefined && isMetadataCarrier(carrier)) {
        parent = propagator.extract(ROOT_CONTEXT, carrier, metadataGetter);
        outer = tracer.startSpan(
          GRPC_SPAN_NAME,
          {
            kind: SpanKind.SERVER,
            attributes: {
              'rpc.system': 'grpc',
              'rpc.service': 'envoy.service.ratelimit.v3.RateLimitService',
              'rpc.method': 'ShouldRateLimit',
            },
          },
          parent,
        );
      } else if (carrier !== undefined) {
        parent = propagator.extract(ROOT_CONTEXT, carrier, headerGetter);
        outer = tracer.startSpan('NewJsonHandler Remaining Execution', { kind: SpanKind.SERVER }, parent);
      }
      if (outer !== undefined) parent = trace.setSpan(parent, outer);
      const span = tracer.startSpan('ShouldRateLimit Execution', { attributes: { domain: request.domain } }, parent);
      if (span.isRecording()) span.setAttribute('request string', requestText(request));
      try {
        const response = await contextManager.with(trace.setSpan(parent, span), () =>
          inner.shouldRateLimit(request, carrier),
        );
        if (outer !== undefined && isMetadataCarrier(carrier!)) outer.setAttribute('rpc.grpc.status_code', 0);
        return response;
      } catch (err) {
        fail(span, err);
        fail(outer, err);
        if (outer !== undefined && isMetadataCarrier(carrier!)) {
          outer.setAttribute('rpc.grpc.status_code', GRPC_STATUS_UNKNOWN);
        }
        throw err;
      } finally {
        span.end();
        outer?.end();
      }
    },
  };
  return Object.assign(Object.create(inner) as S, traced);
}
