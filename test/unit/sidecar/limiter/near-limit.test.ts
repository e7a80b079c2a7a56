// The float32 near-limit threshold and its clamp.
import { expect } from 'chai';
import { nearLimitThreshold } from '../../../../sidecar/limiter/near-limit.js';

describe('near-limit', () => {
  it('is floor(L × 0.8) for the default ratio', () => {
    expect(nearLimitThreshold(20, 0.8)).to.equal(16);
    expect(nearLimitThreshold(10, 0.8)).to.equal(8);
    expect(nearLimitThreshold(0, 0.8)).to.equal(0);
  });

  it('multiplies in float32 like upstream (0.7 × 10 is 7, not 6)', () => {
    // float64 gives 6.99999988079071 (floor 6); the float32 product rounds to exactly 7.
    expect(Math.floor(Math.fround(10) * Math.fround(0.7))).to.equal(6);
    expect(nearLimitThreshold(10, 0.7)).to.equal(7);
  });

  it('clamps ratios above 1 to the limit and below 0 to 0', () => {
    expect(nearLimitThreshold(20, 1.5)).to.equal(20);
    expect(nearLimitThreshold(20, -1)).to.equal(0);
  });
});
