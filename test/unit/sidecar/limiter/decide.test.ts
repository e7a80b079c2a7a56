// decide() against the worked cases of §2.3 (over/near/within, local cache, shadow, uint64 wrap).
import { expect } from 'chai';
import { RateLimitResponse_Code } from '../../../../proto/gen/envoy/service/ratelimit/v3/rls.js';
import { beforeCount, decide, noLimitStatus, type DecideInput } from '../../../../sidecar/limiter/decide.js';
import { makeLimit } from '../../../support/rate-limit-fakes.js';

const L20 = makeLimit({ requestsPerUnit: 20, unit: 'MINUTE', name: 'n' });
const base = (fields: Partial<DecideInput>): DecideInput => ({
  limit: L20,
  hits: 1,
  before: 0,
  after: 1,
  overLimitByLocalCache: false,
  nowMs: 1234_000,
  nearLimitRatio: 0.8,
  ...fields,
});
const stats = (d: ReturnType<typeof decide>) => ({
  over: d.overLimit,
  near: d.nearLimit,
  within: d.withinLimit,
  local: d.overLimitWithLocalCache,
  shadow: d.shadowMode,
});

describe('decide', () => {
  it('h=3 reaching 22 (L=20): over 2, near 1, within 0', () => {
    const d = decide(base({ hits: 3, before: 19, after: 22 }));
    expect(d.status.code).to.equal(RateLimitResponse_Code.OVER_LIMIT);
    expect(d.status.limitRemaining).to.equal(0);
    expect(stats(d)).to.deep.equal({ over: 2, near: 1, within: 0, local: 0, shadow: 0 });
    expect(d.cacheAsOverLimit).to.equal(true);
  });

  it('h=7 reaching 22: over 2, near 4 (near counts from N=16)', () => {
    const d = decide(base({ hits: 7, before: 15, after: 22 }));
    expect(stats(d)).to.deep.equal({ over: 2, near: 4, within: 0, local: 0, shadow: 0 });
  });

  it('h=3 reaching 19: OK remaining 1, near 3, within 3', () => {
    const d = decide(base({ hits: 3, before: 16, after: 19 }));
    expect(d.status.code).to.equal(RateLimitResponse_Code.OK);
    expect(d.status.limitRemaining).to.equal(1);
    expect(stats(d)).to.deep.equal({ over: 0, near: 3, within: 3, local: 0, shadow: 0 });
    expect(d.cacheAsOverLimit).to.equal(false);
  });

  it('crossing N inside the OK branch counts only the part above N', () => {
    const d = decide(base({ hits: 4, before: 14, after: 18 }));
    expect(stats(d)).to.deep.equal({ over: 0, near: 2, within: 4, local: 0, shadow: 0 });
  });

  it('L=10, h=3 reaching 30: over 3 only', () => {
    const limit = makeLimit({ requestsPerUnit: 10, unit: 'SECOND' });
    const d = decide(base({ limit, hits: 3, before: 27, after: 30 }));
    expect(stats(d)).to.deep.equal({ over: 3, near: 0, within: 0, local: 0, shadow: 0 });
  });

  it('local-cache over: OVER, over and over_with_local_cache += h, nothing else', () => {
    const d = decide(base({ hits: 5, overLimitByLocalCache: true, before: 0, after: 0 }));
    expect(d.status.code).to.equal(RateLimitResponse_Code.OVER_LIMIT);
    expect(stats(d)).to.deep.equal({ over: 5, near: 0, within: 0, local: 5, shadow: 0 });
    expect(d.cacheAsOverLimit).to.equal(false);
  });

  it('shadow rule: OK with remaining 0, counts over and shadow, still cached as over', () => {
    const limit = makeLimit({ requestsPerUnit: 20, unit: 'MINUTE', shadowMode: true });
    const crossing = decide(base({ limit, hits: 3, before: 19, after: 22 }));
    expect(crossing.status.code).to.equal(RateLimitResponse_Code.OK);
    expect(crossing.status.limitRemaining).to.equal(0);
    expect(crossing.status.currentLimit?.requestsPerUnit).to.equal(20);
    expect(stats(crossing)).to.deep.equal({ over: 2, near: 1, within: 0, local: 0, shadow: 2 });
    expect(crossing.cacheAsOverLimit).to.equal(true);
    const past = decide(base({ limit, hits: 3, before: 25, after: 28 }));
    expect(stats(past)).to.deep.equal({ over: 3, near: 0, within: 0, local: 0, shadow: 3 });
    const local = decide(base({ limit, hits: 2, overLimitByLocalCache: true }));
    expect(local.status.code).to.equal(RateLimitResponse_Code.OK);
    expect(stats(local)).to.deep.equal({ over: 2, near: 0, within: 0, local: 2, shadow: 2 });
  });

  it('fills current_limit and duration_until_reset (MINUTE at 1234 s → 26 s)', () => {
    const d = decide(base({}));
    expect(d.status.currentLimit).to.deep.equal({ name: 'n', requestsPerUnit: 20, unit: 2 });
    expect(d.status.durationUntilReset).to.deep.equal({ seconds: 26, nanos: 0 });
  });

  it('a limit of 0 is always over', () => {
    const limit = makeLimit({ requestsPerUnit: 0, unit: 'HOUR' });
    const d = decide(base({ limit, hits: 1, before: 0, after: 1 }));
    expect(d.status.code).to.equal(RateLimitResponse_Code.OVER_LIMIT);
    expect(stats(d)).to.deep.equal({ over: 1, near: 0, within: 0, local: 0, shadow: 0 });
  });

  it('hits 0 (check only) counts nothing but reports the state', () => {
    const d = decide(base({ hits: 0, before: 10, after: 10 }));
    expect(d.status.limitRemaining).to.equal(10);
    expect(stats(d)).to.deep.equal({ over: 0, near: 0, within: 0, local: 0, shadow: 0 });
  });

  it('a ratio above 1 never yields negative near-limit counts', () => {
    const d = decide(base({ hits: 3, before: 19, after: 22, nearLimitRatio: 1.5 }));
    expect(stats(d)).to.deep.equal({ over: 2, near: 0, within: 0, local: 0, shadow: 0 });
  });

  it('beforeCount wraps like uint64 when a frozen key reports after < hits', () => {
    expect(beforeCount(10, 3)).to.equal(7);
    expect(beforeCount(2, 3)).to.equal(Number.MAX_SAFE_INTEGER);
    // A frozen key past the limit then counts the whole of h as over (upstream: before ≥ L).
    const d = decide(base({ hits: 30, before: beforeCount(25, 30), after: 25 }));
    expect(stats(d)).to.deep.equal({ over: 30, near: 0, within: 0, local: 0, shadow: 0 });
  });

  it('noLimitStatus is a bare OK', () => {
    expect(noLimitStatus()).to.deep.equal({
      code: RateLimitResponse_Code.OK,
      currentLimit: undefined,
      limitRemaining: 0,
      durationUntilReset: undefined,
      quota: undefined,
    });
  });
});
