// Shared helpers for the config unit tests: fixture loading and request descriptors.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RateLimitDescriptor } from '../../../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js';
import { loadRateLimitConfig, type RateLimitConfig } from '../../../../sidecar/config/index.js';

export const FIXTURES = join(import.meta.dirname, '../../../fixtures/config');

export function fixture(name: string): { name: string; yaml: string } {
  return { name, yaml: readFileSync(join(FIXTURES, name), 'utf8') };
}

export function loadYaml(yaml: string, mergeDomainConfig = false): RateLimitConfig {
  return loadRateLimitConfig([{ name: 'inline.yaml', yaml }], { mergeDomainConfig });
}

/** A request descriptor from `key=value` pairs (a pair without `=` has an empty value). */
export function desc(...pairs: string[]): RateLimitDescriptor {
  return {
    entries: pairs.map((p) => {
      const at = p.indexOf('=');
      return at < 0 ? { key: p, value: '' } : { key: p.slice(0, at), value: p.slice(at + 1) };
    }),
    limit: undefined,
    hitsAddend: undefined,
  };
}

export function withOverride(
  descriptor: RateLimitDescriptor,
  requestsPerUnit: number,
  unit: number,
): RateLimitDescriptor {
  return { ...descriptor, limit: { requestsPerUnit, unit } };
}
