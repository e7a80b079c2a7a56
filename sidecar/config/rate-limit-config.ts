// The loaded rule set: descriptor → limit matching (spec §2.12) and the stats keys of matches (spec §2.13).
import type { RateLimitDescriptor } from '../../proto/gen/envoy/extensions/common/ratelimit/v3/ratelimit.js';
import { ServiceError } from '../errors.js';
import type { RuleNode, WildcardChild } from './rule-node.js';
import type { RateLimit, RateLimitConfig } from './types.js';
import { UNIT_BY_NUMBER } from './units.js';

function trimPrefix(text: string, prefix: string): string {
  return text.startsWith(prefix) ? text.slice(prefix.length) : text;
}

function dumpLine(limit: RateLimit): string {
  const unit = limit.unlimited ? 'UNKNOWN' : limit.unit;
  return `${limit.fullKey}: unit=${unit} requests_per_unit=${limit.requestsPerUnit}, shadow_mode: ${limit.shadowMode}, quota_mode: ${limit.quotaMode}\n`;
}

function collectDumpLines(node: RuleNode, out: string[]): void {
  if (node.limit !== undefined) out.push(dumpLine(node.limit));
  for (const child of node.children.values()) collectDumpLines(child, out);
}

/** Upstream's override stats key: `domain.` + entries joined by `.`, each `key` or `key_value`. */
function overrideKey(domain: string, descriptor: RateLimitDescriptor): string {
  let key = '';
  for (const entry of descriptor.entries) {
    if (key !== '') key += '.';
    key += entry.value === '' ? entry.key : `${entry.key}_${entry.value}`;
  }
  return `${domain}.${key}`;
}

/**
 * Immutable after construction; getLimit is the hot path, so everything it can share is computed at load time and
 * a plain match returns the rule's own RateLimit object (no allocation beyond the composite key strings).
 */
export class LoadedRateLimitConfig implements RateLimitConfig {
  readonly domains: readonly string[];
  private readonly dumpText: string;

  constructor(private readonly roots: ReadonlyMap<string, RuleNode>) {
    this.domains = Object.freeze([...roots.keys()]);
    const lines: string[] = [];
    for (const root of roots.values()) collectDumpLines(root, lines);
    this.dumpText = lines.sort().join('');
  }

  hasDomain(domain: string): boolean {
    return this.roots.has(domain);
  }

  dump(): string {
    return this.dumpText;
  }

  getLimit(domain: string, descriptor: RateLimitDescriptor): RateLimit | undefined {
    const root = this.roots.get(domain);
    if (root === undefined) return undefined;
    if (descriptor.limit !== undefined) return this.overrideLimit(domain, descriptor);

    const entries = descriptor.entries;
    const count = entries.length;
    let level = root;
    let leaf: RuleNode | undefined;
    // Per-entry share_threshold patterns; allocated only when a share_threshold wildcard matched.
    let sharePatterns: (string | undefined)[] | undefined;
    // The value_to_metric stats key, built only once it stops being equal to the configured path.
    let metricKey: string | undefined;

    for (let i = 0; i < count; i += 1) {
      const entry = entries[i]!;
      const composite = `${entry.key}_${entry.value}`;
      let next = level.children.get(composite);
      let viaWildcard: WildcardChild | undefined;
      if (next === undefined && level.wildcards.length > 0) {
        for (const wildcard of level.wildcards) {
          if (wildcard.pattern.matches(composite)) {
            viaWildcard = wildcard;
            next = wildcard.node;
            break;
          }
        }
      }
      const viaValue = next !== undefined;
      if (next === undefined) next = level.children.get(entry.key);
      // No rule at this level: nothing can match deeper (no backtracking).
      if (next === undefined) return undefined;

      // A segment of `undefined` means "the same as the configured finalKey".
      let segment: string | undefined;
      if (viaWildcard !== undefined) {
        const sameKey = next.configValue !== '' && entry.key === next.configKey;
        let shared: string | undefined;
        if (next.shareThreshold && next.wildcardPattern !== '') {
          shared = sameKey ? next.configValue : trimPrefix(next.wildcardPattern, `${entry.key}_`);
          if (sharePatterns === undefined) sharePatterns = new Array<string | undefined>(count).fill(undefined);
          sharePatterns[i] = shared;
          if (!sameKey) segment = `${entry.key}_${shared}`;
        } else if (next.valueToMetric) {
          segment = entry.value === '' ? entry.key : composite;
        } else if (!sameKey) {
          segment = `${entry.key}_${trimPrefix(viaWildcard.pattern.source, `${entry.key}_`)}`;
        }
      } else if (viaValue) {
        if (entry.value === '') segment = entry.key;
      } else if (next.valueToMetric && entry.value !== '') {
        segment = composite;
      }
      if (metricKey !== undefined) metricKey += `.${segment ?? next.finalKey}`;
      else if (segment !== undefined && segment !== next.finalKey) metricKey = `${level.path}.${segment}`;

      if (next.limit !== undefined && i === count - 1) leaf = next;
      if (next.children.size === 0) break;
      level = next;
    }

    if (leaf === undefined) return undefined;
    const base = leaf.limit!;
    let fullKey = base.fullKey;
    if (leaf.detailedMetric) {
      fullKey = this.detailedKey(domain, descriptor, sharePatterns);
    } else if (metricKey !== undefined) {
      fullKey = metricKey;
    }
    if (fullKey === base.fullKey && sharePatterns === undefined) return base;
    return { ...base, fullKey, shareThresholdKeyPatterns: sharePatterns };
  }

  /** detailed_metric on the leaf: every request value (an empty one gives `k_`), share_threshold patterns kept. */
  private detailedKey(
    domain: string,
    descriptor: RateLimitDescriptor,
    sharePatterns: readonly (string | undefined)[] | undefined,
  ): string {
    let key = domain;
    const entries = descriptor.entries;
    for (let i = 0; i < entries.length; i += 1) {
      const entry = entries[i]!;
      if (sharePatterns === undefined) {
        key += `.${entry.key}_${entry.value}`;
      } else {
        const pattern = sharePatterns[i];
        // Upstream's share_threshold branch formats the other entries like the override key (no `k_`).
        if (pattern !== undefined) key += `.${entry.key}_${pattern}`;
        else key += entry.value === '' ? `.${entry.key}` : `.${entry.key}_${entry.value}`;
      }
    }
    return key;
  }

  private overrideLimit(domain: string, descriptor: RateLimitDescriptor): RateLimit {
    const override = descriptor.limit!;
    const unit = UNIT_BY_NUMBER.get(override.unit);
    if (unit === undefined) {
      // Upstream panics in UnitToDivider here and crashes the process; we refuse the request instead (spec §6).
      throw new ServiceError(
        'invalid_override',
        `rate limit override for domain '${domain}' has an invalid unit (${override.unit})`,
      );
    }
    return {
      fullKey: overrideKey(domain, descriptor),
      requestsPerUnit: override.requestsPerUnit,
      unit,
      name: '',
      unlimited: false,
      shadowMode: false,
      quotaMode: false,
      replaces: [],
      metadata: undefined,
      shareThresholdKeyPatterns: undefined,
      isOverride: true,
    };
  }
}
