// TypeScript shape of the RateLimitConfig custom resource (chorus.dev/v1alpha1): spec as users write it, status as the operator writes it.

export const RLC_GROUP = 'chorus.dev';
export const RLC_VERSION = 'v1alpha1';
export const RLC_KIND = 'RateLimitConfig';
export const RLC_PLURAL = 'ratelimitconfigs';
export const RLC_API_VERSION = `${RLC_GROUP}/${RLC_VERSION}`;

/** Lowercase unit names, as in the rate limit YAML files; mapped to the proto enum by name. */
export const CRD_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'year'] as const;
export type CrdUnit = (typeof CRD_UNITS)[number];

/** Depth of the unrolled descriptor tree (D5): level 5 has no `descriptors` field. */
export const MAX_DESCRIPTOR_DEPTH = 5;
/** maxItems of `spec.descriptors` (D5). */
export const MAX_TOP_DESCRIPTORS = 64;
/** maxItems of every nested `descriptors` list (D5). */
export const MAX_NESTED_DESCRIPTORS = 8;

export interface RateLimitPolicySpec {
  /** Absent exactly when `unlimited` is true (CEL-enforced). */
  readonly unit?: CrdUnit;
  /** 0..2^32-1 (the proto field is uint32); absent when unlimited. */
  readonly requestsPerUnit?: number;
  readonly unlimited: boolean;
  /** Name other policies can target with `replaces`; undefined when unnamed. */
  readonly name?: string;
  readonly replaces: readonly { readonly name: string }[];
}

export interface DescriptorSpec {
  /** Non-empty. */
  readonly key: string;
  /** '' when unset (schema default); may contain `*` wildcards. */
  readonly value: string;
  readonly rateLimit?: RateLimitPolicySpec;
  readonly shadowMode: boolean;
  readonly detailedMetric: boolean;
  readonly quotaMode: boolean;
  /** JSON object returned by the sidecar as dynamic metadata; undefined when absent. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly descriptors: readonly DescriptorSpec[];
}

export interface RateLimitConfigSpec {
  readonly domain: string;
  readonly descriptors: readonly DescriptorSpec[];
}

/** metav1.Condition. */
export interface Condition {
  readonly type: 'Accepted' | 'Programmed' | 'Synced';
  readonly status: 'True' | 'False' | 'Unknown';
  readonly observedGeneration: number;
  /** RFC 3339. */
  readonly lastTransitionTime: string;
  readonly reason: string;
  readonly message: string;
}

export interface SidecarCounts {
  readonly total: number;
  readonly synced: number;
  readonly pending: number;
  readonly rejected: number;
}

export interface Rejection {
  readonly nodeId: string;
  readonly version: string;
  readonly message: string;
  /** RFC 3339. */
  readonly time: string;
}

export interface NodeSyncState {
  readonly nodeId: string;
  readonly ackedVersion: string;
  readonly state: 'Synced' | 'Pending' | 'Rejected';
}

export interface RateLimitConfigStatus {
  readonly observedGeneration?: number;
  readonly conditions?: readonly Condition[];
  readonly xds?: {
    readonly resourceName: string;
    readonly contentHash?: string;
    readonly snapshotVersion?: string;
    readonly sidecars: SidecarCounts;
    readonly lastRejection?: Rejection;
    readonly nodes?: readonly NodeSyncState[];
  };
}

/** Identity and spec of one CR as the controller keeps it (parsed once from the watch). */
export interface RateLimitConfigObject {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  readonly resourceVersion: string;
  /** RFC 3339; orders CRs for domain conflicts (D2). */
  readonly creationTimestamp: string;
  /** undefined when the spec failed to parse (reported as Accepted=False, reason Invalid). */
  readonly spec: RateLimitConfigSpec | undefined;
  /** Why the spec failed to parse; '' when it parsed. */
  readonly parseError: string;
  readonly status: RateLimitConfigStatus;
}

/** `<namespace>/<name>`: the xDS resource name and the prefix of sidecar NACK messages. */
export function resourceKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}
