// Loading and validation of rate limit config sources (the phases of upstream's config loading, spec §2.15).
import { ConfigError } from './config-error.js';
import { validateYamlKeys } from './key-validation.js';
import { LoadedRateLimitConfig } from './rate-limit-config.js';
import { RuleTreeBuilder } from './rule-tree.js';
import type { RateLimitConfig } from './types.js';
import { decodeRoot, type RawRoot } from './yaml-decode.js';
import { documentToTree, parseYamlTree, YamlTreeError, type YamlNode } from './yaml-tree.js';
import { formatGoValue } from './go-format.js';

/**
 * One config input. `yaml` is file text; `document` is the same tree already parsed (snake_case keys, unit names
 * such as `SECOND`), as the xDS client and the operator produce it. `name` prefixes every error message.
 */
export type ConfigSource =
  { readonly name: string; readonly yaml: string } | { readonly name: string; readonly document: unknown };

export interface LoadOptions {
  /** MERGE_DOMAIN_CONFIG: several sources may share a domain (their descriptors merge; duplicate keys still fail). */
  readonly mergeDomainConfig: boolean;
}

/** yaml.v2 refuses map or sequence keys while building the generic map, before any validation runs. */
function checkHashableKeys(file: string, node: YamlNode): void {
  if (node.kind === 'seq') {
    for (const item of node.items) checkHashableKeys(file, item);
  } else if (node.kind === 'map') {
    for (const entry of node.entries) {
      if (entry.key.kind === 'map' || entry.key.kind === 'seq') {
        throw new ConfigError(
          'decode_error',
          file,
          `error loading config file: yaml: invalid map key: ${formatGoValue(entry.key)}`,
        );
      }
      checkHashableKeys(file, entry.value);
    }
  }
}

/** One source after parsing, key validation and decoding; opaque outside this folder. */
export interface ParsedConfigSource {
  readonly name: string;
  readonly root: RawRoot;
}

/**
 * Parse, key validation and struct decode of one source (upstream ConfigFileContentToYaml), for callers that, like
 * upstream's config-check CLI, report per file before building. Most callers want loadRateLimitConfig.
 * @throws ConfigError yaml_syntax | decode_error | non_string_key | unknown_key | non_map_list_item | bad_value_type
 */
export function parseConfigSource(source: ConfigSource): ParsedConfigSource {
  return { name: source.name, root: parseSourceRoot(source) };
}

function parseSourceRoot(source: ConfigSource): RawRoot {
  let tree: YamlNode;
  if ('yaml' in source) {
    try {
      tree = parseYamlTree(source.yaml);
    } catch (err) {
      if (err instanceof YamlTreeError) {
        throw new ConfigError(err.code, source.name, `error loading config file: ${err.message}`);
      }
      throw err;
    }
  } else {
    tree = documentToTree(source.document);
  }
  checkHashableKeys(source.name, tree);
  if (tree.kind === 'null') return { domain: '', descriptors: [] };
  if (tree.kind !== 'map') {
    const value =
      tree.kind === 'seq' ? '' : ` \`${tree.text.length > 10 ? `${tree.text.slice(0, 7)}...` : tree.text}\``;
    const where = tree.line > 0 ? `line ${tree.line}: ` : '';
    throw new ConfigError(
      'decode_error',
      source.name,
      `error loading config file: yaml: unmarshal errors:\n  ${where}cannot unmarshal ${tree.tag}${value} into map[interface {}]interface {}`,
    );
  }
  validateYamlKeys(source.name, tree);
  return decodeRoot(source.name, tree);
}

/**
 * Loads a complete rule set. Every source is parsed and structurally checked first (in order), then the domains are
 * built (in order), as upstream does; the first fault rejects the whole set.
 * @throws ConfigError with `code`, `file` and upstream's `<name>: <message>` text (spec §2.15).
 */
export function loadRateLimitConfig(sources: readonly ConfigSource[], options: LoadOptions): RateLimitConfig {
  return buildRateLimitConfig(sources.map(parseConfigSource), options);
}

/** The second phase of loadRateLimitConfig: domains and rule trees from parsed sources, in order. @throws ConfigError */
export function buildRateLimitConfig(parsed: readonly ParsedConfigSource[], options: LoadOptions): RateLimitConfig {
  const builder = new RuleTreeBuilder(options.mergeDomainConfig);
  for (const { name, root } of parsed) builder.addFile(name, root);
  return new LoadedRateLimitConfig(builder.domains);
}
