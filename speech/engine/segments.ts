// Splits long plain-text input into sentence-aligned pieces that are synthesised as separate worker jobs.
import type { ParsedInput } from './ssml.js';

/** A piece of `ParsedInput.engineText`, in code points, end exclusive. */
export interface Segment {
  readonly engineStart: number;
  readonly engineEnd: number;
}

/** First index whose input offset is at least `offset` (engineOffsets is non-decreasing). */
function engineIndexOf(offsets: Int32Array, offset: number): number {
  let lo = 0;
  let hi = offsets.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((offsets[mid] ?? 0) < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Whole sentences per segment, the first at most `firstMaxChars` input characters and the others at most
 * `maxChars` (a longer sentence is a segment of its own). A worker runs one job to completion, so short jobs let
 * concurrent syntheses take turns and keep the first one small for an early first byte. SSML stays one segment:
 * cutting it would need its open elements repeated in every piece.
 */
export function planSegments(parsed: ParsedInput, firstMaxChars: number, maxChars: number): Segment[] {
  const length = parsed.engineOffsets.length;
  if (parsed.ssml || parsed.sentences.length <= 1) return [{ engineStart: 0, engineEnd: length }];
  const segments: Segment[] = [];
  let startOffset = 0;
  let startEngine = 0;
  let hasSentence = false;
  for (const sentence of parsed.sentences) {
    const limit = segments.length === 0 ? firstMaxChars : maxChars;
    if (hasSentence && sentence.end - startOffset > limit) {
      const cut = engineIndexOf(parsed.engineOffsets, sentence.start);
      segments.push({ engineStart: startEngine, engineEnd: cut });
      startEngine = cut;
      startOffset = sentence.start;
    }
    hasSentence = true;
  }
  segments.push({ engineStart: startEngine, engineEnd: length });
  return segments;
}
