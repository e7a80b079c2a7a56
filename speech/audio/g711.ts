// G.711 µ-law and A-law companding of 16-bit linear PCM (ITU-T G.711), one byte per sample.

const MULAW_BIAS = 0x84;
const MULAW_CLIP = 32635;

/** Encodes one sample to µ-law. */
export function linearToMulaw(sample: number): number {
  let s = sample;
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  if (s > MULAW_CLIP) s = MULAW_CLIP;
  s += MULAW_BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent -= 1;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** Encodes one sample to A-law. */
export function linearToAlaw(sample: number): number {
  let s = sample >> 3;
  let mask: number;
  if (s >= 0) mask = 0xd5;
  else {
    mask = 0x55;
    s = -s - 1;
  }
  if (s > 0xfff) s = 0xfff;
  let exponent = 0;
  if (s >= 0x20) {
    exponent = 1;
    for (let v = s >> 5; v > 1; v >>= 1) exponent += 1;
  }
  const mantissa = exponent === 0 ? s >> 1 : (s >> exponent) & 0x0f;
  return ((exponent << 4) | mantissa) ^ mask;
}

/** Decodes one µ-law byte (for tests and tools). */
export function mulawToLinear(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = (((u & 0x0f) << 3) + MULAW_BIAS) << exponent;
  return u & 0x80 ? MULAW_BIAS - magnitude : magnitude - MULAW_BIAS;
}

/** Decodes one A-law byte (for tests and tools). */
export function alawToLinear(byte: number): number {
  const a = byte ^ 0x55;
  const exponent = (a >> 4) & 0x07;
  let magnitude = (a & 0x0f) << 4;
  magnitude += exponent === 0 ? 8 : 0x108;
  if (exponent > 1) magnitude <<= exponent - 1;
  return a & 0x80 ? magnitude : -magnitude;
}

export function encodeMulaw(pcm: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(pcm.length);
  for (let i = 0; i < pcm.length; i += 1) out[i] = linearToMulaw(pcm[i] ?? 0);
  return out;
}

export function encodeAlaw(pcm: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(pcm.length);
  for (let i = 0; i < pcm.length; i += 1) out[i] = linearToAlaw(pcm[i] ?? 0);
  return out;
}
