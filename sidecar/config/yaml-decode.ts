// The typed decode of a validated YAML tree into upstream's Yaml* structs, with yaml.v2's unmarshal errors.
import { ConfigError } from './config-error.js';
import type { YamlMapNode, YamlNode } from './yaml-tree.js';

export interface RawReplace {
  readonly name: string;
}

export interface RawRateLimit {
  /** Already range-checked to uint32. */
  readonly requestsPerUnit: number;
  readonly unit: string;
  readonly unlimited: boolean;
  readonly name: string;
  readonly replaces: readonly RawReplace[];
}

export interface RawDescriptor {
  readonly key: string;
  readonly value: string;
  readonly rateLimit: RawRateLimit | undefined;
  readonly descriptors: readonly RawDescriptor[];
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly detailedMetric: boolean;
  readonly valueToMetric: boolean;
  readonly shareThreshold: boolean;
  /** The `metadata` map with its keys as Go strings; values are converted (and checked) when the rule is built. */
  readonly metadata: readonly { readonly key: string; readonly value: YamlNode }[] | undefined;
}

/** One config file after decoding (upstream `YamlRoot`). */
export interface RawRoot {
  readonly domain: string;
  readonly descriptors: readonly RawDescriptor[];
}

const UINT32_MAX = 4294967295n;

/** Collects yaml.v2-style type errors; decoding goes on after one, as yaml.v2 does, and they are reported together. */
class Decoder {
  readonly errors: string[] = [];

  private fail(node: YamlNode, goType: string): void {
    let value = '';
    if (node.kind !== 'map' && node.kind !== 'seq') {
      value = node.text.length > 10 ? ` \`${node.text.slice(0, 7)}...\`` : ` \`${node.text}\``;
    }
    const where = node.line > 0 ? `line ${node.line}: ` : '';
    this.errors.push(`${where}cannot unmarshal ${node.tag}${value} into ${goType}`);
  }

  string(node: YamlNode, fallback: string): string {
    if (node.kind === 'null') return '';
    if (node.kind === 'map' || node.kind === 'seq') {
      this.fail(node, 'string');
      return fallback;
    }
    return node.text;
  }

  bool(node: YamlNode, fallback: boolean): boolean {
    if (node.kind === 'null') return false;
    if (node.kind === 'bool') return node.value;
    this.fail(node, 'bool');
    return fallback;
  }

  uint32(node: YamlNode, fallback: number): number {
    if (node.kind === 'null') return 0;
    if (node.kind === 'int' && node.value >= 0n && node.value <= UINT32_MAX) return Number(node.value);
    // yaml.v2 truncates a float into an unsigned field; key validation has rejected floats before this.
    if (node.kind === 'float' && node.value >= 0 && node.value <= Number(UINT32_MAX)) return Math.trunc(node.value);
    this.fail(node, 'uint32');
    return fallback;
  }

  /** Fields of a struct in source order; a repeated key is decoded again and the last one wins. */
  private fields(node: YamlMapNode, visit: (name: string, value: YamlNode) => void): void {
    for (const entry of node.entries) {
      const key = entry.key;
      if (key.kind === 'map' || key.kind === 'seq') continue;
      visit(key.kind === 'null' ? '' : key.text, entry.value);
    }
  }

  root(node: YamlMapNode): RawRoot {
    let domain = '';
    let descriptors: readonly RawDescriptor[] = [];
    this.fields(node, (name, value) => {
      if (name === 'domain') domain = this.string(value, domain);
      else if (name === 'descriptors') descriptors = this.descriptorList(value, descriptors);
    });
    return { domain, descriptors };
  }

  private descriptorList(node: YamlNode, fallback: readonly RawDescriptor[]): readonly RawDescriptor[] {
    if (node.kind === 'null') return [];
    if (node.kind !== 'seq') {
      this.fail(node, '[]config.YamlDescriptor');
      return fallback;
    }
    const out: RawDescriptor[] = [];
    for (const item of node.items) {
      if (item.kind === 'map') out.push(this.descriptor(item));
      else if (item.kind === 'null') out.push(this.descriptor({ kind: 'map', entries: [], line: 0, tag: '!!map' }));
      else this.fail(item, 'config.YamlDescriptor');
    }
    return out;
  }

