// Proto3 JSON encoding of a RateLimitResponse (protojson rules: camelCase, zero values omitted, enums by name).
import type { Duration } from '../../proto/gen/google/protobuf/duration.js';
import type { HeaderValue } from '../../proto/gen/envoy/config/core/v3/base.js';
import type {
  RateLimitResponse,
  RateLimitResponse_DescriptorStatus,
  RateLimitResponse_Quota,
  RateLimitResponse_RateLimit,
} from '../../proto/gen/envoy/service/ratelimit/v3/rls.js';

const CODE_NAMES: readonly string[] = ['UNKNOWN', 'OK', 'OVER_LIMIT'];
const UNIT_NAMES: readonly string[] = ['UNKNOWN', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR', 'WEEK'];

// Known enum values print as names; an unknown number prints as the number, as protojson does.
function enumValue(names: readonly string[], n: number): string | number {
  return names[n] ?? n;
}

/** `google.protobuf.Duration` in JSON: seconds with 0, 3, 6 or 9 fractional digits and an `s` suffix. */
export function durationToJson(d: Duration): string {
  const seconds = d.seconds;
  const nanos = d.nanos;
  const negative = seconds < 0 || nanos < 0;
  const absSeconds = Math.abs(seconds);
  const absNanos = Math.abs(nanos);
  let text = `${negative ? '-' : ''}${absSeconds}`;
  if (absNanos !== 0) {
    let frac = String(absNanos).padStart(9, '0');
    if (frac.endsWith('000000')) frac = frac.slice(0, 3);
    else if (frac.endsWith('000')) frac = frac.slice(0, 6);
    text += `.${frac}`;
  }
  return text + 's';
}

function rateLimitToJson(l: RateLimitResponse_RateLimit): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (l.name !== '') out.name = l.name;
  if (l.requestsPerUnit !== 0) out.requestsPerUnit = l.requestsPerUnit;
  if (l.unit !== 0) out.unit = enumValue(UNIT_NAMES, l.unit);
  return out;
}

function quotaToJson(q: RateLimitResponse_Quota): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // uint64 is a string in proto3 JSON.
  if (q.requests !== 0) out.requests = String(q.requests);
  if (q.validUntil !== undefined) out.validUntil = q.validUntil.toISOString().replace('.000Z', 'Z');
  if (q.id !== '') out.id = q.id;
  return out;
}

function statusToJson(s: RateLimitResponse_DescriptorStatus): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.code !== 0) out.code = enumValue(CODE_NAMES, s.code);
  if (s.currentLimit !== undefined) out.currentLimit = rateLimitToJson(s.currentLimit);
  if (s.limitRemaining !== 0) out.limitRemaining = s.limitRemaining;
  if (s.durationUntilReset !== undefined) out.durationUntilReset = durationToJson(s.durationUntilReset);
  if (s.quota !== undefined) out.quota = quotaToJson(s.quota);
  return out;
}

function headerToJson(h: HeaderValue): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (h.key !== '') out.key = h.key;
  if (h.value !== '') out.value = h.value;
  if (h.rawValue !== undefined && h.rawValue.length > 0) out.rawValue = Buffer.from(h.rawValue).toString('base64');
  return out;
}

/**
 * The proto3 JSON text of a response, fields in declaration order, e.g.
 * `{"overallCode":"OVER_LIMIT","statuses":[{"code":"OVER_LIMIT","currentLimit":{"requestsPerUnit":1,"unit":"MINUTE"},"durationUntilReset":"42s"}]}`.
 * @throws TypeError when dynamic metadata holds a value JSON cannot carry (e.g. a BigInt or a cycle)
 */
export function encodeJsonResponse(r: RateLimitResponse): string {
  const out: Record<string, unknown> = {};
  if (r.overallCode !== 0) out.overallCode = enumValue(CODE_NAMES, r.overallCode);
  if (r.statuses.length > 0) out.statuses = r.statuses.map(statusToJson);
  if (r.responseHeadersToAdd.length > 0) out.responseHeadersToAdd = r.responseHeadersToAdd.map(headerToJson);
  if (r.requestHeadersToAdd.length > 0) out.requestHeadersToAdd = r.requestHeadersToAdd.map(headerToJson);
  if (r.rawBody !== undefined && r.rawBody.length > 0) out.rawBody = Buffer.from(r.rawBody).toString('base64');
  if (r.dynamicMetadata !== undefined) out.dynamicMetadata = r.dynamicMetadata;
  if (r.quota !== undefined) out.quota = quotaToJson(r.quota);
  return JSON.stringify(out);
}
