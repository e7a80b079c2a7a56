import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadRateLimitConfig } from '../../../../sidecar/config/index.js';
import { FIXTURES } from './helpers.js';

/**
 * Answers recorded from upstream's ratelimit_config_check (envoyproxy/ratelimit 3fb702589d36, Jan 2026) for one file
 * each. `exitCode` 2 means upstream panicked in the parse phase (YAML, key validation, decode). Cases where the spec's
 * newer snapshot differs from that build (metadata, share_threshold wording), where upstream is random (Go map order)
 * or where only the libyaml syntax wording differs are not in the file.
 */
interface GoldenCase {
  readonly name: string;
  readonly yaml: string;
  readonly upstream: string;
  readonly exitCode: number;
}

const PARSE_PHASE = new Set([
  'yaml_syntax',
  'non_string_key',
  'unknown_key',
  'non_map_list_item',
  'bad_value_type',
  'decode_error',
]);

describe('parity with upstream config loading (recorded answers)', () => {
  const cases = JSON.parse(readFileSync(join(FIXTURES, 'upstream-golden.json'), 'utf8')) as GoldenCase[];

  for (const golden of cases) {
    it(`${golden.name}: ${golden.upstream.split('\n')[0]}`, () => {
      let error: ConfigError | undefined;
      try {
        loadRateLimitConfig([{ name: 'c.yaml', yaml: golden.yaml }], { mergeDomainConfig: false });
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        error = err;
      }
      if (golden.upstream === 'ok') {
        expect(error?.message).to.equal(undefined);
        return;
      }
      expect(error?.detail).to.equal(golden.upstream);
      expect(PARSE_PHASE.has(error!.code), `code ${error!.code}`).to.equal(golden.exitCode === 2);
    });
  }
});
