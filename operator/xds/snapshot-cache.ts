// Per-scope snapshots of xDS resources with content-hash versions: which resources each sidecar scope receives (D3).
import { createHash } from 'node:crypto';
import type { Any } from '../../proto/gen/google/protobuf/any.js';

/** One named resource, already encoded, as the controller hands it over. */
export interface XdsResource {
  /** `<namespace>/<name>` of the CR; unique. */
  readonly name: string;
  readonly namespace: string;
  /** Hash of the resource's canonical content; equal content gives an equal hash across restarts and replicas. */
  readonly contentHash: string;
  readonly any: Any;
}

/** What one scope's sidecars receive: the full resource set and its version. */
export interface Snapshot {
  /** Content hash of the sorted (name, contentHash) pairs; stable across restarts. */
  readonly version: string;
  /** Sorted by name. */
  readonly resources: readonly XdsResource[];
  /** Encoded size of all resources in bytes (what one DiscoveryResponse carries, minus framing). */
  readonly sizeBytes: number;
}

/**
 * The scope of a sidecar: the namespace from its node metadata, or undefined for "no namespace"
 * (such a sidecar gets the global namespaces' resources only).
 */
export type Scope = string | undefined;

export interface SnapshotCacheOptions {
  /** Namespaces whose resources every sidecar receives (GLOBAL_NAMESPACES). */
  readonly globalNamespaces: readonly string[];
  /** How many past versions to remember for status attribution (older ACKs count as "unknown content"). */
  readonly historySize?: number;
}

export interface SnapshotCache {
  /** Replaces the whole resource set; listeners run when it differs from the current one (names or content). */
  setResources(resources: readonly XdsResource[]): void;
  /** The current snapshot for a scope; never undefined (an empty scope gets an empty snapshot). */
  snapshotFor(scope: Scope): Snapshot;
  /** Resource name → content hash of a version served earlier; undefined when unknown or too old. */
  contentOf(version: string): ReadonlyMap<string, string> | undefined;
  /** Order of first appearance of a version (higher is newer); 0 when unknown. */
  sequenceOf(version: string): number;
  /** Whether resources of `namespace` reach sidecars of `scope`. */
  inScope(namespace: string, scope: Scope): boolean;
  /** Registers a change listener; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

export function hashVersion(resources: readonly XdsResource[]): string {
  const hash = createHash('sha256');
  for (const r of resources) hash.update(`${r.name}\u0000${r.contentHash}\u0000`);
  return hash.digest('hex').slice(0, 16);
}

export function createSnapshotCache(options: SnapshotCacheOptions): SnapshotCache {
  const globals = new Set(options.globalNamespaces);
  const historySize = options.historySize ?? 256;
  let resources: readonly XdsResource[] = [];
  let byScope = new Map<string, Snapshot>();
  const history = new Map<string, { seq: number; content: ReadonlyMap<string, string> }>();
  let seq = 0;
  const listeners = new Set<() => void>();

  const inScope = (namespace: string, scope: Scope): boolean => globals.has(namespace) || namespace === scope;

  function remember(snapshot: Snapshot): void {
    if (history.has(snapshot.version)) return;
    seq += 1;
    history.set(snapshot.version, {
      seq,
      content: new Map(snapshot.resources.map((r) => [r.name, r.contentHash])),
    });
    while (history.size > historySize) {
      const oldest = history.keys().next().value;
      if (oldest === undefined) break;
      history.delete(oldest);
    }
  }

  return {
    setResources(next) {
      const names = new Set<string>();
      for (const r of next) {
        if (names.has(r.name)) throw new Error(`duplicate xDS resource name ${r.name}`);
        names.add(r.name);
      }
      const sorted = [...next].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const unchanged =
        sorted.length === resources.length &&
        sorted.every((r, i) => r.name === resources[i]?.name && r.contentHash === resources[i]?.contentHash);
      if (unchanged) return;
      resources = sorted;
      byScope = new Map();
      for (const listener of listeners) listener();
    },
    snapshotFor(scope) {
      const key = scope ?? '\u0000';
      let snapshot = byScope.get(key);
      if (snapshot === undefined) {
        const selected = resources.filter((r) => inScope(r.namespace, scope));
        snapshot = {
          version: hashVersion(selected),
          resources: selected,
          sizeBytes: selected.reduce((n, r) => n + r.any.value.length + r.any.typeUrl.length, 0),
        };
        byScope.set(key, snapshot);
        remember(snapshot);
      }
      return snapshot;
    },
    contentOf(version) {
      return history.get(version)?.content;
    },
    sequenceOf(version) {
      return history.get(version)?.seq ?? 0;
    },
    inScope,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
