// Differential: per-rule shadow mode, hits_addend, overrides, near-limit stats and stats-key options.
import { expect } from 'chai';
import { RateLimitUnit } from '../../proto/gen/envoy/type/v3/ratelimit_unit.js';
import { startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameCounterDeltas, sameGrpc, sameGrpcRepeated, snapshotCounters } from './steps.js';

const RULES = `
domain: modes
descriptors:
  - key: shadow
    rate_limit: { unit: hour, requests_per_unit: 2 }
    shadow_mode: true
  - key: plain
    rate_limit: { unit: hour, requests_per_unit: 20 }
  - key: near
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: detailed
    descriptors:
      - key: sub
        rate_limit: { unit: hour, requests_per_unit: 5 }
        detailed_metric: true
  - key: v2m
    value_to_metric: true
    descriptors:
      - key: sub
        value: x
        descriptors:
          - key: leaf
            rate_limit: { unit: hour, requests_per_unit: 5 }
  - key: v2mw
    value: "ab*"
    value_to_metric: true
    rate_limit: { unit: hour, requests_per_unit: 5 }
  - key: shared
    value: "files/*"
    share_threshold: true
    rate_limit: { unit: hour, requests_per_unit: 3 }
  - key: sharedv2m
    value: "api/*"
    share_threshold: true
    value_to_metric: true
    rate_limit: { unit: day, requests_per_unit: 3 }
  - key: ip
    rate_limit: { unit: hour, requests_per_unit: 5 }
    detailed_metric: true
`;

describe('differential: shadow rules, hits_addend, overrides and stats keys', function () {
  this.timeout(60_000);
  let pair: ServicePair;

  before(async () => {
    pair = await startServicePair({ files: { 'modes.yaml': RULES } });
  });
  after(async () => {
    await pair?.stop();
  });

  it('shadow_mode rule: OK past the limit, over_limit and shadow_mode counted', async () => {
    const before = await snapshotCounters(pair);
    const answers = await sameGrpcRepeated(pair, 'shadow', request('modes', [desc([['shadow', 's']])]), 4);
    expect(answers.every((a) => a.kind === 'response' && a.overallCode === 'OK')).to.equal(true);
    const deltas = await sameCounterDeltas(pair, 'shadow', before);
    expect(deltas['ratelimit.service.rate_limit.modes.shadow.shadow_mode']).to.equal(2);
  });

  it('near-limit stats with hits_addend on the request', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpcRepeated(pair, 'near, hits 3', request('modes', [desc([['near', 'a']])], 3), 4);
    await sameGrpcRepeated(pair, 'near, hits 1', request('modes', [desc([['near', 'b']])]), 11);
    await sameGrpc(pair, 'near, hits 7 crossing', request('modes', [desc([['near', 'c']])], 7));
    await sameGrpc(pair, 'near, hits 7 crossing again', request('modes', [desc([['near', 'c']])], 7));
    await sameCounterDeltas(pair, 'near', before);
  });

  it('per-descriptor hits_addend (including 0, check only) wins over the request value', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpc(pair, 'per-descriptor 5', request('modes', [desc([['plain', 'h']], { hitsAddend: 5 })], 2));
    await sameGrpc(pair, 'per-descriptor 0', request('modes', [desc([['plain', 'h']], { hitsAddend: 0 })], 2));
    await sameGrpc(
      pair,
      'mixed wrappers',
      request('modes', [desc([['plain', 'h']], { hitsAddend: 0 }), desc([['plain', 'i']])], 4),
    );
    await sameGrpc(pair, 'per-descriptor 16 crosses', request('modes', [desc([['plain', 'h']], { hitsAddend: 16 })]));
    await sameGrpc(pair, 'check only when over', request('modes', [desc([['plain', 'h']], { hitsAddend: 0 })]));
    await sameCounterDeltas(pair, 'per-descriptor hits', before);
  });

  it('limit overrides: bypass matching, even without a rule; not in shadow mode', async () => {
    const before = await snapshotCounters(pair);
    const hour2 = { requestsPerUnit: 2, unit: RateLimitUnit.HOUR };
    await sameGrpcRepeated(
      pair,
      'override on a rule',
      request('modes', [desc([['plain', 'ov']], { limit: hour2 })]),
      3,
    );
    await sameGrpcRepeated(
      pair,
      'override without a rule',
      request('modes', [
        desc(
          [
            ['norule', 'x'],
            ['sub', ''],
          ],
          { limit: { requestsPerUnit: 1, unit: RateLimitUnit.DAY } },
        ),
      ]),
      2,
    );
    await sameGrpcRepeated(
      pair,
      'override on a shadow rule',
      request('modes', [desc([['shadow', 'ov']], { limit: hour2 })]),
      3,
    );
    await sameGrpc(pair, 'override, unknown domain', request('nodomain', [desc([['plain', 'ov']], { limit: hour2 })]));
    await sameCounterDeltas(pair, 'overrides', before);
  });

  it('detailed_metric, value_to_metric and share_threshold stats keys', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpcRepeated(
      pair,
      'detailed',
      request('modes', [
        desc([
          ['detailed', 'd1'],
          ['sub', 's1'],
        ]),
      ]),
      2,
    );
    await sameGrpc(
      pair,
      'detailed, empty value',
      request('modes', [
        desc([
          ['detailed', 'd1'],
          ['sub', ''],
        ]),
      ]),
    );
    await sameGrpc(
      pair,
      'value_to_metric nested',
      request('modes', [
        desc([
          ['v2m', 'GET'],
          ['sub', 'x'],
          ['leaf', 'L'],
        ]),
      ]),
    );
    await sameGrpc(pair, 'value_to_metric wildcard', request('modes', [desc([['v2mw', 'abc']])]));
    await sameGrpcRepeated(pair, 'share_threshold 1', request('modes', [desc([['shared', 'files/a']])]), 2);
    await sameGrpcRepeated(pair, 'share_threshold 2', request('modes', [desc([['shared', 'files/b']])]), 2);
    await sameGrpc(pair, 'share_threshold + value_to_metric', request('modes', [desc([['sharedv2m', 'api/x']])]));
    await sameGrpc(pair, 'ip sanitising', request('modes', [desc([['ip', '10.0.0.5:80|x']])]));
    await sameCounterDeltas(pair, 'stats keys', before);
  });
});
