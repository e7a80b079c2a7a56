// The typed error every rate limit config rejection is reported with (file, code, upstream's message).

/** Why a config was rejected; callers branch on this, never on the message text. */
export type ConfigErrorCode =
  | 'yaml_syntax'
  | 'non_string_key'
  | 'unknown_key'
  | 'non_map_list_item'
  | 'bad_value_type'
  | 'decode_error'
  | 'empty_domain'
  | 'duplicate_domain'
  | 'empty_key'
  | 'duplicate_key'
  | 'invalid_unit'
  | 'unlimited_with_unit'
  | 'empty_replaces'
  | 'replaces_self'
  | 'share_threshold_without_wildcard'
  | 'bad_metadata';

/**
 * A rejected config source. `message` is exactly upstream's `<name>: <detail>` (spec §2.15), so logs, xDS NACKs
 * and the config-check CLI read the same as envoyproxy/ratelimit's.
 */
export class ConfigError extends Error {
  /** The upstream-formatted text after `<file>: `. */
  readonly detail: string;

  constructor(
    readonly code: ConfigErrorCode,
    /** The source name (file key, CLI path or xDS config name). */
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'ConfigError';
    this.detail = detail;
  }
}
