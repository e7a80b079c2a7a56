// The gRPC server that carries ADS and StreamRlsConfigs: keepalive, optional TLS/mTLS with cert files reloaded on change (D8).
import { experimental, Server, ServerCredentials, status as GrpcStatus, type ServerUnaryCall } from '@grpc/grpc-js';
import type { sendUnaryData } from '@grpc/grpc-js';
import { AggregatedDiscoveryServiceService } from '../../proto/gen/envoy/service/discovery/v3/discovery.js';
import type { DiscoveryRequest, DiscoveryResponse } from '../../proto/gen/envoy/service/discovery/v3/discovery.js';
import { RateLimitConfigDiscoveryServiceService } from '../../proto/gen/ratelimit/service/ratelimit/v3/rls_conf_ds.js';
import type { AdsServer } from './ads-server.js';

export interface XdsTlsSettings {
  readonly certFile: string;
  readonly keyFile: string;
  /** CA for client certificates; required when requireClientCert is true. */
  readonly caFile: string | undefined;
  readonly requireClientCert: boolean;
  /** How often the files are re-read; rotated certs apply to new connections. */
  readonly refreshIntervalMs: number;
}

export interface XdsGrpcServer {
  /** Binds host:port (port 0 picks a free one) and resolves with the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting, ends open streams, and resolves when the server is shut down (forced after graceMs). */
  shutdown(graceMs: number): Promise<void>;
}

function credentials(tls: XdsTlsSettings | undefined): ServerCredentials {
  if (tls === undefined) return ServerCredentials.createInsecure();
  const identity = new experimental.FileWatcherCertificateProvider({
    certificateFile: tls.certFile,
    privateKeyFile: tls.keyFile,
    refreshIntervalMs: tls.refreshIntervalMs,
  });
  const ca =
    tls.caFile === undefined
      ? null
      : new experimental.FileWatcherCertificateProvider({
          caCertificateFile: tls.caFile,
          refreshIntervalMs: tls.refreshIntervalMs,
        });
  // grpc-js 1.14 declares the parameters as (ca, identity) but the implementation takes (identity, ca | null).
  return experimental.createCertificateProviderServerCredentials(identity, ca, tls.requireClientCert);
}

export function createXdsGrpcServer(ads: AdsServer, tls: XdsTlsSettings | undefined): XdsGrpcServer {
  // Keepalive as in ratelimit's example server; no max_connection_age: every reset costs a sidecar ~10 s of staleness.
  const server = new Server({
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 5_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.http2.min_ping_interval_without_data_ms': 5_000,
    'grpc.max_concurrent_streams': 1_000_000,
  });
  server.addService(AggregatedDiscoveryServiceService, {
    streamAggregatedResources: ads.handleAdsStream,
  });
  server.addService(RateLimitConfigDiscoveryServiceService, {
    streamRlsConfigs: ads.handleRlsStream,
    fetchRlsConfigs: (
      call: ServerUnaryCall<DiscoveryRequest, DiscoveryResponse>,
      callback: sendUnaryData<DiscoveryResponse>,
    ) => {
      try {
        callback(null, ads.fetch(call.request));
      } catch (err) {
        callback({ code: GrpcStatus.INTERNAL, details: String(err) });
      }
    },
  });
  return {
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.bindAsync(`${host}:${port}`, credentials(tls), (err, bound) => (err ? reject(err) : resolve(bound)));
      });
    },
    shutdown(graceMs) {
      ads.closeAll();
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
