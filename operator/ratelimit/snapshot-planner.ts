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
  /**
   * Per-CR results of the spec-only steps (validate, encode, load check) from earlier plans; the planner reads and
   * refreshes it. An entry is reused while the CR's uid and generation are unchanged (the API server bumps
   * generation on every spec change), so a re-plan after status-only updates does not re-encode every CR.
   */
  readonly memo?: Map<string, SpecOutcome>;
}

/** What one CR's spec alone decides; see PlanInput.memo. */
export interface SpecOutcome {
  readonly uid: string;
  readonly generation: number;
  /** Why the spec is invalid; undefined when it validated and loaded. */
  readonly invalid: string | undefined;
  readonly resource: XdsResource | undefined;
  readonly needed: ReadonlySet<SidecarFeature>;
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

/** The spec-only steps for one CR, from the memo when its uid and generation match. */
function specOutcome(obj: RateLimitConfigObject, input: PlanInput): SpecOutcome {
  const key = resourceKey(obj.namespace, obj.name);
  const known = input.memo?.get(key);
  // generation 0 means the object carried none (not from an API server): never reuse then.
  if (known !== undefined && obj.generation > 0 && known.uid === obj.uid && known.generation === obj.generation) {
    return known;
  }
  const outcome = computeSpecOutcome(obj, input.loadCheck);
  input.memo?.set(key, outcome);
  return outcome;
}

function computeSpecOutcome(obj: RateLimitConfigObject, loadCheck: PlanInput['loadCheck']): SpecOutcome {
  const base = { uid: obj.uid, generation: obj.generation, needed: new Set<SidecarFeature>() };
  if (obj.spec === undefined) return { ...base, invalid: obj.parseError, resource: undefined };
  const problems = validateSpec(obj.spec);
  if (problems.length > 0) {
    return { ...base, invalid: problems.map((p) => `${p.path}: ${p.message}`).join('; '), resource: undefined };
  }
  const resource = buildXdsResource(obj.namespace, obj.name, obj.spec);
  const loadError = loadCheck?.(resource, obj.spec);
  if (loadError !== undefined) return { ...base, invalid: loadError, resource: undefined };
  return { ...base, invalid: undefined, resource, needed: usedFeatures(obj.spec) };
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
  /** Winners by domain, so the conflict check stays linear in the number of CRs. */
  const winnersByDomain = new Map<string, { obj: RateLimitConfigObject }[]>();
  /** Only sidecars that declare features can lack one (D6). */
  const declaring = input.sidecars.filter((s) => s.features !== undefined);
  for (const obj of [...input.objects].sort(compareAge)) {
    const key = resourceKey(obj.namespace, obj.name);
    const outcome = specOutcome(obj, input);
    if (outcome.invalid !== undefined || outcome.resource === undefined || obj.spec === undefined) {
      reject(key, 'Invalid', outcome.invalid ?? obj.parseError, undefined);
      continue;
    }
    const resource = outcome.resource;
    if (resource.any.value.length > input.maxResourceBytes) {
      reject(
        key,
        'TooLarge',
        `encoded size ${resource.any.value.length} bytes exceeds the budget of ${input.maxResourceBytes}`,
        resource,
      );
      continue;
    }
    const needed = outcome.needed;
    const lacking = declaring.filter(
      (s) =>
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
    const sameDomain = winnersByDomain.get(obj.spec.domain) ?? [];
    const earlier = sameDomain.find((w) => overlaps(w.obj.namespace, obj.namespace));
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
    sameDomain.push({ obj });
    winnersByDomain.set(obj.spec.domain, sameDomain);
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
