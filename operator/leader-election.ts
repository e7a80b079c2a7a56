// Leader election on a coordination.k8s.io/v1 Lease (D4): acquire, renew, release; optimistic concurrency via resourceVersion.
import type { Clock } from '../sidecar/clock.js';
import type { Logger } from '../sidecar/logger.js';
import { KubeApiError, type KubeClient } from './kube/kube-client.js';

export interface LeaderElectionSettings {
  readonly leaseName: string;
  readonly leaseNamespace: string;
  /** This replica's identity (the pod name). */
  readonly identity: string;
  readonly leaseDurationSeconds: number;
  /** How often the leader renews and followers retry; well below leaseDurationSeconds. */
  readonly retryPeriodMs: number;
}

export interface LeaderElectionCallbacks {
  onStartedLeading(): void;
  onStoppedLeading(): void;
}

export interface LeaderElector {
  start(): void;
  /** Stops trying; a leader releases the lease (empty holder) so a follower takes over at once. */
  stop(): Promise<void>;
  isLeader(): boolean;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

function microTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

export function createLeaderElector(
  settings: LeaderElectionSettings,
  kube: KubeClient,
  callbacks: LeaderElectionCallbacks,
  deps: { readonly logger: Logger; readonly clock: Clock },
): LeaderElector {
  const { logger, clock } = deps;
  const path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(settings.leaseNamespace)}/leases`;
  let leader = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  /** When we last saw the lease change while someone else held it (by our clock, as client-go does). */
  let observed: { renewTime: string; holder: string; atMs: number } | undefined;

  function setLeader(next: boolean): void {
    if (next === leader) return;
    leader = next;
    logger.info(next ? 'became leader' : 'lost leadership', { lease: settings.leaseName, identity: settings.identity });
    if (next) callbacks.onStartedLeading();
    else callbacks.onStoppedLeading();
  }

  async function tryAcquireOrRenew(): Promise<boolean> {
    const now = clock.nowMs();
    let lease: Record<string, unknown>;
    try {
      lease = await kube.request('GET', `${path}/${encodeURIComponent(settings.leaseName)}`);
    } catch (err) {
      if (!(err instanceof KubeApiError && err.code === 'not_found')) throw err;
      await kube.request('POST', path, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: settings.leaseName, namespace: settings.leaseNamespace },
        spec: {
          holderIdentity: settings.identity,
          leaseDurationSeconds: settings.leaseDurationSeconds,
          acquireTime: microTime(now),
          renewTime: microTime(now),
          leaseTransitions: 0,
        },
      });
      return true;
    }
    const spec = (lease.spec ?? {}) as LeaseSpec;
    const holder = spec.holderIdentity ?? '';
    const renewTime = spec.renewTime ?? '';
    if (observed === undefined || observed.renewTime !== renewTime || observed.holder !== holder) {
      observed = { renewTime, holder, atMs: now };
    }
    const durationMs = (spec.leaseDurationSeconds ?? settings.leaseDurationSeconds) * 1000;
    const held = holder !== '' && holder !== settings.identity && now < observed.atMs + durationMs;
    if (held) return false;
    const mine = holder === settings.identity;
    const next: LeaseSpec = {
      ...spec,
      holderIdentity: settings.identity,
      leaseDurationSeconds: settings.leaseDurationSeconds,
      renewTime: microTime(now),
      ...(mine ? {} : { acquireTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
    };
    await kube.request('PUT', `${path}/${encodeURIComponent(settings.leaseName)}`, { ...lease, spec: next });
    return true;
  }

  let inFlight: Promise<void> = Promise.resolve();

  async function tick(): Promise<void> {
    if (stopped) return;
    try {
      const acquired = await tryAcquireOrRenew();
      // stop() may have run meanwhile; it owns the release and the final onStoppedLeading.
      if (stopped) return;
      setLeader(acquired);
    } catch (err) {
      // A conflict means someone else wrote first; anything else: we cannot prove we still hold it.
      logger.warn('lease update failed', { error: (err as Error).message });
      if (leader && observed !== undefined && clock.nowMs() > observed.atMs + settings.leaseDurationSeconds * 1000) {
        setLeader(false);
      } else if (err instanceof KubeApiError && err.code === 'conflict') setLeader(false);
    }
    if (!stopped) timer = setTimeout(() => (inFlight = tick()), settings.retryPeriodMs);
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      inFlight = tick();
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await inFlight;
      if (!leader) return;
      try {
        const lease = await kube.request('GET', `${path}/${encodeURIComponent(settings.leaseName)}`);
        const spec = (lease.spec ?? {}) as LeaseSpec;
        if (spec.holderIdentity === settings.identity) {
          await kube.request('PUT', `${path}/${encodeURIComponent(settings.leaseName)}`, {
            ...lease,
            spec: { ...spec, holderIdentity: '', leaseDurationSeconds: 1 },
          });
        }
      } catch (err) {
        logger.warn('lease release failed', { error: (err as Error).message });
      }
      setLeader(false);
    },
    isLeader: () => leader,
  };
}
