// The one call the servers need from the rate limit service; the servers depend on this, not on the service module.
import type { RateLimitRequest, RateLimitResponse } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { TraceCarrier } from '../tracing/index.js';

export interface DecisionService {
  /**
   * Decides one request. `carrier` is the call's gRPC metadata or HTTP headers as the server holds them (tracing
   * reads `traceparent`/`b3` from it when enabled; nothing reads it otherwise).
   * @throws ServiceError (bad request, no config) or BackendError (counter store failed); servers map both to
   *   gRPC UNKNOWN with the message and to /json 400.
   */
  shouldRateLimit(request: RateLimitRequest, carrier?: TraceCarrier): Promise<RateLimitResponse>;
}
