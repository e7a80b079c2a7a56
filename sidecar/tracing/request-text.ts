// The `request string` span attribute: a RateLimitRequest in protobuf text form, as upstream's request.String().
import type { RateLimitRequest } from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';

/**
 * Compact text format, e.g. `domain:"d" descriptors:{entries:{key:"k" value:"v"}} hits_addend:1`. Go's prototext
 * output deliberately varies its spacing, so consumers cannot byte-compare it anyway; this form is stable.
 * Only computed for sampled spans.
 */
export function requestText(request: RateLimitRequest): string {
  const parts: string[] = [];
  if (request.domain !== '') parts.push(`domain:${quote(request.domain)}`);
  for (const d of request.descriptors) {
    const inner: string[] = d.entries.map((e) => `entries:{key:${quote(e.key)} value:${quote(e.value)}}`);
    if (d.limit !== undefined) {
      inner.push(
        `limit:{requests_per_unit:${d.limit.requestsPerUnit} unit:${UNIT_NAMES[d.limit.unit] ?? d.limit.unit}}`,
      );
    }
    if (d.hitsAddend !== undefined) inner.push(`hits_addend:{value:${d.hitsAddend}}`);
    parts.push(`descriptors:{${inner.join(' ')}}`);
  }
  if (request.hitsAddend !== 0) parts.push(`hits_addend:${request.hitsAddend}`);
  return parts.join(' ');
}

// envoy.type.v3.RateLimitUnit by number; Go prints an unknown value as its number (ts-proto's helper would throw).
const UNIT_NAMES: readonly string[] = ['UNKNOWN', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR', 'WEEK'];

function quote(text: string): string {
  return JSON.stringify(text);
}
