// Watches RateLimitConfig CRs, plans and publishes snapshots, quarantines NACKed CRs, and writes status (debounced, on change).
import type { Clock } from '../../sidecar/clock.js';
import type { Logger } from '../../sidecar/logger.js';
import {
  RLC_GROUP,
  RLC_PLURAL,
  RLC_VERSION,
  resourceKey,
  type RateLimitConfigObject,
  type RateLimitConfigSpec,
} from '../crd/ratelimitconfig-types.js';
import { createInformer, type Informer } from '../kube/informer.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { AdsServer, Rejection, SidecarChange, SidecarView } from '../xds/ads-server.js';
import type { SnapshotCache, XdsResource } from '../xds/snapshot-cache.js';
import { parseRateLimitConfigObject } from './ratelimitconfig-parse.js';
import { planSnapshot, type Plan, type SpecOutcome } from './snapshot-planner.js';
import { buildStatus, sameJson, type StatusSidecar } from './status-builder.js';

/** Upper bound of the retry delay for failed status writes. */
const STATUS_RETRY_MAX_MS = 30_000;

/** Metrics the controller reports; main.ts backs them with prom-client. */
export interface ControllerMetrics {
  reconciled(durationMs: number, resources: number, snapshotBytes: number): void;
  statusWritten(ok: boolean): void;
}

export interface ControllerSettings {
  /** Namespaces to watch; empty = all. */
  readonly watchNamespaces: readonly string[];
  readonly globalNamespaces: readonly string[];
  /** Quiet period before status writes. */
  readonly statusDebounceMs: number;
  /** Encoded-size budget per CR (sidecars default to a 4 MiB message for *all* configs together). */
  readonly maxResourceBytes: number;
}

export interface ControllerDeps {
  readonly kube: KubeClient;
  readonly cache: SnapshotCache;
  readonly ads: AdsServer;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics?: ControllerMetrics;
  /** The sidecar's loader applied to one CR; returns why it fails or undefined (see snapshot-planner). */
  readonly loadCheck?: (resource: XdsResource, spec: RateLimitConfigSpec) => string | undefined;
}

export interface RateLimitConfigController {
  start(): void;
  stop(): void;
  /** True once every watched collection has been listed. */
  synced(): boolean;
  /** Status writes happen only while this is true (the leader, D4). */
  setStatusWriter(enabled: boolean): void;
  /** Called by the ADS server for every NACK. */
  handleNack(sidecar: SidecarView, rejection: Rejection): void;
  /** Called by the ADS server when sidecars connect, ACK, NACK or leave; see AdsServerOptions.onSidecarsChanged. */
  handleSidecarsChanged(change?: SidecarChange): void;
  /** The last plan (for tests and /debug). */
  lastPlan(): Plan | undefined;
}

