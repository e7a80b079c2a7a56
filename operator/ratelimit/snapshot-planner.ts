// Decides, purely from the watched CRs, which are served (resources) and why the others are not (verdicts).
import { resourceKey, type RateLimitConfigObject, type RateLimitConfigSpec } from '../crd/ratelimitconfig-types.js';
import type { XdsResource } from '../xds/snapshot-cache.js';
import { buildXdsResource } from './resource-builder.js';
import { usedFeatures, validateSpec, type SidecarFeature } from './validate-spec.js';

export type AcceptedReason = 'Accepted' | 'Invalid' | 'DomainConflict' | 'UnsupportedBySidecars' | 'TooLarge';
export type ProgrammedReason = 'Programmed' | 'NotProgrammed' | 'Quarantined';

export interface Verdict {
  readonly key: string;
  readonly accepted: boolean;
  readonly acceptedReason: AcceptedReason;
  readonly acceptedMessage: string;
  readonly programmed: boolean;
  readonly programmedReason: ProgrammedReason;
  readonly programmedMessage: string;
  /** The encoded resource when the spec parsed and validated (also when quarantined or conflicting). */
  readonly resource: XdsResource | undefined;
}

/** A sidecar as the planner needs it: its scope and advertised features (undefined = assume current). */
export interface PlannerSidecar {
  readonly nodeId: string;
  readonly scope: string | undefined;
  readonly features: ReadonlySet<string> | undefined;
}

export interface PlanInput {
  readonly objects: readonly RateLimitConfigObject[];
  readonly globalNamespaces: readonly string[];
  /** key → content hash that a sidecar NACKed; a CR with that exact content stays out. */
  readonly quarantine: ReadonlyMap<string, { readonly contentHash: string; readonly message: string }>;
  readonly sidecars: readonly PlannerSidecar[];
  /** Encoded-size budget of one CR in bytes. */
  readonly maxResourceBytes: number;
  /**
   * The sidecar's own loader run on this one CR (the single validator); returns the reason it fails, or undefined.
   * Optional so the planner can run without it in unit tests.
   */
  readonly loadCheck?: (resource: XdsResource, spec: RateLimitConfigSpec) => string | undefined;
}

export interface Plan {
  /** What the snapshot cache serves, every scope together. */
  readonly resources: readonly XdsResource[];
  readonly verdicts: ReadonlyMap<string, Verdict>;
}

function compareAge(a: RateLimitConfigObject, b: RateLimitConfigObject): number {
  if (a.creationTimestamp !== b.creationTimestamp) return a.creationTimestamp < b.creationTimestamp ? -1 : 1;
  const ka = resourceKey(a.namespace, a.name);
  const kb = resourceKey(b.namespace, b.name);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

export function planSnapshot(input: PlanInput): Plan {
  const globals = new Set(input.globalNamespaces);
  const verdicts = new Map<string, Verdict>();
  const reject = (key: string, reason: AcceptedReason, message: string, resource: XdsResource | undefined): void => {
    verdicts.set(key, {
      key,
      accepted: false,
      acceptedReason: reason,
      acceptedMessage: message,
      programmed: false,
      programmedReason: 'NotProgrammed',
      programmedMessage: `not served: ${reason}`,
      resource,
    });
  };
  const overlaps = (a: string, b: string): boolean => a === b || globals.has(a) || globals.has(b);

  const winners: { obj: RateLimitConfigObject; domain: string; resource: XdsResource }[] = [];
  for (const obj of [...input.objects].sort(compareAge)) {
    const key = resourceKey(obj.namespace, obj.name);
    if (obj.spec === undefined) {
      reject(key, 'Invalid', obj.parseError, undefined);
      continue;
    }
    const problems = validateSpec(obj.spec);
    if (problems.length > 0) {
      reject(key, 'Invalid', problems.map((p) => `${p.path}: ${p.message}`).join('; '), undefined);
      continue;
    }
    const resource = buildXdsResource(obj.namespace, obj.name, obj.spec);
    const loadError = input.loadCheck?.(resource, obj.spec);
    if (loadError !== undefined) {
      reject(key, 'Invalid', loadError, undefined);
      continue;
    }
    if (resource.any.value.length > input.maxResourceBytes) {
      reject(
        key,
        'TooLarge',
        `encoded size ${resource.any.value.length} bytes exceeds the budget of ${input.maxResourceBytes}`,
        resource,
      );
      continue;
    }
    const needed = usedFeatures(obj.spec);
    const lacking = input.sidecars.filter(
      (s) =>
        s.features !== undefined &&
        (globals.has(obj.namespace) || s.scope === obj.namespace) &&
        [...needed].some((f: SidecarFeature) => !s.features?.has(f)),
    );
    if (lacking.length > 0) {
      const missing = [...needed].filter((f) => lacking.some((s) => !s.features?.has(f)));
      reject(
        key,
        'UnsupportedBySidecars',
        `uses ${missing.join(', ')}, which ${lacking.length} sidecar(s) in scope do not support (e.g. ${lacking[0]?.nodeId})`,
        resource,
      );
      continue;
    }
    const earlier = winners.find((w) => w.domain === obj.spec?.domain && overlaps(w.obj.namespace, obj.namespace));
    if (earlier !== undefined) {
      reject(
        key,
        'DomainConflict',
        `domain '${obj.spec.domain}' is already served by the older ${resourceKey(earlier.obj.namespace, earlier.obj.name)}`,
        resource,
      );
      continue;
    }
    winners.push({ obj, domain: obj.spec.domain, resource });
    const quarantined = input.quarantine.get(key);
    const isQuarantined = quarantined !== undefined && quarantined.contentHash === resource.contentHash;
    verdicts.set(key, {
      key,
      accepted: true,
      acceptedReason: 'Accepted',
      acceptedMessage: 'spec is valid and its domain is free',
      programmed: !isQuarantined,
      programmedReason: isQuarantined ? 'Quarantined' : 'Programmed',
      programmedMessage: isQuarantined
        ? `left out of the snapshot after a sidecar rejected it: ${quarantined.message}`
        : 'included in the snapshot',
      resource,
    });
  }
  const resources = winners.map((w) => w.resource).filter((r) => verdicts.get(r.name)?.programmed === true);
  return { resources, verdicts };
}
