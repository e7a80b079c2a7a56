import { expect } from 'chai';
import { alawToLinear, linearToAlaw, linearToMulaw, mulawToLinear } from '../../../../speech/audio/g711.js';

describe('G.711 companding', () => {
  it('matches the reference code points', () => {
    expect(linearToMulaw(0)).to.equal(0xff);
    expect(linearToMulaw(-1)).to.equal(0x7f);
    expect(linearToMulaw(32767)).to.equal(0x80);
    expect(linearToMulaw(-32768)).to.equal(0x00);
    expect(linearToAlaw(0)).to.equal(0xd5);
    expect(linearToAlaw(-8)).to.equal(0x55);
    expect(linearToAlaw(32767)).to.equal(0xaa);
    expect(linearToAlaw(-32768)).to.equal(0x2a);
  });

  it('round-trips within the quantisation error (under 4% above small values)', () => {
    for (let x = -32000; x <= 32000; x += 97) {
      const mu = mulawToLinear(linearToMulaw(x));
      const a = alawToLinear(linearToAlaw(x));
      const tolerance = Math.max(40, Math.abs(x) * 0.04);
      expect(Math.abs(mu - x), `mu-law ${x} -> ${mu}`).to.be.at.most(tolerance);
      expect(Math.abs(a - x), `A-law ${x} -> ${a}`).to.be.at.most(tolerance);
    }
  });

  it('is monotonic', () => {
    let prevMu = -Infinity;
    let prevA = -Infinity;
    for (let x = -32768; x <= 32767; x += 16) {
      const mu = mulawToLinear(linearToMulaw(x));
      const a = alawToLinear(linearToAlaw(x));
      expect(mu).to.be.at.least(prevMu);
      expect(a).to.be.at.least(prevA);
      prevMu = mu;
      prevA = a;
    }
  });
});
