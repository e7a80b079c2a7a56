import { expect } from 'chai';
import type { WordMark } from '../../../../speech/engine/engine.js';
import { parseSpeechInput } from '../../../../speech/engine/ssml.js';
import { WordAligner, type RawEngineEvent } from '../../../../speech/engine/word-aligner.js';

const word = (textPosition: number, audioMs: number): RawEngineEvent => ({ type: 'word', textPosition, audioMs });
const ph = (audioMs: number, id = 'a'): RawEngineEvent => ({ type: 'phoneme', textPosition: 0, audioMs, id });
const pause = (audioMs: number): RawEngineEvent => ph(audioMs, '');

function checkInvariants(marks: readonly WordMark[], words: number, totalMs: number): void {
  expect(marks.length).to.equal(words);
  for (let i = 0; i < marks.length; i += 1) {
    const m = marks[i] as WordMark;
    expect(m.end_time).to.be.at.least(m.start_time);
    expect(m.end_time).to.be.at.most(totalMs);
    if (i > 0) {
      const prev = marks[i - 1] as WordMark;
      expect(m.start).to.be.at.least(prev.end);
      expect(m.start_time).to.be.at.least(prev.end_time);
    }
  }
}

describe('WordAligner', () => {
  it('uses word events for starts and the following pause for the end', () => {
    const input = parseSpeechInput('Hello world');
    const a = new WordAligner(input);
    const first = a.push([word(1, 0), ph(11), ph(184), word(7, 296), ph(305), ph(700)], 10_000);
    // "Hello" is final once "world" starts; "world" waits for the end.
    expect(first.marks.map((m) => [m.value, m.start_time, m.end_time])).to.deep.equal([['Hello', 0, 296]]);
    const rest = a.push([pause(750), { type: 'end', textPosition: 12, audioMs: 1051 }], 10_000);
    expect(rest.marks).to.deep.equal([]);
    const end = a.finish(1060);
    expect(end.marks.map((m) => [m.value, m.start, m.end, m.start_time, m.end_time])).to.deep.equal([
      ['world', 6, 11, 296, 750],
    ]);
    expect(end.sentences).to.deep.equal([{ start: 0, end: 11, start_time: 0, end_time: 750 }]);
  });

  it('rebuilds words espeak skipped, splitting the span at a phoneme start', () => {
    // "of the cliff": espeak gives no event for "the".
    const input = parseSpeechInput('top of the cliff');
    const a = new WordAligner(input);
    const out = a.push(
      [word(1, 0), ph(10), word(5, 300), ph(310), ph(360), ph(420), ph(470), word(12, 500), ph(510)],
      10_000,
    );
    expect(out.marks.map((m) => [m.value, m.start_time, m.end_time])).to.deep.equal([
      ['top', 0, 300],
      ['of', 300, 360],
      ['the', 360, 500],
    ]);
    const end = a.finish(800);
    checkInvariants([...out.marks, ...end.marks], 4, 800);
  });

  it('gives leading and trailing words without events a share of their neighbour', () => {
    const input = parseSpeechInput('a big dog ran off');
    const a = new WordAligner(input);
    const out = [...a.push([word(3, 100), word(7, 400)], 10_000).marks, ...a.finish(1000).marks];
    expect(out.map((m) => m.value)).to.deep.equal(['a', 'big', 'dog', 'ran', 'off']);
    checkInvariants(out, 5, 1000);
    expect(out[0]?.start_time).to.equal(100);
    expect(out[4]?.end_time).to.equal(1000);
  });

  it('spreads the words over the audio when espeak gave no word event at all', () => {
    const input = parseSpeechInput('one two three');
    const a = new WordAligner(input);
    const out = a.finish(900).marks;
    checkInvariants(out, 3, 900);
    expect(out[0]?.start_time).to.equal(0);
    expect(out[2]?.end_time).to.equal(900);
  });

  it('merges several events for one word and ignores events going backwards or past the end', () => {
    const input = parseSpeechInput('well-known 😀 thing');
    const a = new WordAligner(input);
    const out = [
      ...a.push(
        [word(1, 0), word(6, 200), word(12, 400), word(12, 450), word(3, 600), word(99, 700), word(14, 800)],
        10_000,
      ).marks,
      ...a.finish(1200).marks,
    ];
    expect(out.map((m) => [m.value, m.start_time])).to.deep.equal([
      ['well-known', 0],
      ['😀', 400],
      ['thing', 800],
    ]);
    checkInvariants(out, 3, 1200);
  });

  it('maps positions through the escaped engine text back to the input', () => {
    const input = parseSpeechInput('x < y');
    // engine text "x &lt; y": "y" is at engine position 8 (1-based).
    const a = new WordAligner(input);
    const out = [...a.push([word(1, 0), word(8, 500)], 10_000).marks, ...a.finish(900).marks];
    expect(out.map((m) => [m.value, m.start, m.start_time])).to.deep.equal([
      ['x', 0, 0],
      ['<', 2, 250],
      ['y', 4, 500],
    ]);
  });

  it('caps times at the audio duration', () => {
    const input = parseSpeechInput('late word');
    const a = new WordAligner(input);
    const out = [...a.push([word(1, 0), word(6, 900)], 700).marks, ...a.finish(700).marks];
    checkInvariants(out, 2, 700);
  });
});
