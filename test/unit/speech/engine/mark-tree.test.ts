import { expect } from 'chai';
import type { WordMark } from '../../../../speech/engine/engine.js';
import { buildMarkTree } from '../../../../speech/engine/mark-tree.js';

const w = (value: string, start: number, startTime: number, endTime: number): WordMark => ({
  type: 'word',
  value,
  start,
  end: start + value.length,
  start_time: startTime,
  end_time: endTime,
});

describe('buildMarkTree', () => {
  it('nests words in sentences in one paragraph', () => {
    const input = 'Hello world. Bye now.';
    const words = [w('Hello', 0, 0, 300), w('world', 6, 300, 700), w('Bye', 13, 900, 1100), w('now', 17, 1100, 1400)];
    const tree = buildMarkTree(
      input,
      [
        { start: 0, end: 12, start_time: 0, end_time: 700 },
        { start: 13, end: 21, start_time: 900, end_time: 1400 },
      ],
      words,
    );
    expect(tree).to.deep.equal({
      type: 'paragraph',
      value: input,
      start: 0,
      end: 21,
      start_time: 0,
      end_time: 1400,
      chunks: [
        {
          type: 'sentence',
          value: 'Hello world.',
          start: 0,
          end: 12,
          start_time: 0,
          end_time: 700,
          chunks: words.slice(0, 2),
        },
        {
          type: 'sentence',
          value: 'Bye now.',
          start: 13,
          end: 21,
          start_time: 900,
          end_time: 1400,
          chunks: words.slice(2),
        },
      ],
    });
  });

  it('slices values by code point, SSML included', () => {
    const input = '<speak>😀 hi</speak>';
    const tree = buildMarkTree(input, [{ start: 7, end: 11, start_time: 0, end_time: 500 }], [w('hi', 9, 200, 500)]);
    expect(tree.value).to.equal('😀 hi');
    expect(tree.chunks[0]).to.include({ value: '😀 hi', start: 7, end: 11 });
  });

  it('keeps words that no sentence covers in a sentence of their own', () => {
    const tree = buildMarkTree(
      'a b',
      [{ start: 0, end: 1, start_time: 0, end_time: 100 }],
      [w('a', 0, 0, 100), w('b', 2, 100, 200)],
    );
    expect(tree.chunks.length).to.equal(2);
    expect(tree.end_time).to.equal(200);
  });

  it('returns an empty paragraph for no words', () => {
    expect(buildMarkTree('', [], [])).to.deep.equal({
      type: 'paragraph',
      value: '',
      start: 0,
      end: 0,
      start_time: 0,
      end_time: 0,
      chunks: [],
    });
  });
});
