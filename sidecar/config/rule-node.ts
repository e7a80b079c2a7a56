// One node of the precomputed descriptor rule tree (a domain root or a configured descriptor).
import type { RateLimit } from './types.js';
import type { WildcardPattern } from './wildcard.js';

/** A wildcard child of a level, in config order. */
export interface WildcardChild {
  readonly pattern: WildcardPattern;
  readonly node: RuleNode;
}

export interface RuleNode {
  /** Composite map key: `key`, or `key_value` when a value is configured ('' for a domain root). */
  readonly finalKey: string;
  /** The configured `key` ('' for a domain root). */
  readonly configKey: string;
  /** The configured `value` ('' when key-only). */
  readonly configValue: string;
  /** The configured stats path, `domain.k1_v1.k2` (the domain alone for a root). */
  readonly path: string;
  /** The rule's limit with `fullKey === path`, or undefined for a pure parent / whitelist node. */
  readonly limit: RateLimit | undefined;
  readonly detailedMetric: boolean;
  readonly valueToMetric: boolean;
  readonly shareThreshold: boolean;
  /** `finalKey` when share_threshold is set on a wildcard rule, else ''. */
  readonly wildcardPattern: string;
  /** Exact children by composite key. Mutable only while loading (merged domains add to it). */
  readonly children: Map<string, RuleNode>;
  /** Children whose composite key contains `*`, in config order (merged files append). */
  readonly wildcards: WildcardChild[];
}
