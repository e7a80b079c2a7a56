// Differential: response dynamic metadata (RESPONSE_DYNAMIC_METADATA) with request/descriptor hits_addend and overrides.
import { RateLimitUnit } from '../../proto/gen/envoy/type/v3/ratelimit_unit.js';
import type { ComparableOutcome } from './compare.js';
import { startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameGrpc, sameGrpcRepeated } from './steps.js';

const RULES = `
domain: meta
descriptors:
  - key: m1
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: m2
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: md
    rate_limit: { unit: hour, requests_per_unit: 5 }
    detailed_metric: true
  - key: unl
    rate_limit: { unlimited: true }
`;

/**
 * The pinned upstream snapshot adds `quotaModeEnabled` (always) and `quotaModeViolations` to the metadata; the
 * newer upstream that ours follows (spec §2.7) has neither. See docs/differential-testing.md.
 */
export function withoutSnapshotQuotaFields(outcome: ComparableOutcome): ComparableOutcome {
  if (outcome.kind !== 'response' || typeof outcome.dynamicMetadata !== 'object' || outcome.dynamicMetadata === null) {
    return outcome;
  }
  const {
    quotaModeEnabled: _enabled,
    quotaModeViolations: _violations,
    ...rest
  } = outcome.dynamicMetadata as Record<string, unknown>;
  return { ...outcome, dynamicMetadata: rest };
}

const step = { adjustUpstream: withoutSnapshotQuotaFields };

describe('differential: response dynamic metadata', function () {
  this.timeout(60_000);
  let pair: ServicePair;

  before(async () => {
    pair = await startServicePair({ files: { 'meta.yaml': RULES }, env: { RESPONSE_DYNAMIC_METADATA: 'true' } });
  });
  after(async () => {
    await pair?.stop();
  });

  it('domain and descriptor entries, passed and over-limit descriptors', async () => {
    await sameGrpcRepeated(
      pair,
      'm1+m2',
      request('meta', [
        desc([['m1', 'x']]),
        desc([
          ['m2', 'x'],
          ['k', ''],
        ]),
      ]),
      3,
      step,
    );
    await sameGrpc(pair, 'unlimited + unmatched', request('meta', [desc([['unl', 'x']]), desc([['nope', 'x']])]), step);
    await sameGrpc(pair, 'detailed_metric', request('meta', [desc([['md', 'x']]), desc([['m1', 'd']])]), step);
  });

  it('request and per-descriptor hits_addend and overrides appear in the metadata', async () => {
    await sameGrpc(pair, 'request hits', request('meta', [desc([['m1', 'h']])], 2), step);
    await sameGrpc(pair, 'per-descriptor hits 0', request('meta', [desc([['m1', 'h2']], { hitsAddend: 0 })], 3), step);
    await sameGrpc(
      pair,
      'override',
      request('meta', [
        desc(
          [
            ['m2', 'o'],
            ['k', 'v'],
          ],
          { limit: { requestsPerUnit: 7, unit: RateLimitUnit.DAY } },
        ),
      ]),
      step,
    );
  });
});
