import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRateLimitConfig } from '../../../../sidecar/config/index.js';
import { desc, FIXTURES } from './helpers.js';

/**
 * GetLimit answers recorded from upstream's own config package (envoyproxy/ratelimit 3fb702589d36, Jan 2026: a small
 * Go program calling NewRateLimitConfigImpl and GetLimit) for generated descriptors over five configs: exact, key-only,
 * wildcard, share_threshold, value_to_metric and detailed_metric rules and their combinations. That build predates
 * `metadata` and `*` in the middle of values, so the recorded configs use neither.
 */
interface GoldenLimit {
  readonly fullKey: string;
  readonly requestsPerUnit: number;
  readonly unit: string;
  readonly name: string;
  readonly unlimited: boolean;
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  /** Go's slice: '' where an entry has no pattern; null when there are none. */
  readonly shareThresholdKeyPatterns: string[] | null;
}

interface GoldenConfig {
  readonly config: string;
  readonly yaml: string;
  readonly cases: { domain: string; entries: [string, string][]; upstream: GoldenLimit | null }[];
}

describe('parity with upstream GetLimit (recorded answers)', () => {
  const configs = JSON.parse(readFileSync(join(FIXTURES, 'upstream-matching-golden.json'), 'utf8')) as GoldenConfig[];

  for (const golden of configs) {
    it(`${golden.config}: ${golden.cases.length} descriptors`, () => {
      const config = loadRateLimitConfig([{ name: golden.config, yaml: golden.yaml }], { mergeDomainConfig: false });
      for (const c of golden.cases) {
        const limit = config.getLimit(c.domain, desc(...c.entries.map(([k, v]) => `${k}=${v}`)));
        const ours =
          limit === undefined
            ? null
            : {
                fullKey: limit.fullKey,
                requestsPerUnit: limit.requestsPerUnit,
                // Upstream's unit of an unlimited limit is UNKNOWN; ours holds a placeholder (types.ts).
                unit: limit.unlimited ? 'UNKNOWN' : limit.unit,
                name: limit.name,
                unlimited: limit.unlimited,
                shadowMode: limit.shadowMode,
                quotaMode: limit.quotaMode,
                shareThresholdKeyPatterns: limit.shareThresholdKeyPatterns?.map((p) => p ?? '') ?? null,
              };
        expect(ours, JSON.stringify(c.entries)).to.deep.equal(c.upstream);
      }
    });
  }
});
