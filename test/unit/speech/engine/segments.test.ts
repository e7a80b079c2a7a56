import { expect } from 'chai';
import { planSegments } from '../../../../speech/engine/segments.js';
import { parseSpeechInput } from '../../../../speech/engine/ssml.js';

function pieces(text: string, first: number, rest: number): string[] {
  const parsed = parseSpeechInput(text);
  const cps = Array.from(parsed.engineText);
  return planSegments(parsed, first, rest).map(
    (s) => s.prefix + cps.slice(s.engineStart, s.engineEnd).join('') + s.suffix,
  );
}

describe('planSegments', () => {
  it('cuts plain text at sentence starts, the first piece smaller', () => {
    const text = 'One two. Three four five. Six. Seven eight nine ten. Eleven.';
    expect(pieces(text, 10, 30)).to.deep.equal([
      'One two. ',
      'Three four five. Six. ',
      'Seven eight nine ten. Eleven.',
    ]);
  });

  it('covers the whole engine text without gaps, entities included', () => {
    const text = 'A < b. C & d. E > f. G.';
    const parts = pieces(text, 1, 1);
    expect(parts.join('')).to.equal(parseSpeechInput(text).engineText);
    expect(parts).to.deep.equal(['A &lt; b. ', 'C &amp; d. ', 'E &gt; f. ', 'G.']);
  });

  it('keeps a long sentence whole and leaves single sentences alone', () => {
    expect(pieces('A very long single sentence here.', 5, 5)).to.have.length(1);
    expect(pieces('<speak>One long sentence.</speak>', 1, 1)).to.have.length(1);
    expect(pieces('', 1, 1)).to.deep.equal(['']);
  });

  it('wraps SSML pieces in the elements open at the cut, each piece a valid document', () => {
    const text =
      '<speak xml:lang="en-US">One. <prosody rate="50%">Two two. <emphasis>Three.</emphasis> Four.</prosody> Five.</speak>';
    const parts = pieces(text, 1, 1);
    expect(parts).to.deep.equal([
      // A piece may end with a start tag whose element begins in the next piece: it is closed right away.
      '<speak xml:lang="en-US">One. <prosody rate="50%"></prosody></speak>',
      '<speak xml:lang="en-US"><prosody rate="50%">Two two. <emphasis></emphasis></prosody></speak>',
      '<speak xml:lang="en-US"><prosody rate="50%"><emphasis>Three.</emphasis> </prosody></speak>',
      '<speak xml:lang="en-US"><prosody rate="50%">Four.</prosody> </speak>',
      '<speak xml:lang="en-US">Five.</speak>',
    ]);
    for (const part of parts) expect(() => parseSpeechInput(part)).not.to.throw();
  });
});