export function createRateLimitConfigController(
  settings: ControllerSettings,
  deps: ControllerDeps,
): RateLimitConfigController {
  const { kube, cache, ads, logger, clock } = deps;
  const base = `/apis/${RLC_GROUP}/${RLC_VERSION}`;
  const paths =
    settings.watchNamespaces.length === 0
      ? [`${base}/${RLC_PLURAL}`]
      : settings.watchNamespaces.map((ns) => `${base}/namespaces/${encodeURIComponent(ns)}/${RLC_PLURAL}`);
  const quarantine = new Map<string, { contentHash: string; message: string }>();
  /** key → {contentHash, version}: the snapshot version that first carried the current content. */
  const firstVersion = new Map<string, { contentHash: string; version: string }>();
  /** Statuses we wrote, keyed by CR key, until the watch shows them (avoids rewriting from a stale cache). */
  const written = new Map<string, { generation: number; status: unknown }>();
  /** The last NACK attributed to each CR, kept after the sidecar moves on (status shows it until the CR goes away). */
  const rejections = new Map<string, { nodeId: string; version: string; message: string; time: string }>();
  let plan: Plan | undefined;
  let objects = new Map<string, RateLimitConfigObject>();
  /** Parsed form of each watched object; the informer keeps an object until an event replaces it. */
  const parsed = new WeakMap<Record<string, unknown>, RateLimitConfigObject>();
  /** Spec-only planning results per CR, reused across plans (see PlanInput.memo). */
  const specMemo = new Map<string, SpecOutcome>();
  /** Set when something other than the objects (quarantine, sidecar features) asks for a new plan. */
  let replanWanted = true;
  /** Keys that watch events changed since the last reconcile. */
  const dirtyKeys = new Set<string>();
  /** Set by a (re)list: rebuild the objects from every store. */
  let fullResync = true;
  let reconcileQueued = false;
  let featureSignature = '';
  let statusTimer: NodeJS.Timeout | undefined;
  // Delay before re-trying failed status writes; 0 while the last pass succeeded. Doubles up to STATUS_RETRY_MAX_MS.
  let statusRetryMs = 0;
  let statusWriter = false;
  let writing = false;
  let stopped = true;

  const informers: Informer[] = paths.map((path) =>
    createInformer({
      client: kube,
      path,
      logger,
      onChange: (key) => {
        if (key === undefined) fullResync = true;
        else dirtyKeys.add(key);
        queueReconcile();
      },
    }),
  );

  function queueReconcile(): void {
    if (reconcileQueued || stopped) return;
    reconcileQueued = true;
    setImmediate(() => {
      reconcileQueued = false;
      if (!stopped) reconcile();
    });
  }

  function parseOnce(raw: Record<string, unknown>): RateLimitConfigObject | undefined {
    let obj = parsed.get(raw);
    if (obj === undefined) {
      try {
        obj = parseRateLimitConfigObject(raw);
      } catch (err) {
        logger.warn('ignoring an object without metadata', { error: (err as Error).message });
        return undefined;
      }
      parsed.set(raw, obj);
    }
    return obj;
  }

  /**
   * Brings `objects` up to date with the stores and tells whether the plan can have changed. After a watch event only
   * the changed keys are looked at: status writes come back as events, and re-reading (or re-planning) all N CRs for
   * each of them made writing N statuses cost O(N²).
   */
  function refreshObjects(): boolean {
    if (fullResync) {
      fullResync = false;
      dirtyKeys.clear();
      const next = new Map<string, RateLimitConfigObject>();
      for (const informer of informers) {
        for (const raw of informer.items().values()) {
          const obj = parseOnce(raw);
          if (obj !== undefined) next.set(resourceKey(obj.namespace, obj.name), obj);
        }
      }
      const changed = next.size !== objects.size || [...next].some(([k, o]) => changesPlan(objects.get(k), o));
      objects = next;
      return changed;
    }
    let changed = false;
    for (const key of dirtyKeys) {
      let raw: Record<string, unknown> | undefined;
      for (const informer of informers) raw ??= informer.items().get(key);
      const obj = raw === undefined ? undefined : parseOnce(raw);
      if (obj === undefined) {
        changed = objects.delete(key) || changed;
        continue;
      }
      changed = changesPlan(objects.get(key), obj) || changed;
      objects.set(key, obj);
    }
    dirtyKeys.clear();
    return changed;
  }

  function reconcile(): void {
    const started = clock.nowMs();
    const planChanged = refreshObjects() || replanWanted || plan === undefined;
    if (!planChanged) {
      scheduleStatus();
      return;
    }
    replanWanted = false;
    for (const key of [...quarantine.keys()]) if (!objects.has(key)) quarantine.delete(key);
    for (const key of [...rejections.keys()]) if (!objects.has(key)) rejections.delete(key);
    for (const key of [...specMemo.keys()]) if (!objects.has(key)) specMemo.delete(key);
    plan = planSnapshot({
      objects: [...objects.values()],
      globalNamespaces: settings.globalNamespaces,
      quarantine,
      sidecars: ads.sidecars(),
      maxResourceBytes: settings.maxResourceBytes,
      memo: specMemo,
      ...(deps.loadCheck !== undefined ? { loadCheck: deps.loadCheck } : {}),
    });
    cache.setResources(plan.resources);
    for (const r of plan.resources) {
      const known = firstVersion.get(r.name);
      if (known === undefined || known.contentHash !== r.contentHash) {
        firstVersion.set(r.name, { contentHash: r.contentHash, version: cache.snapshotFor(r.namespace).version });
      }
    }
    for (const key of [...firstVersion.keys()]) if (!plan.verdicts.get(key)?.programmed) firstVersion.delete(key);
    const bytes = plan.resources.reduce((n, r) => n + r.any.value.length, 0);
    deps.metrics?.reconciled(clock.nowMs() - started, plan.resources.length, bytes);
    logger.debug('reconciled', { objects: objects.size, served: plan.resources.length });
    scheduleStatus();
  }

  /** Whether replacing `before` by `after` can change the plan: a new CR, or a new spec (generation) or identity (uid). */
  function changesPlan(before: RateLimitConfigObject | undefined, after: RateLimitConfigObject): boolean {
    return (
      before === undefined ||
      before.uid !== after.uid ||
      before.generation !== after.generation ||
      after.generation === 0 ||
      before.creationTimestamp !== after.creationTimestamp
    );
  }

  function scheduleStatus(delayMs = settings.statusDebounceMs): void {
    if (!statusWriter || stopped || statusTimer !== undefined) return;
    statusTimer = setTimeout(() => {
      statusTimer = undefined;
      void flushStatus();
    }, delayMs);
  }

  function sidecarsFor(obj: RateLimitConfigObject, key: string): StatusSidecar[] {
    return ads.sidecars().map((s) => ({
      nodeId: s.nodeId,
      inScope: cache.inScope(obj.namespace, s.scope),
      ackedVersion: s.ackedVersion,
      ackedHash: s.ackedVersion === undefined ? undefined : cache.contentOf(s.ackedVersion)?.get(key),
      rejection:
        s.rejection !== undefined && s.rejection.resourceName === key
          ? { version: s.rejection.version, message: s.rejection.message, timeMs: s.rejection.timeMs }
          : undefined,
    }));
  }

  async function flushStatus(): Promise<void> {
    if (!statusWriter || stopped || plan === undefined) return;
    if (writing) {
      scheduleStatus();
      return;
    }
    writing = true;
    let failed = false;
    try {
      const nowIso = new Date(clock.nowMs()).toISOString().replace(/\.\d{3}Z$/, 'Z');
      for (const [key, obj] of objects) {
        const verdict = plan.verdicts.get(key);
        if (verdict === undefined) continue;
        const desired = buildStatus({
          obj,
          verdict,
          sidecars: sidecarsFor(obj, key),
          snapshotVersion: firstVersion.get(key)?.version,
          ...(rejections.has(key) ? { recordedRejection: rejections.get(key) } : {}),
          nowIso,
        });
        const pendingWrite = written.get(key);
        const current =
          pendingWrite !== undefined && pendingWrite.generation === obj.generation ? pendingWrite.status : obj.status;
        if (sameJson(stripTimes(desired), stripTimes(current))) continue;
        try {
          const path = `${base}/namespaces/${encodeURIComponent(obj.namespace)}/${RLC_PLURAL}/${encodeURIComponent(obj.name)}/status`;
          // The patch carries the UID precondition so a recreated object with the same name is never touched.
          await kube.request(
            'PATCH',
            path,
            { metadata: { uid: obj.uid }, status: desired },
            'application/merge-patch+json',
          );
          written.set(key, { generation: obj.generation, status: desired });
          deps.metrics?.statusWritten(true);
        } catch (err) {
          deps.metrics?.statusWritten(false);
          failed = true;
          logger.warn('status write failed', { cr: key, error: (err as Error).message });
        }
      }
      for (const key of [...written.keys()]) if (!objects.has(key)) written.delete(key);
    } finally {
      writing = false;
    }
    // A failed write would otherwise wait for the next CR or sidecar event; retry it with backoff instead.
    if (failed) {
      statusRetryMs = Math.min(STATUS_RETRY_MAX_MS, Math.max(settings.statusDebounceMs, statusRetryMs * 2));
      scheduleStatus(statusRetryMs);
    } else {
      statusRetryMs = 0;
    }
  }

  /** Transition times alone never justify a write (they only change together with a status). */
  function stripTimes(status: unknown): unknown {
    return JSON.parse(JSON.stringify(status ?? {}, (k, v: unknown) => (k === 'lastTransitionTime' ? undefined : v)));
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      for (const i of informers) i.start();
    },
    stop() {
      stopped = true;
      for (const i of informers) i.stop();
      if (statusTimer !== undefined) clearTimeout(statusTimer);
      statusTimer = undefined;
    },
    synced: () => informers.every((i) => i.synced()),
    setStatusWriter(enabled) {
      statusWriter = enabled;
      if (enabled) {
        written.clear();
        scheduleStatus();
      }
    },
    handleNack(sidecar, rejection) {
      const name = rejection.resourceName;
      if (name === undefined) return;
      rejections.set(name, {
        nodeId: sidecar.nodeId,
        version: rejection.version,
        message: rejection.message,
        time: new Date(rejection.timeMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      });
      scheduleStatus();
      const contentHash = cache.contentOf(rejection.version)?.get(name);
      const current = plan?.verdicts.get(name)?.resource?.contentHash;
      if (contentHash === undefined || contentHash !== current) return;
      if (quarantine.get(name)?.contentHash === contentHash) return;
      logger.warn('quarantining a config a sidecar rejected', { cr: name, message: rejection.message });
      quarantine.set(name, { contentHash, message: rejection.message });
      replanWanted = true;
      queueReconcile();
    },
    handleSidecarsChanged(change) {
      // Only feature declarations (D6) change the plan; ACKs and NACKs change status alone. Recomputing the feature
      // signature over all N sidecars on every ACK made one change cost O(N²) across N sidecars.
      if (change === 'answered') {
        scheduleStatus();
        return;
      }
      const signature = ads
        .sidecars()
        .filter((s) => s.features !== undefined)
        .map((s) => `${s.scope ?? ''}|${[...(s.features ?? [])].sort().join(',')}`)
        .sort()
        .join(';');
      if (signature !== featureSignature) {
        featureSignature = signature;
        replanWanted = true;
        queueReconcile();
      } else scheduleStatus();
    },
    lastPlan: () => plan,
  };
}
