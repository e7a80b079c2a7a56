// Differential: descriptor → rule matching (exact, wildcard, key-only, nesting, depth, whitelist, unlimited, 0, replaces).
import { expect } from 'chai';
import type { ComparableOutcome } from './compare.js';
import { startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, sameCounterDeltas, sameGrpc, sameGrpcRepeated, snapshotCounters } from './steps.js';

const RULES = `
domain: match
descriptors:
  - key: exact
    value: v1
    rate_limit: { unit: hour, requests_per_unit: 3 }
  - key: wild
    value: "foo*"
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: wild
    value: "fo*"
    rate_limit: { unit: day, requests_per_unit: 5, name: shorter }
  - key: keyonly
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: parent
    value: p
    descriptors:
      - key: child
        value: c
        rate_limit: { unit: hour, requests_per_unit: 2 }
      - key: child
        rate_limit: { unit: day, requests_per_unit: 4 }
  - key: parent
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: white
    value: listed
  - key: unl
    rate_limit: { unlimited: true }
  - key: zero
    rate_limit: { unit: hour, requests_per_unit: 0 }
  - key: deep
    descriptors:
      - key: mid
        descriptors:
          - key: leaf
            rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: rep
    value: a
    rate_limit: { unit: hour, requests_per_unit: 1, name: old }
  - key: rep
    value: b
    rate_limit: { unit: hour, requests_per_unit: 5, replaces: [{ name: old }] }
  - key: unlrep
    rate_limit: { unlimited: true, replaces: [{ name: old }] }
`;

function codes(outcome: ComparableOutcome): string[] {
  if (outcome.kind !== 'response') throw new Error(`expected a response, got ${JSON.stringify(outcome)}`);
  return [outcome.overallCode, ...outcome.statuses.map((s) => s.code)];
}

