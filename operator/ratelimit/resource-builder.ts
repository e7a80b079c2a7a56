// Turns a CR spec into the wire RateLimitConfig the sidecars load, plus its canonical content hash (pure).
import { createHash } from 'node:crypto';

import {
  RateLimitConfig as RateLimitConfigProto,
  RateLimitUnit,
  type RateLimitDescriptor,
} from '../../proto/gen/ratelimit/config/ratelimit/v3/rls_conf.js';
import type { CrdUnit, DescriptorSpec, RateLimitConfigSpec } from '../crd/ratelimitconfig-types.js';
import type { XdsResource } from '../xds/snapshot-cache.js';
import { RATE_LIMIT_CONFIG_TYPE_URL } from '../xds/type-urls.js';

const UNIT_ENUM: Readonly<Record<CrdUnit, RateLimitUnit>> = {
  second: RateLimitUnit.SECOND,
  minute: RateLimitUnit.MINUTE,
  hour: RateLimitUnit.HOUR,
  day: RateLimitUnit.DAY,
  week: RateLimitUnit.WEEK,
  month: RateLimitUnit.MONTH,
  year: RateLimitUnit.YEAR,
};

function toDescriptor(d: DescriptorSpec): RateLimitDescriptor {
  const p = d.rateLimit;
  return {
    key: d.key,
    value: d.value,
    rateLimit:
      p === undefined
        ? undefined
        : {
            unit: p.unit === undefined ? RateLimitUnit.UNKNOWN : UNIT_ENUM[p.unit],
            requestsPerUnit: p.requestsPerUnit ?? 0,
            unlimited: p.unlimited,
            name: p.name ?? '',
            replaces: p.replaces.map((r) => ({ name: r.name })),
          },
    descriptors: d.descriptors.map(toDescriptor),
    shadowMode: d.shadowMode,
    detailedMetric: d.detailedMetric,
    quotaMode: d.quotaMode,
    metadata: d.metadata === undefined ? undefined : { ...d.metadata },
  };
}

/** The wire message for one CR; `name` is the CR key so that NACK messages name the CR. */
export function buildRateLimitConfigProto(name: string, spec: RateLimitConfigSpec): RateLimitConfigProto {
  return { name, domain: spec.domain, descriptors: spec.descriptors.map(toDescriptor) };
}

/** JSON with object keys sorted, so equal content hashes equally whatever the key order (Struct maps). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The encoded xDS resource for one CR. */
export function buildXdsResource(namespace: string, name: string, spec: RateLimitConfigSpec): XdsResource {
  const key = `${namespace}/${name}`;
  const message = buildRateLimitConfigProto(key, spec);
  const contentHash = createHash('sha256').update(canonicalJson(message)).digest('hex').slice(0, 16);
  const value = Buffer.from(RateLimitConfigProto.encode(message).finish());
  return { name: key, namespace, contentHash, any: { typeUrl: RATE_LIMIT_CONFIG_TYPE_URL, value } };
}
