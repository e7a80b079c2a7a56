// Operator-side checks of one CR spec that mirror the sidecar's load-time checks (spec §1.6), so bad CRs never reach a sidecar.
import type { DescriptorSpec, RateLimitConfigSpec } from '../crd/ratelimitconfig-types.js';

/** Why a spec is not served; `message` reads like the sidecar's own error text. */
export interface SpecProblem {
  readonly path: string;
  readonly message: string;
}

/** Sidecar features a spec relies on (D6): `week` unit, `quota` mode, `metadata`. */
export type SidecarFeature = 'week' | 'quota' | 'metadata';

function compositeKey(d: DescriptorSpec): string {
  return d.value === '' ? d.key : `${d.key}_${d.value}`;
}

/** Every problem in the spec (empty when it would load); pure. */
export function validateSpec(spec: RateLimitConfigSpec): SpecProblem[] {
  const problems: SpecProblem[] = [];
  if (spec.domain === '') problems.push({ path: 'spec.domain', message: 'config file cannot have empty domain' });
  const names = new Map<string, string>();
  const walk = (descriptors: readonly DescriptorSpec[], path: string): void => {
    const seen = new Map<string, string>();
    descriptors.forEach((d, i) => {
      const here = `${path}[${i}]`;
      if (d.key === '') problems.push({ path: `${here}.key`, message: 'descriptor has empty key' });
      const composite = compositeKey(d);
      const clash = seen.get(composite);
      if (clash !== undefined) {
        problems.push({ path: here, message: `duplicate descriptor composite key '${composite}' (also at ${clash})` });
      } else seen.set(composite, here);
      const p = d.rateLimit;
      if (p !== undefined) {
        if (p.unlimited && p.unit !== undefined) {
          problems.push({ path: `${here}.rateLimit`, message: 'should not specify rate limit unit when unlimited' });
        }
        if (!p.unlimited && p.unit === undefined) {
          problems.push({ path: `${here}.rateLimit.unit`, message: 'invalid rate limit unit' });
        }
        if (p.name !== undefined) {
          const other = names.get(p.name);
          if (other !== undefined) {
            problems.push({
              path: `${here}.rateLimit.name`,
              message: `duplicate rate limit name '${p.name}' (also at ${other})`,
            });
          } else names.set(p.name, here);
        }
        for (const r of p.replaces) {
          if (r.name === '')
            problems.push({ path: `${here}.rateLimit.replaces`, message: 'replaces name cannot be empty' });
          else if (r.name === p.name) {
            problems.push({ path: `${here}.rateLimit.replaces`, message: `rate limit '${r.name}' replaces itself` });
          }
        }
      }
      walk(d.descriptors, `${here}.descriptors`);
    });
  };
  walk(spec.descriptors, 'spec.descriptors');
  return problems;
}

/** The features a spec needs from the sidecars that receive it. */
export function usedFeatures(spec: RateLimitConfigSpec): Set<SidecarFeature> {
  const used = new Set<SidecarFeature>();
  const walk = (descriptors: readonly DescriptorSpec[]): void => {
    for (const d of descriptors) {
      if (d.rateLimit?.unit === 'week') used.add('week');
      if (d.quotaMode) used.add('quota');
      if (d.metadata !== undefined) used.add('metadata');
      walk(d.descriptors);
    }
  };
  walk(spec.descriptors);
  return used;
}
