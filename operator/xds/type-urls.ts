// xDS type URLs the operator serves.

/** The rate limit sidecar's resource type (ratelimit `rls_conf.proto`). */
export const RATE_LIMIT_CONFIG_TYPE_URL = 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';
