// Turns espeak's word/phoneme events into one mark per input word, rebuilding the words espeak gives no event for.
import type { WordMark } from './engine.js';
import type { SentenceSpan } from './mark-tree.js';
import type { ParsedInput } from './ssml.js';

/** An espeak event as the worker forwards it. */
export interface RawEngineEvent {
  readonly type: 'word' | 'sentence' | 'phoneme' | 'end' | 'mark';
  /** espeak's 1-based code-point position into the engine text. */
  readonly textPosition: number;
  /** Milliseconds from the start of the synthesis. */
  readonly audioMs: number;
  /** Phoneme symbol (empty or `_…` for a pause), or the mark name. */
  readonly id?: string;
}

/** What became final after some events. */
export interface AlignerOutput {
  readonly marks: readonly WordMark[];
  readonly sentences: readonly SentenceSpan[];
}

interface Anchor {
  readonly word: number;
  readonly ms: number;
}

interface PhonemeTime {
  readonly ms: number;
  readonly pause: boolean;
}

function isPause(symbol: string | undefined): boolean {
  return symbol === undefined || symbol === '' || symbol.startsWith('_');
}

/**
 * Incremental aligner for one synthesis. A word event anchors the first input word ending after its position;
 * words between two anchors share the span of the earlier one, split in proportion to their length and snapped
 * to phoneme starts; a span ends at the pause that follows its last phoneme, else where the next word starts.
 */
export class WordAligner {
  private readonly anchors: Anchor[] = [];
  // Sounding phonemes and pauses since the latest anchor, in time order.
  private readonly phonemes: PhonemeTime[] = [];
  private readonly marks: WordMark[] = [];
  private sentencesDone = 0;
  private audioMs = Number.POSITIVE_INFINITY;

  constructor(private readonly input: ParsedInput) {}

  /**
   * Feeds events in arrival order, with the duration of the audio produced so far (times are capped at it);
   * returns the marks and sentences that are now final.
   */
  push(events: readonly RawEngineEvent[], audioMs: number): AlignerOutput {
    this.audioMs = audioMs;
    const before = this.marks.length;
    for (const ev of events) {
      if (ev.type === 'phoneme') this.phonemes.push({ ms: ev.audioMs, pause: isPause(ev.id) });
      else if (ev.type === 'end') this.phonemes.push({ ms: ev.audioMs, pause: true });
      else if (ev.type === 'word') this.anchor(ev);
    }
    return this.output(before);
  }

  /** Ends the synthesis at `totalMs` (the audio duration); returns everything not yet final. */
  finish(totalMs: number): AlignerOutput {
    const before = this.marks.length;
    const last = this.anchors[this.anchors.length - 1];
    const words = this.input.words.length;
    if (this.marks.length < words) {
      const from = this.marks.length;
      const startMs = Math.min(last?.ms ?? 0, totalMs);
      this.emitGroup(from, words, startMs, Math.max(startMs, totalMs), totalMs);
    }
    return this.output(before);
  }

  private anchor(ev: RawEngineEvent): void {
    const offsets = this.input.engineOffsets;
    const index = ev.textPosition - 1;
    const offset = index >= 0 && index < offsets.length ? (offsets[index] ?? 0) : Number.MAX_SAFE_INTEGER;
    const previous = this.anchors[this.anchors.length - 1];
    const words = this.input.words;
    let w = previous?.word ?? 0;
    while (w < words.length && (words[w]?.end ?? 0) <= offset) w += 1;
    if (w >= words.length || (previous !== undefined && w <= previous.word)) return;
    const ms = Math.max(ev.audioMs, previous?.ms ?? 0);
    if (previous !== undefined) this.emitGroup(this.marks.length, w, previous.ms, ms, Math.min(ms, this.audioMs));
    this.anchors.push({ word: w, ms });
    // Earlier phonemes belong to spans already emitted; dropping them keeps the lookups short.
    const keep = this.phonemes.findIndex((p) => p.ms >= ms);
    this.phonemes.splice(0, keep < 0 ? this.phonemes.length : keep);
  }

  /** Where speech in [fromMs, toMs) stops: the pause after the last sounding phoneme, else `toMs`. */
  private speechEnd(fromMs: number, toMs: number): number {
    let lastSound = -1;
    for (let i = this.phonemes.length - 1; i >= 0; i -= 1) {
      const p = this.phonemes[i];
      if (p === undefined || p.ms < fromMs) break;
      if (!p.pause && p.ms < toMs) {
        lastSound = i;
        break;
      }
    }
    if (lastSound < 0) return toMs;
    for (let i = lastSound + 1; i < this.phonemes.length; i += 1) {
      const p = this.phonemes[i];
      if (p !== undefined && p.pause && p.ms > fromMs) return Math.min(p.ms, toMs);
    }
    return toMs;
  }

  /** Nearest sounding phoneme start to `target` strictly inside (lo, hi), else `target`. */
  private snap(target: number, lo: number, hi: number): number {
    let best = target;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (const p of this.phonemes) {
      if (p.pause || p.ms <= lo || p.ms >= hi) continue;
      const d = Math.abs(p.ms - target);
      if (d < bestDistance) {
        bestDistance = d;
        best = p.ms;
      }
    }
    return best;
  }

  /** Gives words [from, to) the time span [startMs, endMs) (speech end found within it), capped at `capMs`. */
  private emitGroup(from: number, to: number, startMs: number, endMs: number, capMs: number): void {
    if (to <= from) return;
    const words = this.input.words.slice(from, to);
    const end = Math.min(this.speechEnd(startMs, endMs), capMs);
    const start = Math.min(startMs, end);
    const weights = words.map((w) => Math.max(1, Array.from(w.value).length));
    const total = weights.reduce((a, b) => a + b, 0);
    const bounds: number[] = [start];
    let acc = 0;
    for (let i = 0; i < words.length - 1; i += 1) {
      acc += weights[i] ?? 1;
      const target = start + ((end - start) * acc) / total;
      const prev = bounds[bounds.length - 1] ?? start;
      bounds.push(Math.max(prev, this.snap(target, prev, end)));
    }
    bounds.push(end);
    words.forEach((w, i) => {
      this.marks.push({
        type: 'word',
        value: w.value,
        start: w.start,
        end: w.end,
        start_time: Math.round(bounds[i] ?? start),
        end_time: Math.round(bounds[i + 1] ?? end),
      });
    });
  }

  private output(marksBefore: number): AlignerOutput {
    const sentences: SentenceSpan[] = [];
    const all = this.input.sentences;
    while (this.sentencesDone < all.length) {
      const s = all[this.sentencesDone];
      if (s === undefined || s.firstWord + s.wordCount > this.marks.length) break;
      const first = this.marks[s.firstWord];
      const last = this.marks[s.firstWord + s.wordCount - 1];
      if (first === undefined || last === undefined) break;
      sentences.push({ start: s.start, end: s.end, start_time: first.start_time, end_time: last.end_time });
      this.sentencesDone += 1;
    }
    return { marks: this.marks.slice(marksBefore), sentences };
  }
}
