// Stats-name sanitisation for rate limit stats keys (upstream utils.SanitizeStatName, spec §2.13).

const IPV4_LIKE = /\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/g;
const STATSD_RESERVED = /[:|]/g;

/**
 * Makes a stats key safe for statsd: `:` and `|` become `_`, and the dots inside IPv4-looking substrings become
 * `_` so that an address does not split the stat into extra path segments (e.g. `ip_10.0.0.5` → `ip_10_0_0_5`).
 */
export function sanitizeStatsKey(key: string): string {
  const noIpDots = key.includes('.') ? key.replace(IPV4_LIKE, (ip) => ip.replaceAll('.', '_')) : key;
  return noIpDots.replace(STATSD_RESERVED, '_');
}
