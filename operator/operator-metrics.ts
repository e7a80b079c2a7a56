// Prometheus metrics of the operator on a registry it owns (no global default registry).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AdsMetrics } from './xds/ads-server.js';
import type { ControllerMetrics } from './ratelimit/ratelimitconfig-controller.js';

export interface OperatorMetrics {
  readonly registry: Registry;
  readonly ads: AdsMetrics;
  readonly controller: ControllerMetrics;
  setLeader(isLeader: boolean): void;
}

export function createOperatorMetrics(): OperatorMetrics {
  const registry = new Registry();
  const connected = new Gauge({
    name: 'chorus_operator_xds_connected_sidecars',
    help: 'Open ADS streams (sidecars) on this replica.',
    registers: [registry],
  });
  const acks = new Counter({ name: 'chorus_operator_xds_acks_total', help: 'ACKs received.', registers: [registry] });
  const nacks = new Counter({
    name: 'chorus_operator_xds_nacks_total',
    help: 'NACKs received.',
    registers: [registry],
  });
  const responses = new Counter({
    name: 'chorus_operator_xds_responses_total',
    help: 'DiscoveryResponses sent.',
    registers: [registry],
  });
  const responseBytes = new Gauge({
    name: 'chorus_operator_xds_last_response_bytes',
    help: 'Resource bytes of the last DiscoveryResponse (sidecars accept 4 MiB by default).',
    registers: [registry],
  });
  const snapshotBytes = new Gauge({
    name: 'chorus_operator_snapshot_bytes',
    help: 'Encoded bytes of all served RateLimitConfigs.',
    registers: [registry],
  });
  const snapshotResources = new Gauge({
    name: 'chorus_operator_snapshot_resources',
    help: 'RateLimitConfigs served.',
    registers: [registry],
  });
  const reconcileSeconds = new Histogram({
    name: 'chorus_operator_reconcile_duration_seconds',
    help: 'Time to plan and publish a snapshot.',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  const statusWrites = new Counter({
    name: 'chorus_operator_status_writes_total',
    help: 'Status writes by result.',
    labelNames: ['result'],
    registers: [registry],
  });
  const leader = new Gauge({
    name: 'chorus_operator_leader',
    help: '1 while this replica holds the lease.',
    registers: [registry],
  });
  return {
    registry,
    ads: {
      streamOpened: () => connected.inc(),
      streamClosed: () => connected.dec(),
      ack: () => acks.inc(),
      nack: () => nacks.inc(),
      responseSent: (bytes) => {
        responses.inc();
        responseBytes.set(bytes);
      },
    },
    controller: {
      reconciled: (durationMs, resources, bytes) => {
        reconcileSeconds.observe(durationMs / 1000);
        snapshotResources.set(resources);
        snapshotBytes.set(bytes);
      },
      statusWritten: (ok) => statusWrites.inc({ result: ok ? 'ok' : 'error' }),
    },
    setLeader: (isLeader) => leader.set(isLeader ? 1 : 0),
  };
}
