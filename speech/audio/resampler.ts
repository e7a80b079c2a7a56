// Streaming band-limited resampler (Kaiser-windowed sinc, polyphase) for mono 16-bit PCM.

/** Converts a stream of PCM at `inputRate` to `outputRate`; output length is round(input * out / in). */
export interface Resampler {
  /** Returns the output samples that are complete given the input so far (may be empty). */
  process(input: Int16Array): Int16Array;
  /** Flushes the filter tail; call once at the end. */
  flush(): Int16Array;
}

/** Zero crossings of the sinc on each side; more gives a steeper low-pass (and more work). */
const ZERO_CROSSINGS = 16;
const KAISER_BETA = 8;
/** Cutoff as a fraction of the lower Nyquist frequency, leaving room for the transition band. */
const CUTOFF = 0.94;
/** Above this many phases (an awkward rate ratio) the kernel is interpolated from a table instead. */
const MAX_PHASES = 4096;
const TABLE_STEPS = 512;

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 30; k += 1) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
  }
  return sum;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

function clamp16(v: number): number {
  const r = Math.round(v);
  return r > 32767 ? 32767 : r < -32768 ? -32768 : r;
}

/** The low-pass kernel h(x), x in input samples, zero outside (-halfWidth, halfWidth). */
function makeKernel(fc: number, halfWidth: number): (x: number) => number {
  const i0Beta = besselI0(KAISER_BETA);
  return (x) => {
    const ax = Math.abs(x);
    if (ax >= halfWidth) return 0;
    const sinc = ax === 0 ? 1 : Math.sin(Math.PI * fc * ax) / (Math.PI * fc * ax);
    const r = ax / halfWidth;
    return (fc * sinc * besselI0(KAISER_BETA * Math.sqrt(1 - r * r))) / i0Beta;
  };
}

/**
 * Coefficients per phase: output sample n sits at input position t = n·M/L, between input samples; its phase is
 * (n·M) mod L and its taps are the 2·halfWidth input samples around floor(t). For ratios with too many phases
 * the coefficients are read from a finely sampled kernel table with linear interpolation.
 */
function coefficientSource(
  kernel: (x: number) => number,
  halfWidth: number,
  phases: number,
): (phase: number, fraction: number) => Float32Array {
  const taps = 2 * halfWidth;
  const fill = (out: Float32Array, fraction: number, h: (x: number) => number): Float32Array => {
    for (let j = 0; j < taps; j += 1) out[j] = h(fraction + halfWidth - 1 - j);
    return out;
  };
  if (phases <= MAX_PHASES) {
    const bank = Array.from({ length: phases }, (_v, p) => fill(new Float32Array(taps), p / phases, kernel));
    return (phase) => bank[phase] as Float32Array;
  }
  const table = Float32Array.from({ length: halfWidth * TABLE_STEPS + 2 }, (_v, i) => kernel(i / TABLE_STEPS));
  const interpolated = (x: number): number => {
    const pos = Math.abs(x) * TABLE_STEPS;
    const i = Math.floor(pos);
    const a = table[i] ?? 0;
    return a + ((table[i + 1] ?? 0) - a) * (pos - i);
  };
  const scratch = new Float32Array(taps);
  return (_phase, fraction) => fill(scratch, fraction, interpolated);
}

/** Builds a resampler; equal rates give a pass-through. Throws RangeError for non-positive or fractional rates. */
export function createResampler(inputRate: number, outputRate: number): Resampler {
  if (!(inputRate > 0 && outputRate > 0) || !Number.isInteger(inputRate) || !Number.isInteger(outputRate)) {
    throw new RangeError(`bad sample rates ${inputRate} -> ${outputRate}`);
  }
  if (inputRate === outputRate) {
    return { process: (input) => input.slice(), flush: () => new Int16Array(0) };
  }
  const g = gcd(inputRate, outputRate);
  const up = outputRate / g; // L
  const down = inputRate / g; // M
  const fc = Math.min(1, outputRate / inputRate) * CUTOFF;
  const halfWidth = Math.ceil(ZERO_CROSSINGS / fc);
  const taps = 2 * halfWidth;
  const coefficients = coefficientSource(makeKernel(fc, halfWidth), halfWidth, up);
  // Input history; buf[0] is absolute input sample `bufStart`, buffered samples end at bufStart + bufLength.
  let buf = new Float32Array(4096);
  let bufStart = -halfWidth; // leading zeros centre the first outputs
  let bufLength = halfWidth;
  let received = 0;
  let produced = 0;

  const append = (samples: ArrayLike<number>): void => {
    if (bufLength + samples.length > buf.length) {
      const next = new Float32Array(Math.max(buf.length * 2, bufLength + samples.length));
      next.set(buf.subarray(0, bufLength));
      buf = next;
    }
    for (let i = 0; i < samples.length; i += 1) buf[bufLength + i] = samples[i] ?? 0;
    bufLength += samples.length;
  };

  const run = (limit: number): Int16Array => {
    // Outputs whose last tap (floor(t) + halfWidth) is buffered.
    const lastInput = bufStart + bufLength - 1 - halfWidth;
    const available = Math.floor(((lastInput + 1) * up - 1) / down) + 1;
    const count = Math.max(0, Math.min(limit, available) - produced);
    const out = new Int16Array(count);
    for (let o = 0; o < count; o += 1) {
      const n = produced + o;
      const position = n * down;
      const centre = Math.floor(position / up);
      const phase = position - centre * up;
      const coeffs = coefficients(phase, phase / up);
      const first = centre - halfWidth + 1 - bufStart;
      let acc = 0;
      for (let j = 0; j < taps; j += 1) acc += (buf[first + j] as number) * (coeffs[j] as number);
      out[o] = clamp16(acc);
    }
    produced += count;
    // Drop input no later output needs.
    const keepFrom = Math.floor((produced * down) / up) - halfWidth + 1;
    const drop = keepFrom - bufStart;
    if (drop > 0) {
      buf.copyWithin(0, drop, bufLength);
      bufLength -= drop;
      bufStart = keepFrom;
    }
    return out;
  };

  return {
    process(input) {
      append(input);
      received += input.length;
      return run(Number.MAX_SAFE_INTEGER);
    },
    flush() {
      append(new Float32Array(halfWidth + 1));
      return run(Math.round((received * outputRate) / inputRate));
    },
  };
}
