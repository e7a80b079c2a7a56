// Upstream's structural pass over the untyped YAML tree (validateYamlKeys): key types, the key allowlist, leaf types.
import { ConfigError } from './config-error.js';
import { formatGoValue } from './go-format.js';
import { fitsGoInt } from './yaml-scalar.js';
import type { YamlMapNode, YamlNode } from './yaml-tree.js';

/** The flat allowlist: checked in every map at every depth, whatever the context (so `unit:` at the top passes). */
const VALID_KEYS: ReadonlySet<string> = new Set([
  'domain',
  'key',
  'value',
  'descriptors',
  'rate_limit',
  'unit',
  'requests_per_unit',
  'unlimited',
  'shadow_mode',
  'quota_mode',
  'name',
  'replaces',
  'detailed_metric',
  'value_to_metric',
  'share_threshold',
  'metadata',
]);

function identity(node: YamlNode): string {
  switch (node.kind) {
    case 'str':
    case 'timestamp':
      return `s:${node.value}`;
    case 'int':
      return `i:${node.value}`;
    case 'float':
      return `f:${node.value}`;
    case 'bool':
      return `b:${node.value}`;
    case 'null':
      return 'n';
    default:
      return `x:${formatGoValue(node)}`;
  }
}

/** What a Go map built by yaml.v2 holds: one entry per distinct key, the last value winning. */
export function uniqueEntries(map: YamlMapNode): { key: YamlNode; value: YamlNode }[] {
  const byKey = new Map<string, { key: YamlNode; value: YamlNode }>();
  for (const entry of map.entries) {
    const id = identity(entry.key);
    const existing = byKey.get(id);
    if (existing === undefined) byKey.set(id, { key: entry.key, value: entry.value });
    else existing.value = entry.value;
  }
  return [...byKey.values()];
}

/**
 * Checks every map outside `metadata` (spec §1.3, §2.15 rows 2-5). Upstream walks a Go map, so with several
 * faults the reported one is random there; here it is the first in document order.
 * @throws ConfigError non_string_key | unknown_key | non_map_list_item | bad_value_type
 */
export function validateYamlKeys(file: string, map: YamlMapNode): void {
  for (const { key, value } of uniqueEntries(map)) {
    if (key.kind !== 'str' && key.kind !== 'timestamp') {
      throw new ConfigError('non_string_key', file, `config error, key is not of type string: ${formatGoValue(key)}`);
    }
    if (!VALID_KEYS.has(key.value)) {
      throw new ConfigError('unknown_key', file, `config error, unknown key '${key.value}'`);
    }
    if (key.value === 'metadata') continue;
    switch (value.kind) {
      case 'seq':
        for (const item of value.items) {
          if (item.kind !== 'map') {
            throw new ConfigError(
              'non_map_list_item',
              file,
              `config error, yaml file contains list of type other than map: ${formatGoValue(item)}`,
            );
          }
          validateYamlKeys(file, item);
        }
        break;
      case 'map':
        validateYamlKeys(file, value);
        break;
      case 'int':
        // Only a Go `int` is a leaf upstream accepts; integers beyond int64 arrive as uint64.
        if (!fitsGoInt(value.value)) throw new ConfigError('bad_value_type', file, 'error checking config');
        break;
      case 'float':
        throw new ConfigError('bad_value_type', file, 'error checking config');
      default:
        break;
    }
  }
}
