// Splits long plain-text input into sentence-aligned pieces that are synthesised as separate worker jobs.
import type { ParsedInput } from './ssml.js';

/**
 * A piece of `ParsedInput.engineText` (code points, end exclusive) and the markup that makes it a document of its
 * own: SSML pieces reopen the elements open at their start and close those open at their end.
 */
export interface Segment {
  readonly engineStart: number;
  readonly engineEnd: number;
  /** Start tags to put before the piece (empty for plain text and for the first piece). */
  readonly prefix: string;
  /** End tags to put after the piece (empty for plain text and for the last piece). */
  readonly suffix: string;
}

function closingTags(openTags: readonly string[]): string {
  return openTags
    .map((tag) => `</${/^<([^\s/>]+)/.exec(tag)?.[1] ?? ''}>`)
    .reverse()
    .join('');
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
 * concurrent syntheses take turns and keep the first one small for an early first byte. SSML is cut at sentence
 * starts too, each piece wrapped in the elements open there (prosody, emphasis… carry over).
 */
export function planSegments(parsed: ParsedInput, firstMaxChars: number, maxChars: number): Segment[] {
  const length = parsed.engineOffsets.length;
  const segments: Segment[] = [];
  let startOffset = 0;
  let startEngine = 0;
  let prefix = '';
  let hasSentence = false;
  for (const sentence of parsed.sentences) {
    const limit = segments.length === 0 ? firstMaxChars : maxChars;
    if (hasSentence && sentence.end - startOffset > limit) {
      const cut = engineIndexOf(parsed.engineOffsets, sentence.start);
      const reopen = parsed.ssml ? sentence.openTags.join('') : '';
      const close = parsed.ssml ? closingTags(sentence.openTags) : '';
      segments.push({ engineStart: startEngine, engineEnd: cut, prefix, suffix: close });
      startEngine = cut;
      startOffset = sentence.start;
      prefix = reopen;
    }
    hasSentence = true;
  }
  segments.push({ engineStart: startEngine, engineEnd: length, prefix, suffix: '' });
  return segments;
}
