// The gRPC listener: envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit and grpc.health.v1.Health.
import * as grpc from '@grpc/grpc-js';
import {
  HealthCheckResponse_ServingStatus,
  HealthService,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from '../../proto/gen/grpc/health/v1/health.js';
import {
  RateLimitRequest,
  RateLimitServiceService,
  type RateLimitResponse,
} from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import type { PeerCertificate } from 'node:tls';
import type { Health } from '../health.js';
import type { Logger } from '../logger.js';
import type { StatsStore } from '../stats/stats-store.js';
import type { DecisionService } from './decision-service.js';
import { clientCertificateAllowed } from './grpc-tls.js';
import { checkRateLimitRequestUtf8 } from './strict-utf8.js';

/** The health service name Envoy and Kubernetes probes ask for; `""` is the server as a whole. */
export const HEALTH_SERVICE_NAME = 'ratelimit';

export interface GrpcServerOptions {
  readonly service: DecisionService;
  readonly health: Health;
  readonly stats: StatsStore;
  readonly logger: Logger;
  /** GRPC_MAX_CONNECTION_AGE / _GRACE; a GOAWAY makes clients reconnect (and rebalance). */
  readonly maxConnectionAgeMs: number;
  readonly maxConnectionAgeGraceMs: number;
  /** TLS credentials; plaintext when undefined. */
  readonly credentials?: grpc.ServerCredentials;
  /** GRPC_CLIENT_TLS_SAN: calls whose client certificate does not name this DNS SAN get UNAUTHENTICATED. */
  readonly requiredClientSan?: string;
}

export interface RunningGrpcServer {
  /** The bound TCP port, or 0 for a unix socket. */
  readonly port: number;
  /** Stops accepting, lets in-flight calls finish (forcing them after graceMs), then resolves. */
  stop(graceMs: number): Promise<void>;
}

// Upstream's health server answers these for unknown service names.
const SERVING: HealthCheckResponse = { status: HealthCheckResponse_ServingStatus.SERVING };
const NOT_SERVING: HealthCheckResponse = { status: HealthCheckResponse_ServingStatus.NOT_SERVING };
const SERVICE_UNKNOWN: HealthCheckResponse = { status: HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN };

/** True when a decoded request holds U+FFFD, which is what an invalid UTF-8 sequence decodes to. */
function mayHoldInvalidUtf8(request: RateLimitRequest): boolean {
  if (request.domain.includes('\uFFFD')) return true;
  for (const d of request.descriptors) {
    for (const e of d.entries) if (e.key.includes('\uFFFD') || e.value.includes('\uFFFD')) return true;
  }
  return false;
}

// protobuf-go refuses proto3 strings that are not UTF-8 (status INTERNAL); ts-proto would substitute U+FFFD.
// The byte-level check only runs when a U+FFFD shows up, so valid requests pay one scan of their strings.
const STRICT_RATE_LIMIT_SERVICE = {
  shouldRateLimit: {
    ...RateLimitServiceService.shouldRateLimit,
    requestDeserialize: (value: Buffer): RateLimitRequest => {
      const request = RateLimitRequest.decode(value);
      if (mayHoldInvalidUtf8(request)) checkRateLimitRequestUtf8(value);
      return request;
    },
  },
} as const;

function statusOf(health: Health, service: string): HealthCheckResponse | undefined {
  if (service === '') return SERVING;
  if (service === HEALTH_SERVICE_NAME) return health.isHealthy() ? SERVING : NOT_SERVING;
  return undefined;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Binds a gRPC server on `address` (`host:port`, or `unix:/path`).
 * @throws Error when the address cannot be bound
 */
export async function startGrpcServer(address: string, options: GrpcServerOptions): Promise<RunningGrpcServer> {
  const { service, health, stats, logger } = options;
  const serverOptions: grpc.ServerOptions = {
    'grpc.max_connection_age_ms': Math.max(1, Math.round(options.maxConnectionAgeMs)),
    'grpc.max_connection_age_grace_ms': Math.max(1, Math.round(options.maxConnectionAgeGraceMs)),
  };
  const server = new grpc.Server(serverOptions);
  const san = options.requiredClientSan ?? '';
  // Go checks the SAN during the handshake; grpc-js has no hook there, so it is checked per call (and only if set).
  const refused = (call: { getAuthContext(): { sslPeerCertificate?: PeerCertificate } }): boolean =>
    san !== '' && !clientCertificateAllowed(call.getAuthContext().sslPeerCertificate, san);
  const UNAUTHENTICATED = {
    code: grpc.status.UNAUTHENTICATED,
    details: `client certificate does not match SAN ${san}`,
  };
  // Resolved once: the hot path only increments fields.
  const totalRequests = stats.counter('ratelimit_server.ShouldRateLimit.total_requests');
  const responseTime = stats.timer('ratelimit_server.ShouldRateLimit.response_time');

  server.addService(STRICT_RATE_LIMIT_SERVICE, {
    shouldRateLimit(
      call: grpc.ServerUnaryCall<RateLimitRequest, RateLimitResponse>,
      callback: grpc.sendUnaryData<RateLimitResponse>,
    ): void {
      if (refused(call)) {
        callback(UNAUTHENTICATED, null);
        return;
      }
      const started = performance.now();
      totalRequests.inc();
      let pending: Promise<RateLimitResponse>;
      try {
        pending = service.shouldRateLimit(call.request, call.metadata);
      } catch (err) {
        pending = Promise.reject(err);
      }
      pending.then(
        (response) => {
          responseTime.recordMs(performance.now() - started);
          callback(null, response);
        },
        (err: unknown) => {
          responseTime.recordMs(performance.now() - started);
          // Upstream returns a plain Go error, which grpc-go sends as UNKNOWN with the error text.
          callback({ code: grpc.status.UNKNOWN, details: errorMessage(err) }, null);
        },
      );
    },
  });

  const watchers = new Set<grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>>();
  server.addService(HealthService, {
    check(
      call: grpc.ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
      callback: grpc.sendUnaryData<HealthCheckResponse>,
    ): void {
      if (refused(call)) {
        callback(UNAUTHENTICATED, null);
        return;
      }
      const status = statusOf(health, call.request.service);
      if (status === undefined) callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' }, null);
      else callback(null, status);
    },
    watch(call: grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>): void {
      if (refused(call)) {
        call.emit('error', UNAUTHENTICATED);
        return;
      }
      const name = call.request.service;
      let last = statusOf(health, name) ?? SERVICE_UNKNOWN;
      call.write(last);
      // Every watch stays open (as grpc-go's); only `ratelimit` can change, but all must be ended on stop.
      watchers.add(call);
      const unsubscribe =
        name === HEALTH_SERVICE_NAME
          ? health.onChange(() => {
              const next = statusOf(health, name) ?? SERVICE_UNKNOWN;
              if (next === last) return;
              last = next;
              call.write(next);
            })
          : () => undefined;
      const done = (): void => {
        unsubscribe();
        watchers.delete(call);
      };
      call.on('cancelled', done);
      call.on('close', done);
      call.on('error', done);
    },
  });

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, options.credentials ?? grpc.ServerCredentials.createInsecure(), (err, boundPort) => {
      if (err !== null) reject(new Error(`failed to listen for gRPC on ${address}: ${err.message}`, { cause: err }));
      else resolve(boundPort);
    });
  });
  logger.debug('gRPC server bound', { address, port });

  return {
    port,
    stop(graceMs: number): Promise<void> {
      return new Promise<void>((resolve) => {
        // Watch streams never end on their own; close them so that a graceful shutdown can complete.
        for (const call of watchers) call.end();
        watchers.clear();
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
