// Reconnect delays follow upstream's jpillora/backoff configuration.
import { expect } from 'chai';
import { createBackoff } from '../../../../sidecar/xds/backoff.js';

const base = { backoffInitialIntervalMs: 10_000, backoffMaxIntervalMs: 60_000, backoffJitter: false };

describe('xDS reconnect backoff', () => {
  it('stays at the initial interval with upstream defaults (factor 0.5 is a multiplier below 1)', () => {
    const b = createBackoff({ ...base, backoffRandomFactor: 0.5, backoffJitter: true }, () => 0.99);
    expect([b.nextDelayMs(), b.nextDelayMs(), b.nextDelayMs()]).to.deep.equal([10_000, 10_000, 10_000]);
  });

  it('grows by the factor up to the maximum and starts over after reset', () => {
    const b = createBackoff({ ...base, backoffRandomFactor: 2 });
    expect([1, 2, 3, 4].map(() => b.nextDelayMs())).to.deep.equal([10_000, 20_000, 40_000, 60_000]);
    b.reset();
    expect(b.nextDelayMs()).to.equal(10_000);
  });

  it('jitters between the initial interval and the grown delay', () => {
    const b = createBackoff({ ...base, backoffRandomFactor: 2, backoffJitter: true }, () => 0.5);
    b.nextDelayMs();
    expect(b.nextDelayMs()).to.equal(15_000);
  });

  it('treats a non-positive factor as the library default of 2 and a max below min as min', () => {
    const b = createBackoff({
      backoffInitialIntervalMs: 100,
      backoffMaxIntervalMs: 50,
      backoffRandomFactor: 0,
      backoffJitter: false,
    });
    expect([b.nextDelayMs(), b.nextDelayMs()]).to.deep.equal([100, 100]);
  });
});