describe('differential: rule matching', function () {
  this.timeout(60_000);
  let pair: ServicePair;

  before(async () => {
    pair = await startServicePair({ files: { 'match.yaml': RULES } });
  });
  after(async () => {
    await pair?.stop();
  });

  it('exact value: counts down, then over the limit; stats alike', async () => {
    const before = await snapshotCounters(pair);
    const answers = await sameGrpcRepeated(pair, 'exact', request('match', [desc([['exact', 'v1']])]), 5);
    expect(answers.map((a) => codes(a)[0])).to.deep.equal(['OK', 'OK', 'OK', 'OVER_LIMIT', 'OVER_LIMIT']);
    const deltas = await sameCounterDeltas(pair, 'exact', before);
    expect(deltas['ratelimit.service.rate_limit.match.exact_v1.total_hits']).to.equal(5);
    await sameGrpc(pair, 'exact, other value (no rule)', request('match', [desc([['exact', 'v2']])]));
  });

  it('trailing wildcard values: config order decides, no match', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpcRepeated(pair, 'prefix wildcard', request('match', [desc([['wild', 'foo123']])]), 3);
    await sameGrpcRepeated(pair, 'prefix wildcard, other value', request('match', [desc([['wild', 'foo']])]), 2);
    await sameGrpcRepeated(pair, 'second pattern (named)', request('match', [desc([['wild', 'fox']])]), 2);
    await sameGrpc(pair, 'both patterns match: first in config wins', request('match', [desc([['wild', 'foobar']])]));
    await sameGrpc(pair, 'no pattern matches', request('match', [desc([['wild', 'zzz']])]));
    await sameCounterDeltas(pair, 'wildcard', before);
  });

  it('key-only rule: one counter per distinct value', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpcRepeated(pair, 'key-only a', request('match', [desc([['keyonly', 'a']])]), 3);
    await sameGrpcRepeated(pair, 'key-only b', request('match', [desc([['keyonly', 'b']])]), 2);
    await sameGrpc(pair, 'key-only empty value', request('match', [desc([['keyonly', '']])]));
    await sameCounterDeltas(pair, 'key-only', before);
  });

  it('nested rules and the depth rule (no backtracking)', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpcRepeated(
      pair,
      'parent/child exact',
      request('match', [
        desc([
          ['parent', 'p'],
          ['child', 'c'],
        ]),
      ]),
      3,
    );
    await sameGrpcRepeated(
      pair,
      'parent/child key-only',
      request('match', [
        desc([
          ['parent', 'p'],
          ['child', 'z'],
        ]),
      ]),
      2,
    );
    await sameGrpc(pair, 'shorter than the limit depth', request('match', [desc([['parent', 'p']])]));
    await sameGrpc(
      pair,
      'longer than the config path',
      request('match', [
        desc([
          ['parent', 'p'],
          ['child', 'c'],
          ['extra', 'x'],
        ]),
      ]),
    );
    await sameGrpcRepeated(pair, 'key-only parent sibling', request('match', [desc([['parent', 'q']])]), 2);
    await sameGrpcRepeated(
      pair,
      'three levels deep',
      request('match', [
        desc([
          ['deep', 'a'],
          ['mid', 'b'],
          ['leaf', 'c'],
        ]),
      ]),
      3,
    );
    await sameGrpc(
      pair,
      'two of three levels',
      request('match', [
        desc([
          ['deep', 'a'],
          ['mid', 'b'],
        ]),
      ]),
    );
    await sameGrpc(
      pair,
      'wrong order',
      request('match', [
        desc([
          ['child', 'c'],
          ['parent', 'p'],
        ]),
      ]),
    );
    await sameCounterDeltas(pair, 'nested', before);
  });

  it('whitelist, unlimited and requests_per_unit 0', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpcRepeated(pair, 'whitelist', request('match', [desc([['white', 'listed']])]), 2);
    const unl = await sameGrpcRepeated(pair, 'unlimited', request('match', [desc([['unl', 'x']])]), 2);
    expect(unl[0]).to.deep.include({ overallCode: 'OK' });
    const zero = await sameGrpc(pair, 'zero', request('match', [desc([['zero', 'x']])]));
    expect(codes(zero)).to.deep.equal(['OVER_LIMIT', 'OVER_LIMIT']);
    await sameCounterDeltas(pair, 'whitelist/unlimited/zero', before);
  });

  it('replaces: a named limit replaced by another matched limit (also by an unlimited one)', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpcRepeated(
      pair,
      'replaced + replacing',
      request('match', [desc([['rep', 'a']]), desc([['rep', 'b']])]),
      3,
    );
    await sameGrpcRepeated(pair, 'named limit alone', request('match', [desc([['rep', 'a']])]), 2);
    await sameGrpc(pair, 'replaced by unlimited', request('match', [desc([['rep', 'a']]), desc([['unlrep', 'x']])]));
    await sameCounterDeltas(pair, 'replaces', before);
  });

  it('several descriptors: one over makes the overall code OVER_LIMIT', async () => {
    const before = await snapshotCounters(pair);
    const mixed = await sameGrpc(
      pair,
      'mixed',
      request('match', [
        desc([['zero', 'y']]),
        desc([['keyonly', 'mixed']]),
        desc([['unl', 'y']]),
        desc([['nope', 'x']]),
      ]),
    );
    expect(codes(mixed)[0]).to.equal('OVER_LIMIT');
    await sameCounterDeltas(pair, 'mixed', before);
  });

  it('edge requests: no entries, empty key, unicode, `_` joins, huge hits_addend', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpc(pair, 'descriptor without entries', request('match', [desc([])]));
    await sameGrpc(pair, 'empty key', request('match', [desc([['', 'v1']])]));
    await sameGrpcRepeated(pair, 'unicode value', request('match', [desc([['keyonly', 'żółw/🐢 x']])]), 2);
    await sameGrpc(pair, 'key with underscore', request('match', [desc([['exact_v1', '']])]));
    await sameGrpc(pair, 'hits_addend uint32 max', request('match', [desc([['keyonly', 'huge']])], 4294967295));
    await sameGrpc(
      pair,
      'per-descriptor hits above uint32',
      request('match', [desc([['keyonly', 'huge64']], { hitsAddend: 2 ** 40 })]),
    );
    await sameCounterDeltas(pair, 'edge requests', before);
  });

  it('unknown domain: every descriptor OK without a limit, domain_not_found per descriptor', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpc(pair, 'unknown domain', request('nosuch', [desc([['exact', 'v1']]), desc([['k', 'v']])]));
    const deltas = await sameCounterDeltas(pair, 'unknown domain', before);
    expect(deltas['ratelimit.service.rate_limit.nosuch.domain_not_found']).to.equal(2);
  });
});
