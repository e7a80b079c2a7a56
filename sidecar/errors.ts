// Typed faults of the rate limit service. Expected outcomes (over limit, no match) are values, not errors.

/**
 * A request the service refuses (empty domain, no descriptors, no config loaded, a bad limit override).
 * Upstream answers these with gRPC UNKNOWN plus the message, counts `service_error`, and /json gives 400.
 */
export class ServiceError extends Error {
  constructor(
    readonly code: 'empty_domain' | 'empty_descriptors' | 'no_config' | 'invalid_override' | 'invalid_request',
    message: string,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

/**
 * The counter store failed (connection refused, timeout, cluster down). Upstream answers gRPC UNKNOWN with the
 * backend's message, counts `redis_error`, and /json gives 400.
 */
export class BackendError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BackendError';
  }
}
