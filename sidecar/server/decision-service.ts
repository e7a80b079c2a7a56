// The one call the servers need from the rate limit service; the servers depend on this, not on the service module.
import type { RateLimitRequest, RateLimitResponse } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';

export interface DecisionService {
  /**
   * Decides one request.
   * @throws ServiceError (bad request, no config) or BackendError (counter store failed); servers map both to
   *   gRPC UNKNOWN with the message and to /json 400.
   */
  shouldRateLimit(request: RateLimitRequest): Promise<RateLimitResponse>;
}
