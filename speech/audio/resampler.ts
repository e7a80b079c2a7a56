// Streaming band-limited resampler (Kaiser-windowed sinc, table-driven) for mono 16-bit PCM.

/** Converts a stream of PCM at `inputRate` to `outputRate`; output length is round(input * out / in). */
export interface Resampler {
  /** Returns the output samples that are complete given the input so far (may be empty). */
  process(input: Int16Array): Int16Array;
  /** Flushes the filter tail; call once at the end. */
  flush(): Int16Array;
}

/** Zero crossings of the sinc on each side; more gives a steeper low-pass (and more work). */
const ZERO_CROSSINGS = 16;
/** Table resolution: kernel values per input sample; linear interpolation between them. */
const TABLE_STEPS = 512;
const KAISER_BETA = 8;
/** Cutoff as a fraction of the lower Nyquist frequency, leaving room for the transition band. */
const CUTOFF = 0.94;

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 30; k += 1) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
  }
  return sum;
}

interface Kernel {
  readonly table: Float32Array;
  /** Half-width of the kernel in input samples. */
  readonly halfWidth: number;
  /** Table steps per input sample. */
  readonly scale: number;
}

function buildKernel(inputRate: number, outputRate: number): Kernel {
  const fc = Math.min(1, outputRate / inputRate) * CUTOFF;
  const halfWidth = Math.ceil(ZERO_CROSSINGS / fc);
  const size = halfWidth * TABLE_STEPS + 2;
  const table = new Float32Array(size);
  const i0Beta = besselI0(KAISER_BETA);
  for (let i = 0; i < size; i += 1) {
    const x = i / TABLE_STEPS;
    if (x >= halfWidth) break;
    const sinc = x === 0 ? 1 : Math.sin(Math.PI * fc * x) / (Math.PI * fc * x);
    const r = x / halfWidth;
    const window = besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / i0Beta;
    table[i] = fc * sinc * window;
  }
  return { table, halfWidth, scale: TABLE_STEPS };
}

function clamp16(v: number): number {
  const r = Math.round(v);
  return r > 32767 ? 32767 : r < -32768 ? -32768 : r;
}

/** Builds a resampler; equal rates give a pass-through. Throws RangeError for non-positive rates. */
export function createResampler(inputRate: number, outputRate: number): Resampler {
  if (!(inputRate > 0 && outputRate > 0) || !Number.isInteger(inputRate) || !Number.isInteger(outputRate)) {
    throw new RangeError(`bad sample rates ${inputRate} -> ${outputRate}`);
  }
  if (inputRate === outputRate) {
    return { process: (input) => input.slice(), flush: () => new Int16Array(0) };
  }
  const { table, halfWidth, scale } = buildKernel(inputRate, outputRate);
  // Input history; buf[0] is absolute input sample `bufStart`. Leading zeros centre the first outputs.
  let buf = new Float32Array(0);
  let bufStart = 0;
  let received = 0;
  let produced = 0;

  const weight = (distance: number): number => {
    const pos = Math.abs(distance) * scale;
    const i = Math.floor(pos);
    const frac = pos - i;
    const a = table[i] ?? 0;
    const b = table[i + 1] ?? 0;
    return a + (b - a) * frac;
  };

  const run = (limit: number): Int16Array => {
    const out: number[] = [];
    for (;;) {
      if (produced >= limit) break;
      // Exact rational position avoids drift over long streams.
      const t = (produced * inputRate) / outputRate;
      const centre = Math.floor(t);
      if (centre + halfWidth >= bufStart + buf.length) break;
      let acc = 0;
      const from = Math.max(centre - halfWidth + 1, bufStart);
      for (let k = from; k <= centre + halfWidth; k += 1) acc += (buf[k - bufStart] ?? 0) * weight(t - k);
      out.push(clamp16(acc));
      produced += 1;
    }
    const keepFrom = Math.floor((produced * inputRate) / outputRate) - halfWidth;
    if (keepFrom > bufStart) {
      buf = buf.slice(keepFrom - bufStart);
      bufStart = keepFrom;
    }
    return Int16Array.from(out);
  };

  const append = (samples: ArrayLike<number>): void => {
    const next = new Float32Array(buf.length + samples.length);
    next.set(buf);
    for (let i = 0; i < samples.length; i += 1) next[buf.length + i] = samples[i] ?? 0;
    buf = next;
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
