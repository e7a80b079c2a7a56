// Builds the nested speech_marks tree of POST /v1/audio/speech (paragraph → sentence → word) from flat marks.
import type { WordMark } from './engine.js';

/** A sentence as the engine reports it (the payload of an `EngineEvent` of type `sentence`). */
export interface SentenceSpan {
  /** Code-point offset into the input, inclusive. */
  readonly start: number;
  /** Code-point offset into the input, exclusive. */
  readonly end: number;
  /** Milliseconds from the start of the synthesis. */
  readonly start_time: number;
  readonly end_time: number;
}

/** A node of the tree: the root is a paragraph, its chunks are sentences, theirs are word marks. */
export interface MarkNode {
  readonly type: 'paragraph' | 'sentence';
  /** The input between `start` and `end` (SSML source included, as sent). */
  readonly value: string;
  readonly start: number;
  readonly end: number;
  readonly start_time: number;
  readonly end_time: number;
  readonly chunks: readonly (MarkNode | WordMark)[];
}

/**
 * Nests `words` under the sentence that contains them, and the sentences under one paragraph spanning all
 * of them. Words outside every sentence get a sentence of their own so that none is lost. With no words the
 * root is an empty paragraph at 0.
 */
export function buildMarkTree(input: string, sentences: readonly SentenceSpan[], words: readonly WordMark[]): MarkNode {
  const cps = Array.from(input);
  const slice = (start: number, end: number): string => cps.slice(start, end).join('');
  const ordered = [...sentences].sort((a, b) => a.start - b.start);
  const groups: { span: SentenceSpan; words: WordMark[] }[] = ordered.map((span) => ({ span, words: [] }));
  let g = 0;
  for (const word of words) {
    while (g < groups.length && (groups[g]?.span.end ?? 0) <= word.start) g += 1;
    const group = groups[g];
    if (group !== undefined && group.span.start <= word.start) group.words.push(word);
    else {
      const span = { start: word.start, end: word.end, start_time: word.start_time, end_time: word.end_time };
      groups.splice(g, 0, { span, words: [word] });
      g += 1;
    }
  }
  const chunks: MarkNode[] = groups.map(({ span, words: ws }) => {
    const first = ws[0];
    const last = ws[ws.length - 1];
    const start = Math.min(span.start, first?.start ?? span.start);
    const end = Math.max(span.end, last?.end ?? span.end);
    return {
      type: 'sentence',
      value: slice(start, end),
      start,
      end,
      start_time: Math.min(span.start_time, first?.start_time ?? span.start_time),
      end_time: Math.max(span.end_time, last?.end_time ?? span.end_time),
      chunks: ws,
    };
  });
  const head = chunks[0];
  const tail = chunks[chunks.length - 1];
  if (head === undefined || tail === undefined) {
    return { type: 'paragraph', value: '', start: 0, end: 0, start_time: 0, end_time: 0, chunks: [] };
  }
  return {
    type: 'paragraph',
    value: slice(head.start, tail.end),
    start: head.start,
    end: tail.end,
    start_time: head.start_time,
    end_time: tail.end_time,
    chunks,
  };
}
