// Converts the xDS RateLimitConfig proto into a config source document, as upstream's config_xds.go does.
import type {
  RateLimitConfig as XdsRateLimitConfig,
  RateLimitDescriptor as XdsDescriptor,
  RateLimitPolicy as XdsPolicy,
} from '../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import { UNIT_BY_NUMBER } from './units.js';

/** Go's enum String(): the name, `UNKNOWN` for 0, or the decimal number for a value the enum does not define. */
function unitName(unit: number): string {
  if (unit === 0) return 'UNKNOWN';
  return UNIT_BY_NUMBER.get(unit) ?? String(unit);
}

function policyDocument(policy: XdsPolicy): Record<string, unknown> {
  return {
    requests_per_unit: policy.requestsPerUnit,
    unit: unitName(policy.unit),
    unlimited: policy.unlimited,
    name: policy.name,
    replaces: policy.replaces.map((r) => ({ name: r.name })),
  };
}

function descriptorDocument(d: XdsDescriptor): Record<string, unknown> {
  const doc: Record<string, unknown> = {
    key: d.key,
    value: d.value,
    descriptors: d.descriptors.map(descriptorDocument),
    shadow_mode: d.shadowMode,
    detailed_metric: d.detailedMetric,
    quota_mode: d.quotaMode,
  };
  if (d.rateLimit !== undefined) doc['rate_limit'] = policyDocument(d.rateLimit);
  if (d.metadata !== undefined) doc['metadata'] = d.metadata;
  return doc;
}

/**
 * The ConfigSource for one xDS resource, named by its `name` (which prefixes error messages, as upstream).
 * An UNKNOWN unit becomes `UNKNOWN` and behaves like an empty unit (allowed only with `unlimited`); an undefined
 * enum number becomes its decimal text and is rejected as an invalid unit. value_to_metric and share_threshold do
 * not exist in the proto, so they are never set from xDS.
 */
export function xdsConfigToSource(config: XdsRateLimitConfig): { readonly name: string; readonly document: unknown } {
  return {
    name: config.name,
    document: { domain: config.domain, descriptors: config.descriptors.map(descriptorDocument) },
  };
}
