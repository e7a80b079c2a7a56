// Where ours deliberately differs from the pinned upstream snapshot: each difference asserted on both sides.
import { expect } from 'chai';
import { RateLimitUnit } from '../../proto/gen/envoy/type/v3/ratelimit_unit.js';
import { comparableOutcome, counterDeltas, type ComparableOutcome } from './compare.js';
import { diffTarget, startServicePair, type ServicePair } from './service-pair.js';
import { desc, request, RULE_STATS_PREFIX, sameGrpc, snapshotCounters } from './steps.js';

const RULES = `
domain: diff
descriptors:
  - key: quota
    rate_limit: { unit: hour, requests_per_unit: 1 }
    quota_mode: true
  - key: quota2
    rate_limit: { unit: hour, requests_per_unit: 3 }
    quota_mode: true
  - key: plain
    rate_limit: { unit: hour, requests_per_unit: 20 }
  - key: inner
    value: "a*z"
    rate_limit: { unit: hour, requests_per_unit: 4 }
`;

function summary(outcome: ComparableOutcome): unknown {
  if (outcome.kind === 'error') return outcome;
  return [outcome.overallCode, ...outcome.statuses.map((s) => `${s.code}/${s.limitRemaining}`)];
}

describe('differential: deliberate and version differences', function () {
  this.timeout(60_000);
  let pair: ServicePair;

  before(async function () {
    pair = await startServicePair({ files: { 'diff.yaml': RULES } });
  });
  after(async () => {
    await pair?.stop();
  });

  async function both(label: string, domain: string, descriptors: Parameters<typeof request>[1]) {
    const req = request(domain, descriptors);
    const up = comparableOutcome(await pair.upstream.client.shouldRateLimit(req));
    const ours = comparableOutcome(await pair.ours.client.shouldRateLimit(req));
    return { label, up: summary(up), ours: summary(ours) };
  }

  it('quota_mode: the snapshot turns a quota OVER_LIMIT into OK; ours (spec §2.4) keeps it and is over when all quota descriptors are', async () => {
    const steps = [
      await both('quota 1st', 'diff', [desc([['quota', 'a']])]),
      await both('quota 2nd', 'diff', [desc([['quota', 'a']])]),
      await both('quota over + quota2 OK', 'diff', [desc([['quota', 'a']]), desc([['quota2', 'b']])]),
      await both('quota over + plain OK', 'diff', [desc([['quota', 'a']]), desc([['plain', 'c']])]),
    ];
    expect(steps.map((s) => s.up)).to.deep.equal([
      ['OK', 'OK/0'],
      ['OK', 'OK/0'],
      ['OK', 'OK/0', 'OK/2'],
      ['OK', 'OK/0', 'OK/19'],
    ]);
    const spec = [
      ['OK', 'OK/0'],
      ['OVER_LIMIT', 'OVER_LIMIT/0'],
      ['OK', 'OVER_LIMIT/0', 'OK/2'],
      ['OVER_LIMIT', 'OVER_LIMIT/0', 'OK/19'],
    ];
    expect(steps.map((s) => s.ours)).to.deep.equal(diffTarget() === 'upstream' ? steps.map((s) => s.up) : spec);
  });

  it('a wildcard that is not at the end: the snapshot treats it as a literal value; ours (spec §2.12) matches it', async () => {
    const step = await both('inner wildcard', 'diff', [desc([['inner', 'abcz']])]);
    expect(step.up).to.deep.equal(['OK', 'OK/0']);
    expect(step.ours).to.deep.equal(diffTarget() === 'upstream' ? step.up : ['OK', 'OK/3']);
  });

  it('a limit override with unit UNKNOWN: the snapshot process crashes; ours answers an error and stays up', async () => {
    const req = request('diff', [
      desc([['plain', 'x']], { limit: { requestsPerUnit: 5, unit: RateLimitUnit.UNKNOWN } }),
    ]);
    const ours = comparableOutcome(await pair.ours.client.shouldRateLimit(req));
    const up = comparableOutcome(await pair.upstream.client.shouldRateLimit(req));
    // Upstream panics in UnitToDivider ("should not get here") and exits.
    expect(up.kind).to.equal('error');
    const upHealth = await fetch(`${pair.upstream.httpUrl}/healthcheck`).then(
      (res) => res.status,
      () => 'unreachable',
    );
    expect(upHealth).to.equal('unreachable');
    expect(pair.upstream.output()).to.include('should not get here');
    if (diffTarget() === 'chorus') {
      expect(ours.kind, JSON.stringify(ours)).to.equal('error');
      const health = await fetch(`${pair.ours.httpUrl}/healthcheck`);
      expect(health.status).to.equal(200);
      const after = comparableOutcome(
        await pair.ours.client.shouldRateLimit(request('diff', [desc([['plain', 'y']])])),
      );
      expect(after.kind).to.equal('response');
    }
  });
});

describe('differential: NEAR_LIMIT_RATIO above 1 (spec §2.3 edge, §6)', function () {
  this.timeout(60_000);
  let pair: ServicePair;

  before(async () => {
    pair = await startServicePair({
      files: {
        'near.yaml': 'domain: near\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 2 }\n',
      },
      env: { NEAR_LIMIT_RATIO: '1.5' },
    });
  });
  after(async () => {
    await pair?.stop();
  });

  it('crossing the limit: the snapshot underflows near_limit (uint64); ours clamps it at 0; answers agree', async () => {
    const before = await snapshotCounters(pair);
    await sameGrpc(pair, 'crossing with hits 3', request('near', [desc([['k', 'v']])], 3));
    const after = await snapshotCounters(pair);
    const up = counterDeltas(before.upstream, after.upstream, RULE_STATS_PREFIX);
    const ours = counterDeltas(before.ours, after.ours, RULE_STATS_PREFIX);
    const near = 'ratelimit.service.rate_limit.near.k.near_limit';
    expect(up[near]).to.be.greaterThan(1e18);
    if (diffTarget() === 'chorus') {
      expect(ours[near] ?? 0).to.equal(0);
      const { [near]: _upNear, ...upRest } = up;
      const { [near]: _oursNear, ...oursRest } = ours;
      expect(oursRest).to.deep.equal(upRest);
    }
  });
});
