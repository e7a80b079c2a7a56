// Composition of the operator: watch → plan → snapshot cache → ADS, status writes, leader election, health and metrics.
import type { Clock } from '../sidecar/clock.js';
import type { Logger } from '../sidecar/logger.js';
import type { RateLimitConfigSpec } from './crd/ratelimitconfig-types.js';
import { createHealthServer } from './health-server.js';
import type { KubeClient } from './kube/kube-client.js';
import { createLeaderElector, type LeaderElector } from './leader-election.js';
import { createOperatorMetrics, type OperatorMetrics } from './operator-metrics.js';
import type { OperatorSettings } from './operator-settings.js';
import {
  createRateLimitConfigController,
  type RateLimitConfigController,
} from './ratelimit/ratelimitconfig-controller.js';
import {
  createAdsServer,
  createSnapshotCache,
  createXdsGrpcServer,
  type AdsServer,
  type XdsGrpcServer,
  type XdsResource,
  type XdsTlsSettings,
} from './xds/index.js';

export interface OperatorDeps {
  readonly kube: KubeClient;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The sidecar's loader on one CR (the single validator); see snapshot-planner. */
  readonly loadCheck?: (resource: XdsResource, spec: RateLimitConfigSpec) => string | undefined;
}

export interface RunningOperator {
  /** Bound ADS port while serving (0 while a follower). */
  adsPort(): number;
  readonly httpPort: number;
  readonly ads: AdsServer;
  readonly controller: RateLimitConfigController;
  readonly metrics: OperatorMetrics;
  isLeader(): boolean;
  /** Graceful stop: release the lease, end ADS streams, stop watches, close HTTP. */
  stop(): Promise<void>;
}

function tlsSettings(s: OperatorSettings): XdsTlsSettings | undefined {
  if (s.tlsCertFile === '') return undefined;
  return {
    certFile: s.tlsCertFile,
    keyFile: s.tlsKeyFile,
    caFile: s.tlsClientCaFile === '' ? undefined : s.tlsClientCaFile,
    requireClientCert: s.tlsClientCaFile !== '',
    refreshIntervalMs: 60_000,
  };
}

export async function startOperator(settings: OperatorSettings, deps: OperatorDeps): Promise<RunningOperator> {
  const { logger, clock, kube } = deps;
  const metrics = createOperatorMetrics();
  const cache = createSnapshotCache({ globalNamespaces: settings.globalNamespaces });
  // The ADS server and the controller call each other; the holder breaks the construction cycle.
  const late: { controller?: RateLimitConfigController } = {};
  const ads = createAdsServer({
    cache,
    logger,
    clock,
    metrics: metrics.ads,
    controlPlaneId: settings.podName,
    onNack: (sidecar, rejection) => late.controller?.handleNack(sidecar, rejection),
    onSidecarsChanged: (change) => late.controller?.handleSidecarsChanged(change),
  });
  const ctrl = createRateLimitConfigController(
    {
      watchNamespaces: settings.watchNamespaces,
      globalNamespaces: settings.globalNamespaces,
      statusDebounceMs: settings.statusDebounceMs,
      maxResourceBytes: settings.maxResourceBytes,
    },
    {
      kube,
      cache,
      ads,
      logger,
      clock,
      metrics: metrics.controller,
      ...(deps.loadCheck ? { loadCheck: deps.loadCheck } : {}),
    },
  );
  late.controller = ctrl;

  let grpc: XdsGrpcServer | undefined;
  let boundAdsPort = 0;
  let serving: Promise<void> = Promise.resolve();

  async function labelPod(value: string | null): Promise<void> {
    if (!settings.leaderElection) return;
    const path = `/api/v1/namespaces/${encodeURIComponent(settings.podNamespace)}/pods/${encodeURIComponent(settings.podName)}`;
    try {
      await kube.request(
        'PATCH',
        path,
        { metadata: { labels: { [settings.leaderLabel]: value } } },
        'application/merge-patch+json',
      );
    } catch (err) {
      logger.warn('cannot label the operator pod (expected outside a cluster)', { error: (err as Error).message });
    }
  }

  async function startServing(): Promise<void> {
    if (grpc !== undefined) return;
    grpc = createXdsGrpcServer(ads, tlsSettings(settings));
    boundAdsPort = await grpc.listen(settings.host, settings.adsPort);
    logger.info('ADS server listening', { port: boundAdsPort, tls: settings.tlsCertFile !== '' });
    ctrl.setStatusWriter(true);
    metrics.setLeader(true);
    await labelPod('true');
  }

  async function stopServing(): Promise<void> {
    ctrl.setStatusWriter(false);
    metrics.setLeader(false);
    const server = grpc;
    grpc = undefined;
    boundAdsPort = 0;
    if (server !== undefined) await server.shutdown(settings.shutdownGraceMs);
    await labelPod(null);
  }

  ctrl.start();
  let elector: LeaderElector | undefined;
  if (settings.leaderElection) {
    elector = createLeaderElector(
      {
        leaseName: settings.leaseName,
        leaseNamespace: settings.leaseNamespace,
        identity: settings.podName,
        leaseDurationSeconds: settings.leaseDurationSeconds,
        retryPeriodMs: Math.max(200, Math.floor((settings.leaseDurationSeconds * 1000) / 4)),
      },
      kube,
      {
        onStartedLeading: () => {
          serving = serving.then(startServing).catch((err: unknown) => {
            logger.error('cannot serve ADS', { error: String(err) });
          });
        },
        onStoppedLeading: () => {
          serving = serving.then(stopServing);
        },
      },
      { logger, clock },
    );
    elector.start();
  } else {
    await startServing();
  }

  const health = createHealthServer({
    registry: metrics.registry,
    notReadyReason: () => (ctrl.synced() ? '' : 'RateLimitConfig caches not synced'),
  });
  const httpPort = await health.listen(settings.host, settings.httpPort);
  logger.info('health and metrics listening', { port: httpPort });

  return {
    adsPort: () => boundAdsPort,
    httpPort,
    ads,
    controller: ctrl,
    metrics,
    isLeader: () => (elector === undefined ? true : elector.isLeader()),
    async stop() {
      await elector?.stop();
      await serving;
      await stopServing();
      ctrl.stop();
      await health.close();
    },
  };
}
