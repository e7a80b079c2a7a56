import { expect } from 'chai';
import { createResampler } from '../../../../speech/audio/resampler.js';

function tone(freqHz: number, rate: number, seconds: number, amplitude = 10000): Int16Array {
  return Int16Array.from({ length: Math.round(rate * seconds) }, (_v, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * freqHz * i) / rate)),
  );
}

/** Magnitude of one frequency (Goertzel), normalised by length. */
function power(samples: Int16Array, rate: number, freqHz: number): number {
  const w = (2 * Math.PI * freqHz) / rate;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (const x of samples) {
    const s0 = x + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return Math.sqrt(s1 * s1 + s2 * s2 - coeff * s1 * s2) / samples.length;
}

function resampleInChunks(input: Int16Array, from: number, to: number, chunk: number): Int16Array {
  const r = createResampler(from, to);
  const parts: Int16Array[] = [];
  for (let i = 0; i < input.length; i += chunk) parts.push(r.process(input.subarray(i, i + chunk)));
  parts.push(r.flush());
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

describe('resampler', () => {
  for (const rate of [8000, 16000, 24000, 44100, 48000]) {
    it(`keeps a 1 kHz tone at 1 kHz going 22050 -> ${rate}`, () => {
      const out = resampleInChunks(tone(1000, 22050, 1), 22050, rate, 1103);
      expect(out.length).to.equal(rate);
      const body = out.subarray(rate / 10, rate - rate / 10);
      const at1k = power(body, rate, 1000);
      expect(at1k).to.be.greaterThan(4500); // amplitude 10000 -> Goertzel magnitude ~5000
      expect(at1k).to.be.lessThan(5500);
      for (const other of [500, 1500, 2000]) expect(power(body, rate, other)).to.be.lessThan(at1k / 50);
    });
  }

  it('handles a ratio with too many phases for a filter bank (interpolated kernel)', () => {
    const rate = 23_999; // 22050/23999 share no factor: 23,999 phases
    const out = resampleInChunks(tone(1000, 22050, 0.5), 22050, rate, 1000);
    expect(out.length).to.equal(Math.round(0.5 * rate));
    const body = out.subarray(2400, out.length - 2400);
    const at1k = power(body, rate, 1000);
    expect(at1k).to.be.within(4500, 5500);
    expect(power(body, rate, 1500)).to.be.lessThan(at1k / 50);
  });

  it('removes content above the new Nyquist frequency when going down to 8 kHz', () => {
    // 5 kHz is above 4 kHz: without a low-pass it would alias to 3 kHz.
    const out = resampleInChunks(tone(5000, 22050, 1), 22050, 8000, 2206);
    const body = out.subarray(800, 7200);
    expect(power(body, 8000, 3000)).to.be.lessThan(50);
  });

  it('gives the same samples whatever the chunking', () => {
    const input = tone(440, 22050, 0.5);
    const a = resampleInChunks(input, 22050, 24000, 1);
    const b = resampleInChunks(input, 22050, 24000, 100000);
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).to.equal(true);
  });

  it('passes audio through unchanged at equal rates', () => {
    const input = tone(440, 24000, 0.1);
    const out = resampleInChunks(input, 24000, 24000, 333);
    expect(Array.from(out)).to.deep.equal(Array.from(input));
  });

  it('rejects bad rates', () => {
    expect(() => createResampler(0, 8000)).to.throw(RangeError);
    expect(() => createResampler(22050, 8000.5)).to.throw(RangeError);
  });
});
