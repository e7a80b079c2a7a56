// Entry point of sidecar/config: loads and validates rate limit config sources into a RateLimitConfig.
//
// Behaviour follows envoyproxy/ratelimit (spec §1.3, §2.12, §2.13, §2.15) so the same files give the same answers
// and the same error texts. Deliberate differences, all documented in the spec's §6 spirit:
// - YAML is parsed by eemeli/yaml and resolved with yaml.v2's rules (see yaml-tree.ts); syntax error wording may
//   differ from libyaml's except for the common unterminated-quote case.
// - Where upstream iterates a Go map (several faults in one file, several files), the reported error is the first in
//   document / source order instead of a random one.
// - `metadata` is kept on detailed_metric / value_to_metric matches (upstream loses it there, spec §2.7 quirk).
// - A limit override with an UNKNOWN or undefined unit throws ServiceError('invalid_override') instead of crashing.
// - `error parsing metadata: …` carries our own detail text after the prefix.
import { ConfigError } from './config-error.js';
import { validateYamlKeys } from './key-validation.js';
import { LoadedRateLimitConfig } from './rate-limit-config.js';
import { RuleTreeBuilder } from './rule-tree.js';
import type { RateLimitConfig } from './types.js';
import { decodeRoot, type RawRoot } from './yaml-decode.js';
import { documentToTree, parseYamlTree, YamlTreeError, type YamlNode } from './yaml-tree.js';
import { formatGoValue } from './go-format.js';

export { ConfigError, type ConfigErrorCode } from './config-error.js';
export type { RateLimit, RateLimitConfig } from './types.js';
export { sanitizeStatsKey } from './stats-key.js';
export { xdsConfigToSource } from './xds-document.js';

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
