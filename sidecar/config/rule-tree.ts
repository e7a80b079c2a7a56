// Builds the rule tree from decoded files, with upstream's semantic checks (spec §2.15 rows 7-16) in its order.
import { ConfigError } from './config-error.js';
import type { RawDescriptor, RawRoot } from './yaml-decode.js';
import type { RuleNode } from './rule-node.js';
import type { RateLimit } from './types.js';
import type { RateLimitUnitName } from './units.js';
import { compileWildcard } from './wildcard.js';
import { uniqueEntries } from './key-validation.js';
import type { YamlNode } from './yaml-tree.js';
import { formatGoValue } from './go-format.js';

const VALID_UNITS: ReadonlySet<string> = new Set(['SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'YEAR']);

function newNode(fields: Omit<RuleNode, 'children' | 'wildcards'>): RuleNode {
  return { ...fields, children: new Map(), wildcards: [] };
}

/** JSON value of metadata, as structpb would hold it. @throws ConfigError bad_metadata */
function metadataValue(file: string, node: YamlNode): unknown {
  switch (node.kind) {
    case 'null':
      return null;
    case 'str':
    case 'timestamp':
      return node.value;
    case 'bool':
      return node.value;
    case 'int':
      return Number(node.value);
    case 'float':
      return node.value;
    case 'seq':
      return node.items.map((item) => metadataValue(file, item));
    case 'map': {
      const out: Record<string, unknown> = {};
      for (const { key, value } of uniqueEntries(node)) {
        if (key.kind !== 'str' && key.kind !== 'timestamp') {
          throw new ConfigError(
            'bad_metadata',
            file,
            `error parsing metadata: proto: invalid map key ${formatGoValue(key)}: not a string`,
          );
        }
        out[key.value] = metadataValue(file, value);
      }
      return out;
    }
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

export class RuleTreeBuilder {
  /** Domain roots in load order. */
  readonly domains = new Map<string, RuleNode>();

  constructor(private readonly mergeDomainConfig: boolean) {}

  /** Adds one decoded file. @throws ConfigError for the first semantic fault, in upstream's order. */
  addFile(file: string, root: RawRoot): void {
    if (root.domain === '') throw new ConfigError('empty_domain', file, 'config file cannot have empty domain');
    const existing = this.domains.get(root.domain);
    if (existing !== undefined) {
      if (!this.mergeDomainConfig) {
        throw new ConfigError('duplicate_domain', file, `duplicate domain '${root.domain}' in config file`);
      }
      this.addDescriptors(file, existing, root.descriptors);
      return;
    }
    const domain = newNode({
      finalKey: '',
      configKey: '',
      configValue: '',
      path: root.domain,
      limit: undefined,
      detailedMetric: false,
      valueToMetric: false,
      shareThreshold: false,
      wildcardPattern: '',
    });
    this.addDescriptors(file, domain, root.descriptors);
    this.domains.set(root.domain, domain);
  }

  private addDescriptors(file: string, parent: RuleNode, descriptors: readonly RawDescriptor[]): void {
    for (const d of descriptors) {
      if (d.key === '') throw new ConfigError('empty_key', file, 'descriptor has empty key');
      const finalKey = d.value === '' ? d.key : `${d.key}_${d.value}`;
      const path = `${parent.path}.${finalKey}`;
      if (parent.children.has(finalKey)) {
        throw new ConfigError('duplicate_key', file, `duplicate descriptor composite key '${path}'`);
      }
      const limit = this.limitOf(file, d, path);
      const isWildcard = finalKey.includes('*');
      if (d.shareThreshold && !isWildcard) {
        throw new ConfigError(
          'share_threshold_without_wildcard',
          file,
          `share_threshold can only be used with wildcard values (containing '*'), but found key '${finalKey}'`,
        );
      }
      let metadata: Readonly<Record<string, unknown>> | undefined;
      if (d.metadata !== undefined) {
        const out: Record<string, unknown> = {};
        for (const { key, value } of d.metadata) out[key] = metadataValue(file, value);
        metadata = out;
      }
      const node = newNode({
        finalKey,
        configKey: d.key,
        configValue: d.value,
        path,
        // Shared by every request that matches this rule, so it is frozen.
        limit: limit === undefined ? undefined : Object.freeze({ ...limit, metadata: deepFreeze(metadata) }),
        detailedMetric: d.detailedMetric,
        valueToMetric: d.valueToMetric,
        shareThreshold: d.shareThreshold,
        wildcardPattern: d.shareThreshold && isWildcard ? finalKey : '',
      });
      if (isWildcard) parent.wildcards.push({ pattern: compileWildcard(finalKey), node });
      // Children are checked before this node is registered, as upstream does (it matters for which error wins).
      this.addDescriptors(file, node, d.descriptors);
      parent.children.set(finalKey, node);
    }
  }

  private limitOf(file: string, d: RawDescriptor, path: string): RateLimit | undefined {
    const rl = d.rateLimit;
    if (rl === undefined) return undefined;
    const upper = rl.unit.toUpperCase();
    const validUnit = VALID_UNITS.has(upper);
    if (rl.unlimited) {
      if (validUnit)
        throw new ConfigError('unlimited_with_unit', file, 'should not specify rate limit unit when unlimited');
    } else if (!validUnit) {
      throw new ConfigError('invalid_unit', file, `invalid rate limit unit '${rl.unit}'`);
    }
    for (const r of rl.replaces) {
      if (r.name === '') throw new ConfigError('empty_replaces', file, 'should not have an empty replaces entry');
      if (r.name === rl.name) {
        throw new ConfigError('replaces_self', file, 'replaces should not contain name of same descriptor');
      }
    }
    return {
      fullKey: path,
      requestsPerUnit: rl.requestsPerUnit,
      // Upstream's unit is UNKNOWN for every unlimited limit; the placeholder is never counted (see types.ts).
      unit: validUnit ? (upper as RateLimitUnitName) : 'SECOND',
      name: rl.name,
      unlimited: rl.unlimited,
      shadowMode: d.shadowMode,
      quotaMode: d.quotaMode,
      replaces: Object.freeze(rl.replaces.map((r) => r.name)),
      metadata: undefined,
      shareThresholdKeyPatterns: undefined,
      isOverride: false,
    };
  }
}
