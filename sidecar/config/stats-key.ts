// Sanitisation of rate limit stats keys before they are emitted (spec §2.13), for the stats layer to apply.

const IPV4 = /\d{1,3}(?:\.\d{1,3}){3}/g;

/**
 * Makes a `fullKey` safe for statsd names as upstream does: `:` and `|` become `_`, and the dots inside IPv4-looking
 * substrings become `_` (e.g. `domain.ip_10.0.0.5` → `domain.ip_10_0_0_5`). Pure; the config keeps keys unsanitised.
 */
export function sanitizeStatsKey(key: string): string {
  let out = key;
  if (out.includes(':') || out.includes('|')) out = out.replace(/[:|]/g, '_');
  if (out.includes('.')) out = out.replace(IPV4, (ip) => ip.replace(/\./g, '_'));
  return out;
}