  private descriptor(node: YamlMapNode): RawDescriptor {
    let key = '';
    let value = '';
    let rateLimit: RawRateLimit | undefined;
    let descriptors: readonly RawDescriptor[] = [];
    let shadowMode = false;
    let quotaMode = false;
    let detailedMetric = false;
    let valueToMetric = false;
    let shareThreshold = false;
    let metadata: RawDescriptor['metadata'];
    this.fields(node, (name, v) => {
      switch (name) {
        case 'key':
          key = this.string(v, key);
          break;
        case 'value':
          value = this.string(v, value);
          break;
        case 'rate_limit':
          rateLimit = this.rateLimit(v, rateLimit);
          break;
        case 'descriptors':
          descriptors = this.descriptorList(v, descriptors);
          break;
        case 'shadow_mode':
          shadowMode = this.bool(v, shadowMode);
          break;
        case 'quota_mode':
          quotaMode = this.bool(v, quotaMode);
          break;
        case 'detailed_metric':
          detailedMetric = this.bool(v, detailedMetric);
          break;
        case 'value_to_metric':
          valueToMetric = this.bool(v, valueToMetric);
          break;
        case 'share_threshold':
          shareThreshold = this.bool(v, shareThreshold);
          break;
        case 'metadata':
          metadata = this.metadata(v, metadata);
          break;
        default:
          break;
      }
    });
    return {
      key,
      value,
      rateLimit,
      descriptors,
      shadowMode,
      quotaMode,
      detailedMetric,
      valueToMetric,
      shareThreshold,
      metadata,
    };
  }

  private rateLimit(node: YamlNode, fallback: RawRateLimit | undefined): RawRateLimit | undefined {
    if (node.kind === 'null') return undefined;
    if (node.kind !== 'map') {
      this.fail(node, 'config.YamlRateLimit');
      return fallback;
    }
    let requestsPerUnit = 0;
    let unit = '';
    let unlimited = false;
    let name = '';
    let replaces: readonly RawReplace[] = [];
    this.fields(node, (field, v) => {
      switch (field) {
        case 'requests_per_unit':
          requestsPerUnit = this.uint32(v, requestsPerUnit);
          break;
        case 'unit':
          unit = this.string(v, unit);
          break;
        case 'unlimited':
          unlimited = this.bool(v, unlimited);
          break;
        case 'name':
          name = this.string(v, name);
          break;
        case 'replaces':
          replaces = this.replaces(v, replaces);
          break;
        default:
          break;
      }
    });
    return { requestsPerUnit, unit, unlimited, name, replaces };
  }

  private replaces(node: YamlNode, fallback: readonly RawReplace[]): readonly RawReplace[] {
    if (node.kind === 'null') return [];
    if (node.kind !== 'seq') {
      this.fail(node, '[]config.yamlReplaces');
      return fallback;
    }
    const out: RawReplace[] = [];
    for (const item of node.items) {
      if (item.kind === 'null') {
        out.push({ name: '' });
        continue;
      }
      if (item.kind !== 'map') {
        this.fail(item, 'config.yamlReplaces');
        continue;
      }
      let name = '';
      this.fields(item, (field, v) => {
        if (field === 'name') name = this.string(v, name);
      });
      out.push({ name });
    }
    return out;
  }

  private metadata(node: YamlNode, fallback: RawDescriptor['metadata']): RawDescriptor['metadata'] {
    if (node.kind === 'null') return undefined;
    if (node.kind !== 'map') {
      this.fail(node, 'map[string]interface {}');
      return fallback;
    }
    const byKey = new Map<string, YamlNode>();
    for (const entry of node.entries) {
      if (entry.key.kind === 'map' || entry.key.kind === 'seq') {
        this.fail(entry.key, 'string');
        continue;
      }
      byKey.set(entry.key.kind === 'null' ? '' : entry.key.text, entry.value);
    }
    return [...byKey].map(([key, value]) => ({ key, value }));
  }
}

/**
 * Decodes a key-validated file tree (spec §2.15 row 6).
 * @throws ConfigError decode_error with upstream's `error loading config file: yaml: unmarshal errors:` text.
 */
export function decodeRoot(file: string, root: YamlMapNode): RawRoot {
  const decoder = new Decoder();
  const decoded = decoder.root(root);
  if (decoder.errors.length > 0) {
    throw new ConfigError(
      'decode_error',
      file,
      `error loading config file: yaml: unmarshal errors:\n  ${decoder.errors.join('\n  ')}`,
    );
  }
  return decoded;
}
