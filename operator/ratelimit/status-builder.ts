// Builds the desired status of one CR from its verdict and the connected sidecars' ACK/NACK state (pure).
import type {
  Condition,
  NodeSyncState,
  RateLimitConfigObject,
  RateLimitConfigStatus,
  Rejection,
} from '../crd/ratelimitconfig-types.js';
import type { Verdict } from './snapshot-planner.js';

/** A connected sidecar as status needs it. */
export interface StatusSidecar {
  readonly nodeId: string;
  /** Whether this CR's namespace reaches the sidecar's scope. */
  readonly inScope: boolean;
  /** Content hash of this CR in the version the sidecar last ACKed; undefined when absent or unknown. */
  readonly ackedHash: string | undefined;
  readonly ackedVersion: string | undefined;
  /** The sidecar's open NACK if it names this CR. */
  readonly rejection: { readonly version: string; readonly message: string; readonly timeMs: number } | undefined;
}

export interface StatusInput {
  readonly obj: RateLimitConfigObject;
  readonly verdict: Verdict;
  readonly sidecars: readonly StatusSidecar[];
  /** Snapshot version that first carried the current content; undefined when not served. */
  readonly snapshotVersion: string | undefined;
  readonly nowIso: string;
  /** The last NACK the controller attributed to this CR (it may be gone from the sidecars by now); undefined for none. */
  readonly recordedRejection?: Rejection;
  /** At most this many entries in status.xds.nodes. */
  readonly maxNodes?: number;
}

const STATE_RANK: Readonly<Record<NodeSyncState['state'], number>> = { Rejected: 0, Pending: 1, Synced: 2 };

function condition(
  previous: readonly Condition[] | undefined,
  type: Condition['type'],
  status: Condition['status'],
  reason: string,
  message: string,
  generation: number,
  nowIso: string,
): Condition {
  const before = previous?.find((c) => c.type === type);
  const lastTransitionTime = before !== undefined && before.status === status ? before.lastTransitionTime : nowIso;
  return { type, status, observedGeneration: generation, lastTransitionTime, reason, message };
}

export function buildStatus(input: StatusInput): RateLimitConfigStatus {
  const { obj, verdict, nowIso } = input;
  const previous = obj.status.conditions;
  const gen = obj.generation;
  const hash = verdict.resource?.contentHash;
  const perNode = new Map<string, NodeSyncState>();
  let synced = 0;
  let pending = 0;
  let rejected = 0;
  let lastRejection: Rejection | undefined = input.recordedRejection ?? obj.status.xds?.lastRejection;
  let newestRejectionMs = lastRejection === undefined ? -1 : Date.parse(lastRejection.time);
  for (const s of input.sidecars.filter((x) => x.inScope)) {
    let state: NodeSyncState['state'];
    if (s.rejection !== undefined) {
      state = 'Rejected';
      rejected += 1;
      if (s.rejection.timeMs >= newestRejectionMs) {
        newestRejectionMs = s.rejection.timeMs;
        lastRejection = {
          nodeId: s.nodeId,
          version: s.rejection.version,
          message: s.rejection.message,
          time: new Date(s.rejection.timeMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        };
      }
    } else if (verdict.programmed && hash !== undefined && s.ackedHash === hash) {
      state = 'Synced';
      synced += 1;
    } else {
      state = 'Pending';
      pending += 1;
    }
    const entry: NodeSyncState = { nodeId: s.nodeId, ackedVersion: s.ackedVersion ?? '', state };
    const existing = perNode.get(s.nodeId);
    if (existing === undefined || STATE_RANK[state] < STATE_RANK[existing.state]) perNode.set(s.nodeId, entry);
  }
  const total = synced + pending + rejected;
  const nodes = [...perNode.values()]
    .sort((a, b) => STATE_RANK[a.state] - STATE_RANK[b.state] || (a.nodeId < b.nodeId ? -1 : 1))
    .slice(0, input.maxNodes ?? 32);

  let syncedCondition: [Condition['status'], string, string];
  if (verdict.programmedReason === 'Quarantined') {
    syncedCondition = ['False', 'Rejected', verdict.programmedMessage];
  } else if (!verdict.programmed) {
    syncedCondition = ['False', 'Pending', 'not in any snapshot'];
  } else if (rejected > 0) {
    syncedCondition = [
      'False',
      'Rejected',
      `${rejected} of ${total} sidecar(s) rejected it: ${lastRejection?.message ?? ''}`,
    ];
  } else if (total === 0) {
    syncedCondition = ['Unknown', 'NoSidecars', 'no connected sidecar receives this config'];
  } else if (synced === total) {
    syncedCondition = ['True', 'Synced', `all ${total} sidecar(s) applied it`];
  } else {
    syncedCondition = ['False', 'Pending', `${synced} of ${total} sidecar(s) applied it`];
  }

  return {
    observedGeneration: gen,
    conditions: [
      condition(
        previous,
        'Accepted',
        verdict.accepted ? 'True' : 'False',
        verdict.acceptedReason,
        verdict.acceptedMessage,
        gen,
        nowIso,
      ),
      condition(
        previous,
        'Programmed',
        verdict.programmed ? 'True' : 'False',
        verdict.programmedReason,
        verdict.programmedMessage,
        gen,
        nowIso,
      ),
      condition(previous, 'Synced', ...syncedCondition, gen, nowIso),
    ],
    xds: {
      resourceName: verdict.key,
      ...(hash !== undefined ? { contentHash: hash } : {}),
      ...(input.snapshotVersion !== undefined ? { snapshotVersion: input.snapshotVersion } : {}),
      sidecars: { total, synced, pending, rejected },
      ...(lastRejection !== undefined ? { lastRejection } : {}),
      nodes,
    },
  };
}

/** Structural equality of two JSON-like values (status comparison before a write). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (
    a !== null &&
    b !== null &&
    typeof a === 'object' &&
    typeof b === 'object' &&
    !Array.isArray(a) &&
    !Array.isArray(b)
  ) {
    const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
    const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
    return (
      ka.length === kb.length &&
      ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  }
  return false;
}
