// Go fmt `%v` renderings of yaml.v2 values, so validation messages read exactly like upstream's.
import { formatGoFloat } from './yaml-scalar.js';
import type { YamlNode } from './yaml-tree.js';

/** `fmt.Sprintf("%v", v)` for the value yaml.v2 would put in an interface{} (maps print with sorted keys). */
export function formatGoValue(node: YamlNode): string {
  switch (node.kind) {
    case 'null':
      return '<nil>';
    case 'str':
    case 'timestamp':
      return node.value;
    case 'bool':
      return node.value ? 'true' : 'false';
    case 'int':
      return node.value.toString();
    case 'float':
      return formatGoFloat(node.value);
    case 'seq':
      return `[${node.items.map(formatGoValue).join(' ')}]`;
    case 'map': {
      const last = new Map<string, string>();
      for (const entry of node.entries) last.set(formatGoValue(entry.key), formatGoValue(entry.value));
      const keys = [...last.keys()].sort();
      return `map[${keys.map((k) => `${k}:${last.get(k) ?? ''}`).join(' ')}]`;
    }
  }
}
