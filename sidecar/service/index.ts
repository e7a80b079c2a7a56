// The service folder's public surface: the ShouldRateLimit facade the gRPC and HTTP servers call.
export {
  createRateLimitService,
  UNLIMITED_REMAINING,
  type RateLimitService,
  type RateLimitServiceDeps,
  type RateLimitServiceSettings,
} from './rate-limit-service.js';
